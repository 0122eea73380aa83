package interop

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/sim/node"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
)

// requireNode skips the test when Node.js ≥ 20 or npm is missing, saying what is missing; in
// CI (CI=true) it fails instead, so the interop tests can never pass there by not running.
func requireNode(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping the js-libp2p interop test in -short mode (it starts Node.js)")
	}
	err := CheckNode()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%v (CI must run interop/js/setup.sh before go test)", err)
	}
	t.Skipf("skipping the js-libp2p interop test: %v", err)
}

func TestNodeMajor(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"v20.20.2", 20, true},
		{"v22.0.0", 22, true},
		{"v8.17.0", 8, true},
		{"20.1.0", 0, false},
		{"vx.1", 0, false},
		{"", 0, false},
	} {
		got, err := nodeMajor(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("nodeMajor(%q) = %d, %v; want %d, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestOptionsRejected(t *testing.T) {
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{TimeScale: -1}, "time scale"},
		{Options{MaxRPCBytes: -1}, "max RPC bytes"},
		{Options{ListenIP: "not-an-ip"}, "listen IP"},
		{Options{Direct: []peer.AddrInfo{{ID: "x"}}}, "--direct peer"},
		{Options{Codecs: mustSpecs(t, "zstd")}, "fast encoder only"},
		{Options{Codecs: mustSpecs(t, "snappy-stream:64KiB:better")}, "fast encoder only"},
	} {
		if _, err := c.opts.args("peer.js"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want one mentioning %q", c.opts, err, c.want)
		}
	}
}

// The JS peer on its own: it offers only plain GossipSub IDs, refuses to publish with no
// subscriber (as GossipSub does), and stops with an empty, consistent report.
func TestPeerAlone(t *testing.T) {
	requireNode(t)
	t.Parallel()
	p, err := Start(context.Background(), Options{Topics: []string{"/eth2/00000000/beacon_block/ssz_snappy"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	want := []protocol.ID{"/meshsub/1.2.0", "/meshsub/1.1.0"}
	if got := p.Protocols(); !slices.Equal(got, want) {
		t.Errorf("protocols %v, want %v", got, want)
	}
	if len(p.AddrInfo().Addrs) == 0 || p.ID() == "" {
		t.Errorf("no identity: %v", p.AddrInfo())
	}
	if _, err := p.Publish("/eth2/00000000/beacon_block/ssz_snappy", []byte{1}); err == nil ||
		!strings.Contains(err.Error(), "NoPeersSubscribedToTopic") {
		t.Errorf("publish without subscribers: err %v, want NoPeersSubscribedToTopic", err)
	}
	if n, err := p.Count(); err != nil || n != 0 {
		t.Errorf("count %d, %v; want 0", n, err)
	}
	got, err := p.Stop()
	if err != nil || len(got) != 0 {
		t.Errorf("stop: %d messages, %v; want 0, nil", len(got), err)
	}
	if _, err := p.Count(); err == nil {
		t.Error("count after stop: want an error")
	}
}

func TestMissingDir(t *testing.T) {
	requireNode(t)
	_, err := Start(context.Background(), Options{Dir: t.TempDir()})
	if err == nil || errors.Is(err, ErrNodeMissing) || !strings.Contains(err.Error(), "package-lock.json") {
		t.Errorf("err %v, want one about the missing package-lock.json", err)
	}
}

// The JS peer offers its codecs' protocol IDs first, in the order given, then the plain ones:
// the Go nodes' order (node.ProtocolFor, plain last).
func TestPeerOffersCodecsFirst(t *testing.T) {
	requireNode(t)
	t.Parallel()
	specs := mustSpecs(t, "snappy-stream:4KiB", "snappy-stream", "snappy-stream:0")
	p, err := Start(context.Background(), Options{Codecs: specs})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	var want []protocol.ID
	for _, s := range specs {
		want = append(want, node.ProtocolFor(s))
	}
	want = append(want, node.PlainProtocol, "/meshsub/1.1.0")
	if got := p.Protocols(); !slices.Equal(got, want) {
		t.Errorf("protocols %v, want %v", got, want)
	}
}

// peer.js refuses a codec it does not implement with a usage error naming the allowed forms,
// also when started by hand.
func TestPeerCodecFlagRejected(t *testing.T) {
	requireNode(t)
	t.Parallel() // Node.js loading peer.js's modules, three times: beside the other peer tests
	if err := Setup(DefaultDir()); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"snappy-stream:64KiB:better", "zstd", "snappy-stream:32MiB"} {
		t.Run(spec, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command("node", "peer.js", "--codec", spec)
			cmd.Dir = DefaultDir()
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "snappy-stream[:<window>[:fast]]") {
				t.Errorf("--codec %s: %v, output %q; want exit status 2 naming the allowed forms", spec, err, out)
			}
		})
	}
}
