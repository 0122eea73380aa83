package mesh

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamsim/streamsim/sim/runner"

	"github.com/streamsim/streamsim/sim/network"
	"github.com/streamsim/streamsim/sim/node"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/workload"
)

// The overhead benchmark's run: the mesh's default 48 nodes and graph, plain streams, a
// small validator set so that a slot takes seconds on two shared cores.
const overheadNodes = topology.DefaultMeshNodes

var overheadParams = map[string]string{
	runner.ParamSlots: "4", runner.ParamTimeScale: "2", runner.ParamValidators: "65536", runner.ParamSeed: "11",
}

// overheadProfile names a directory for CPU profiles of each side's measured phase only
// (sim-N.prof, bare-N.prof for iteration N), so that setup, which differs between the sides
// and is not in the figures, does not blur a comparison of the profiles. Not with -cpuprofile
// (one CPU profile at a time).
var overheadProfile = flag.String("overhead.profile", "", "directory for CPU profiles of BenchmarkOverhead's measured phases")

// phaseProfile is a CPU profile of one measured phase: started by the first instance that
// enters it, stopped by the first that leaves it (whose CPU figure the sim side reports).
type phaseProfile struct {
	mu      sync.Mutex
	path    string
	f       *os.File
	stopped bool
}

func (p *phaseProfile) begin(b *testing.B) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.f != nil || p.stopped {
		return
	}
	f, err := os.Create(p.path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		b.Errorf("overhead profile: %v", err)
		p.stopped = true
		return
	}
	p.f = f
}

func (p *phaseProfile) end(b *testing.B) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.f == nil || p.stopped {
		return
	}
	pprof.StopCPUProfile()
	if err := p.f.Close(); err != nil {
		b.Errorf("overhead profile: %v", err)
	}
	p.stopped = true
}

// overheadIteration numbers the iterations for the profiles' names.
var overheadIteration atomic.Int64

// newPhaseProfile is the profile of one side's measured phase, or nil without
// -overhead.profile.
func newPhaseProfile(side string) *phaseProfile {
	if *overheadProfile == "" {
		return nil
	}
	return &phaseProfile{path: filepath.Join(*overheadProfile, fmt.Sprintf("%s-%d.prof", side, overheadIteration.Load()))}
}

// overheadRun is one run's CPU over its measured phase and the copies its nodes received.
type overheadRun struct {
	cpu    time.Duration
	copies int64
	// wall and simulated: the earliest node's measured phase on the machine's clock, and in
	// simulated time on the virtual clock (0 on the real clock).
	wall, simulated time.Duration
}

func (r overheadRun) usPerCopy() float64 { return float64(r.cpu.Microseconds()) / float64(r.copies) }

// overheadTurn alternates which side runs first from one iteration to the next, so that a
// drift in the machine's load does not favour one side.
var overheadTurn atomic.Int64

// BenchmarkOverhead measures what the simulator costs on top of go-libp2p-pubsub: the same
// graph, parameters, messages and schedule, run once as the embedded mesh scenario and once
// as bare pubsub on hosts built the same way (TCP, noise, yamux, no BandwidthCounter), in
// one process one after the other. Each side's figure is the process's CPU time over the
// measured phase (start to the last receiver done, plus the same quarter-slot tail) per
// received copy (pubsub's deliveries plus duplicates, summed over nodes); sim/bare is their
// ratio. Run it with -benchtime 1x and -count 6 or more (docs/overhead.md).
func BenchmarkOverhead(b *testing.B) {
	if testing.Short() {
		b.Skip("runs two 48-node meshes per iteration")
	}
	p, err := Mesh.ParseParams(overheadParams)
	if err != nil {
		b.Fatal(err)
	}
	var simRun, bareRun overheadRun
	for b.Loop() {
		overheadIteration.Add(1)
		// The label marks each side's goroutines (they inherit it) in a CPU profile:
		// go tool pprof -tagfocus side=sim.
		runs := []func(context.Context){
			func(context.Context) { r := runOverheadSim(b); simRun.cpu += r.cpu; simRun.copies += r.copies },
			func(context.Context) { r := runOverheadBare(b, p); bareRun.cpu += r.cpu; bareRun.copies += r.copies },
		}
		sides := []string{"sim", "bare"}
		if overheadTurn.Add(1)%2 == 0 {
			runs[0], runs[1] = runs[1], runs[0]
			sides[0], sides[1] = sides[1], sides[0]
		}
		for i, run := range runs {
			runtime.GC()
			pprof.Do(context.Background(), pprof.Labels("side", sides[i]), run)
		}
	}
	b.ReportMetric(simRun.usPerCopy(), "sim-µs/copy")
	b.ReportMetric(bareRun.usPerCopy(), "bare-µs/copy")
	b.ReportMetric(simRun.usPerCopy()/bareRun.usPerCopy(), "sim/bare")
	b.ReportMetric(float64(simRun.copies)/float64(b.N), "sim-copies/op")
	b.ReportMetric(float64(bareRun.copies)/float64(b.N), "bare-copies/op")
}

// runOverheadSim runs the embedded mesh and reads its nodes' summaries: the measured phase's
// process CPU and the copies pubsub received. Every node measures the same process over the
// same phase, from the start barrier until it passed the done barrier; a node that passes it
// late also counts the summaries the others write meanwhile, so the figure is the earliest
// node's (the least).
func runOverheadSim(b *testing.B) overheadRun {
	return runOverheadEmbedded(b, overheadParams, nil, "sim")
}

// runOverheadEmbedded is runOverheadSim with params and a bubble (nil: the real clock); side
// names the profile and the log line.
func runOverheadEmbedded(b *testing.B, params map[string]string, bubble func(func()) error, side string) overheadRun {
	dir := b.TempDir()
	e := &runner.Embedded{Scenario: Mesh.Name, Out: dir, Groups: []runner.Group{{ID: GroupNodes, Instances: overheadNodes}}, Params: params, Bubble: bubble}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if prof := newPhaseProfile(side); prof != nil {
		runner.MeasuredPhase = func(begin bool) {
			if begin {
				prof.begin(b)
			} else {
				prof.end(b)
			}
		}
		defer func() { runner.MeasuredPhase = nil; prof.end(b) }()
	}
	if err := e.Run(ctx); err != nil {
		b.Fatalf("embedded mesh: %v", err)
	}
	paths, err := result.FindSummaries(dir)
	if err != nil || len(paths) != overheadNodes {
		b.Fatalf("summaries: %d, %v", len(paths), err)
	}
	var r overheadRun
	cpu, most, wall, simulated := math.Inf(1), 0.0, math.Inf(1), 0.0
	var frames int64
	for _, path := range paths {
		s, err := result.ReadSummary(path)
		if err != nil {
			b.Fatal(err)
		}
		if s.Process == nil {
			b.Fatalf("%s: no process CPU", path)
		}
		cpu, most = min(cpu, s.Process.CPUSeconds), max(most, s.Process.CPUSeconds)
		wall = min(wall, s.Process.WallSeconds)
		simulated = max(simulated, s.Process.SimulatedSeconds)
		r.copies += s.Pubsub.Delivered + s.Pubsub.Duplicates
		for _, st := range s.Streams {
			if st.Direction == "in" {
				frames += st.Frames
			}
		}
	}
	b.Logf("%s: the nodes' measured-phase process CPU %.3f–%.3f s, wall %.3f s; %d copies in %d frames", side, cpu, most, wall, r.copies, frames)
	r.wall = time.Duration(wall * float64(time.Second))
	r.simulated = time.Duration(simulated * float64(time.Second))
	r.cpu = time.Duration(cpu * float64(time.Second))
	return r
}

// copyCounter counts what a bare node's pubsub received: deliveries and duplicates, as the
// simulator's tracer counts them.
type copyCounter struct {
	pubsub.RawTracer
	copies atomic.Int64
}

func (c *copyCounter) DeliverMessage(*pubsub.Message)   { c.copies.Add(1) }
func (c *copyCounter) DuplicateMessage(*pubsub.Message) { c.copies.Add(1) }

// nopTracer is a RawTracer that does nothing.
type nopTracer struct{}

func (nopTracer) OnNewOutboundStream(peer.ID, protocol.ID)             {}
func (nopTracer) OnClosedOutboundStream(peer.ID)                       {}
func (nopTracer) Join(string)                                          {}
func (nopTracer) Leave(string)                                         {}
func (nopTracer) Graft(peer.ID, string)                                {}
func (nopTracer) Prune(peer.ID, string)                                {}
func (nopTracer) ValidateMessage(*pubsub.Message)                      {}
func (nopTracer) DeliverMessage(*pubsub.Message)                       {}
func (nopTracer) RejectMessage(*pubsub.Message, string)                {}
func (nopTracer) DuplicateMessage(*pubsub.Message)                     {}
func (nopTracer) ThrottlePeer(peer.ID)                                 {}
func (nopTracer) RecvRPC(*pubsub.RPC)                                  {}
func (nopTracer) SendRPC(*pubsub.RPC, peer.ID)                         {}
func (nopTracer) SendRPCCompleted(*pubsub.RPC, peer.ID, time.Duration) {}
func (nopTracer) DropRPC(*pubsub.RPC, peer.ID)                         {}
func (nopTracer) UndeliverableMessage(*pubsub.Message)                 {}

// bareNode is one node of the bare run.
type bareNode struct {
	host     *network.Host
	ps       *pubsub.PubSub
	cancel   context.CancelFunc
	counter  *copyCounter
	received atomic.Int64
	topics   map[string]*pubsub.Topic
}

// bareMessage is one message a bare node publishes, at its offset from the start.
type bareMessage struct {
	at    time.Duration
	topic string
	data  []byte
}

// runOverheadBare runs the mesh's plan on bare go-libp2p-pubsub: the nodes' GossipSub
// options as NewNode gives them (gossipSubOptions), default protocols, no stream wrapper,
// meters, logs or workload generation in the measured phase (the messages are generated and
// assigned to their origins before it).
func runOverheadBare(b *testing.B, p *runner.Params) overheadRun {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	members := make([]topology.Member, overheadNodes)
	for i := range members {
		members[i] = topology.Member{Group: GroupNodes, Instance: i, Role: topology.RoleNode}
	}
	plan, err := meshNodes.Plan(p, members)
	if err != nil {
		b.Fatal(err)
	}
	more, err := meshNodes.NodeOptions(p)
	if err != nil {
		b.Fatal(err)
	}

	// The schedule, each message with its origin, and what each node must receive.
	gen, err := workload.NewGenerator(p.Workload())
	if err != nil {
		b.Fatal(err)
	}
	mine := make([][]bareMessage, len(plan.Nodes))
	want := make([]int64, len(plan.Nodes))
	subscribers := map[string][]int{}
	for i, nd := range plan.Nodes {
		for _, t := range nd.Topics {
			subscribers[t] = append(subscribers[t], i)
		}
	}
	seq := 0
	for range p.Slots {
		msgs, err := gen.NextSlot()
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range msgs {
			origin := plan.Origin(p.Seed, int(m.Slot), seq, m.Topic)
			seq++
			if origin < 0 {
				continue
			}
			mine[origin] = append(mine[origin], bareMessage{at: time.Duration(float64(m.At) / p.TimeScale), topic: m.Topic, data: m.Data})
			for _, j := range subscribers[m.Topic] {
				want[j]++
			}
		}
	}

	nodes := make([]*bareNode, len(plan.Nodes))
	infos := make([]peer.AddrInfo, len(plan.Nodes))
	defer func() {
		for _, n := range nodes {
			if n != nil {
				n.cancel()
				n.host.Close()
			}
		}
	}()
	for i := range nodes {
		h, err := (&network.TCP{}).Host(nil)
		if err != nil {
			b.Fatal(err)
		}
		nodes[i] = &bareNode{host: h, cancel: func() {}, topics: map[string]*pubsub.Topic{}}
		infos[i] = h.AddrInfo()
	}
	for i, nd := range plan.Nodes {
		var direct []peer.AddrInfo
		for _, j := range nd.Direct {
			direct = append(direct, infos[j])
		}
		// The heartbeat stagger of instance.startNode.
		stagger := nd.Client.Heartbeat * time.Duration(i) / time.Duration(len(plan.Nodes))
		opts, release, err := node.BareGossipSubOptions(append([]node.Option{node.WithTimeScale(p.TimeScale), node.WithClient(nd.Client),
			node.WithDirectPeers(direct), node.WithHeartbeatDelay(stagger)}, more...)...)
		if err != nil {
			b.Fatalf("the bare side (run the comparison with %s off): %v", runner.ParamValidationDelay, err)
		}
		defer release()
		n := nodes[i]
		n.counter = &copyCounter{RawTracer: nopTracer{}}
		var nctx context.Context
		nctx, n.cancel = context.WithCancel(ctx)
		// The protocol a plain Node speaks (gossipsub v1.2, /meshsub/1.2.0), with pubsub's own
		// feature test: pubsub's default list would negotiate v1.3 and its extensions.
		opts = append(opts, pubsub.WithGossipSubProtocols([]protocol.ID{node.PlainProtocol}, pubsub.GossipSubDefaultFeatures),
			pubsub.WithRawTracer(n.counter))
		if n.ps, err = pubsub.NewGossipSub(nctx, n.host, opts...); err != nil {
			b.Fatal(err)
		}
		for _, t := range nd.Topics {
			topic, err := n.topic(t)
			if err != nil {
				b.Fatal(err)
			}
			sub, err := topic.Subscribe(pubsub.WithBufferSize(4096))
			if err != nil {
				b.Fatal(err)
			}
			go func() {
				for {
					if _, err := sub.Next(nctx); err != nil {
						return
					}
					n.received.Add(1)
				}
			}()
		}
	}
	for i, nd := range plan.Nodes {
		for _, j := range nd.Dial {
			if err := nodes[i].host.Connect(ctx, infos[j]); err != nil {
				b.Fatal(err)
			}
		}
	}
	for i, nd := range plan.Nodes {
		w := map[string][]peer.ID{}
		for t, idx := range nd.WaitFor {
			for _, j := range idx {
				w[t] = append(w[t], infos[j].ID)
			}
		}
		if err := node.WaitSubscribed(ctx, nodes[i].ps, w); err != nil {
			b.Fatal(err)
		}
		for _, c := range nodes[i].host.Network().Conns() {
			for _, st := range c.GetStreams() {
				if pid := st.Protocol(); strings.HasPrefix(string(pid), "/meshsub/") && pid != node.PlainProtocol {
					b.Fatalf("bare node %d speaks %s to a peer, not %s as a plain Node does", i, pid, node.PlainProtocol)
				}
			}
		}
	}

	// The measured phase, as an instance's: publish on schedule, wait until every node has
	// received its topics' messages, then the same tail as instance.receive.
	prof := newPhaseProfile("bare")
	if prof != nil {
		prof.begin(b)
		defer prof.end(b)
	}
	start, cpuStart := time.Now(), runner.ProcessCPU()
	errs := make(chan error, len(nodes))
	for i, n := range nodes {
		go func() {
			for _, m := range mine[i] {
				target := start.Add(m.at)
				if d := time.Until(target); d > time.Millisecond {
					time.Sleep(d)
				}
				t, err := n.topic(m.topic)
				if err == nil {
					err = t.Publish(ctx, m.data)
				}
				if err != nil {
					errs <- fmt.Errorf("node %d: publish on %s: %w", i, m.topic, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range nodes {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	slot := time.Duration(float64(workload.SlotDuration) / p.TimeScale)
	for i, n := range nodes {
		for n.received.Load() < want[i] {
			select {
			case <-ctx.Done():
				b.Fatalf("node %d received %d of %d: %v", i, n.received.Load(), want[i], ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	time.Sleep(min(slot/4, time.Second))
	r := overheadRun{cpu: runner.ProcessCPU() - cpuStart}
	if prof != nil {
		prof.end(b)
	}
	b.Logf("bare: measured-phase process CPU %.3f s, wall %.3f s", r.cpu.Seconds(), time.Since(start).Seconds())
	for _, n := range nodes {
		r.copies += n.counter.copies.Load()
	}
	return r
}

// topic joins a topic once (publishers on topics they do not subscribe to publish through
// fanout, as a Node does).
func (n *bareNode) topic(name string) (*pubsub.Topic, error) {
	if t := n.topics[name]; t != nil {
		return t, nil
	}
	t, err := n.ps.Join(name)
	if err != nil {
		return nil, err
	}
	n.topics[name] = t
	return t, nil
}
