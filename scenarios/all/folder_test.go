package all_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/internal/longtest"
)

// throwaway is a whole scenario as a newcomer writes it: one file in its own folder. Instance
// 0 publishes every message; the others dial it, subscribe to the profile's topics and check
// what they receive.
const throwaway = `// Package throwaway is a scenario written by a test: one folder and one line in scenarios/all.
package throwaway

import (
	"github.com/streamsim/streamsim/sim/runner"
	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/workload"
)

func plan(p *runner.Params, members []topology.Member) (*topology.Plan, error) {
	spec, err := topology.ClientProfile("spec")
	if err != nil {
		return nil, err
	}
	topics := p.Profile.Topics(workload.DefaultParams().ForkDigest)
	pl := &topology.Plan{Nodes: make([]topology.Node, len(members)), Observed: -1}
	pub := &pl.Nodes[0]
	*pub = topology.Node{Role: topology.RoleNode, Kind: "publisher", Client: spec, Publishes: true, WaitFor: map[string][]int{}}
	for i := 1; i < len(members); i++ {
		pl.Nodes[i] = topology.Node{Role: topology.RoleNode, Kind: "receiver", Client: spec, Topics: topics, Dial: []int{0}, Peers: []int{0}}
		pub.Peers = append(pub.Peers, i)
		for _, t := range topics {
			pub.WaitFor[t] = append(pub.WaitFor[t], i)
		}
	}
	return pl, nil
}

func init() {
	runner.Register(&runner.Scenario{
		Name:         "throwaway",
		Summary:      "one publisher and its receivers, written by a test",
		MinInstances: 2, MaxInstances: 8, DefaultInstances: 3,
		Role: func(string) topology.Role { return topology.RoleNode },
		Run: runner.NodeLifecycle(runner.NodeSpec{
			Plan:     plan,
			Receiver: func(n *topology.Node) bool { return len(n.Topics) > 0 },
		}),
		Flags: runner.SingleRunFlags("all", 3),
	})
}
`

// A new scenario is one folder and one line in scenarios/all: the test adds
// scenarios/throwaway/ and its import to the list (as a go build overlay, so the checkout is
// not touched), builds the CLI, and the scenario is listed and runs (every receiver gets every
// message) with nothing else changed.
func TestNewScenarioIsOneFolder(t *testing.T) {
	longtest.Skip(t, "a throwaway scenario built with an overlay")
	if testing.Short() {
		t.Skip("builds the CLI")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	file := filepath.Join(tmp, "throwaway.go")
	if err := os.WriteFile(file, []byte(throwaway), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "scenarios", "all", "all.go"))
	if err != nil {
		t.Fatal(err)
	}
	line := "\t_ \"github.com/streamsim/streamsim/scenarios/mesh\"\n"
	if !strings.Contains(string(b), line) {
		t.Fatalf("scenarios/all/all.go does not list the mesh as %q", line)
	}
	list := filepath.Join(tmp, "all.go")
	b = []byte(strings.Replace(string(b), line, line+"\t_ \"github.com/streamsim/streamsim/scenarios/throwaway\"\n", 1))
	if err := os.WriteFile(list, b, 0o644); err != nil {
		t.Fatal(err)
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {
		filepath.Join(root, "scenarios", "throwaway", "throwaway.go"): file,
		filepath.Join(root, "scenarios", "all", "all.go"):             list,
	}})
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}

	bin := filepath.Join(tmp, "streamsim")
	build := exec.Command("go", "build", "-overlay", overlayFile, "-o", bin, "./cmd/streamsim")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build with the new folder: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "scenarios").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "throwaway: one publisher and its receivers") {
		t.Fatalf("streamsim scenarios does not list the new scenario (%v):\n%s", err, out)
	}
	run := exec.Command(bin, "run", "--scenario", "throwaway", "--instances", "3", "--profile", "default", "--slots", "1",
		"--time-scale", "6", "--validators", "4096", "--out", filepath.Join(tmp, "out"))
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("streamsim run --scenario throwaway: %v\n%s", err, out)
	}
}
