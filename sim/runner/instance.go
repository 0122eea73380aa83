package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/streamsim/streamsim/sim/network"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/testground/sdk-go/run"
	"github.com/testground/sdk-go/runtime"
	"github.com/testground/sdk-go/sync"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/link"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/sim/node"
	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/trace"
)

// TraceFile is the frame recorder's asset name in an instance's outputs directory.
const TraceFile = "frames.trace.gz"

// peerRecord is what each instance announces in the address exchange.
type peerRecord struct {
	Group    string     `json:"group"`
	Instance int        `json:"instance"`
	Role     string     `json:"role"`
	ID       string     `json:"id"`
	Addrs    []string   `json:"addrs"`
	Codec    codec.Spec `json:"codec"` // its canonical spec string on the wire (Spec.MarshalText)
	// Error is set when the instance failed before it could announce an address.
	Error string `json:"error,omitempty"`
}

// resultRecord is what a publishing instance published, per topic, announced when it has
// published everything; receivers add up the topics they subscribe to.
type resultRecord struct {
	Group    string                  `json:"group"`
	Instance int                     `json:"instance"`
	Topics   map[string]result.Tally `json:"topics"`
	// Error is set when the publisher failed; receivers then stop waiting for it.
	Error string `json:"error,omitempty"`
}

// instance is one node of a scenario on one Testground instance: the node lifecycle.
type instance struct {
	sc       *Scenario
	runenv   *runtime.RunEnv
	client   sync.Client
	p        *Params
	role     topology.Role
	group    string
	seq      int // sequence number within the group, from 0
	slot     time.Duration
	summary  *result.NodeSummary
	host     *network.Host
	node     *node.Node
	rec      *trace.Writer
	msgLog   *result.MessageLog
	plan     *topology.Plan
	me       int
	members  []topology.Member
	infos    []peer.AddrInfo
	received *deliveries
	slots    *slotSource

	// syncing names the run's sync states and topics (one set per scenario).
	stateNodes, stateReady, stateDone, stateFinished sync.State
	peersTopic, resultTopic                          *sync.Topic

	// parityErr is a receiver's parity failure: reported after the run's barriers, so the
	// other instances finish normally.
	parityErr error
	// done is set once the instance passed the done barrier; only then do the others wait
	// for it at the finished barrier.
	done bool
	// signaled records the barriers this instance has entered, resultSent whether it
	// announced its published set: after a failure the instance enters the rest and
	// announces the failure, so the others finish instead of waiting for it until timeout.
	signaled   map[sync.State]bool
	resultSent bool
	addrSent   bool
	publishes  bool

	// Reliability (faultrunner.go, liveness.go, samples.go): the fault schedule's part of this
	// instance, the watch for lost instances, resource samples; phase says what the instance
	// is doing (for a timeout's message); waitCtx bounds waits for other instances, a grace
	// period beyond the budget so that an instance that times out is named by itself.
	faults  *faultRunner
	live    *liveness
	sampler *sampler
	phase   string
	waitCtx context.Context

	// env is the instance as the runner handed it; spec the scenario's node lifecycle; net
	// the run's network, which makes the instance's host.
	env  *Env
	spec NodeSpec
	net  network.Network
}

// MeasuredPhase, when set, is called as each instance enters (begin) and leaves (after its
// CPU figure is taken) the measured phase: the overhead benchmark profiles exactly the phase
// the figure covers (scenarios/mesh/overhead_test.go, -overhead.profile).
var MeasuredPhase func(begin bool)

// waitGrace is how much longer than its own budget an instance waits for the others.
const waitGrace = 30 * time.Second

// failure wraps an error with its kind for the summary.
func failure(kind result.FailureKind, err error) error {
	var f *result.Failure
	if errors.As(err, &f) {
		return err
	}
	return &result.Failure{Kind: kind, Message: err.Error()}
}

// runProcessInstance is a Testground (or Kubernetes) instance: a process of its own on the
// real clock, its hosts on TCP at the instance's data address.
func runProcessInstance(sc *Scenario, env *runtime.RunEnv, ic *run.InitContext) error {
	p, err := sc.ParseParams(env.TestInstanceParams)
	if err == nil {
		err = CheckProcessClock(p)
	}
	var ip net.IP
	if err == nil {
		if ip, err = dataIP(ic); err != nil {
			err = fmt.Errorf("data network IP: %w", err)
		}
	}
	if err != nil {
		return runInstance(sc, env, ic, nil, nil, err)
	}
	return runInstance(sc, env, ic, p, &network.TCP{IP: ip.String(), BandwidthCounter: sc.BandwidthCounter}, nil)
}

// runInstance runs one instance of sc with its parameters p (parsed once, for the instance's
// group) on the run's network net; setupErr is a failure before either could be made. The
// runner owns what every scenario shares: the summary's identity, the parameter check, the
// time budget, and announcing a setup failure so the other instances go on.
func runInstance(sc *Scenario, env *runtime.RunEnv, ic *run.InitContext, p *Params, net network.Network, setupErr error) error {
	e := &Env{Scenario: sc, RunEnv: env, Sync: ic.SyncClient, Params: p, Net: net,
		Group: env.TestGroupID, Seq: int(ic.GroupSeq) - 1, Outputs: env.TestOutputsPath}
	e.Role = sc.Role(e.Group)
	e.Summary = &result.NodeSummary{Scenario: sc.Name, Role: string(e.Role), Group: e.Group, Instance: e.Seq}
	e.Summary.Optimized, e.Summary.Build = result.BuildOptimized()
	err := setupErr
	if err == nil && sc.Check != nil {
		err = sc.Check(p, groupSizes(env))
	}
	if err != nil {
		err = failure(result.FailSetup, err)
		e.Summary.Failure = err.(*result.Failure)
		in := newInstance(e, ic)
		in.abandon(err)
		e.writeSummary()
		return err
	}
	s := e.Summary
	s.Profile, s.Payload, s.Slots, s.TimeScale, s.Seed = p.Profile.Name, p.Payload, p.Slots, p.TimeScale, p.Seed
	s.Clock = string(p.Clock)
	s.Transport = net.Transport()
	e.init = ic
	ctx, cancel := context.WithTimeout(context.Background(), p.Budget())
	defer cancel()
	return sc.Run(ctx, e)
}

// NodeLifecycle is the Run of a scenario whose every instance is one node: host, address
// exchange over the sync service, the spec's plan, node, dial, subscribe, wait for
// subscriptions, barriers, publishing on the schedule (traffic.go), receiving and checking,
// liveness and faults, summary.json and results.out.
func NodeLifecycle(spec NodeSpec) func(ctx context.Context, e *Env) error {
	return func(ctx context.Context, e *Env) error {
		in := newInstance(e, e.init)
		in.spec = spec
		return in.lifecycle(ctx)
	}
}

// newInstance is the node lifecycle's state for the instance e.
func newInstance(e *Env, ic *run.InitContext) *instance {
	sc := e.Scenario
	return &instance{
		sc: sc, env: e, runenv: e.RunEnv, client: ic.SyncClient, group: e.Group, seq: e.Seq, net: e.Net,
		role: e.Role, summary: e.Summary, p: e.Params,
		signaled:      map[sync.State]bool{},
		stateNodes:    sync.State(sc.Name + "-nodes"),
		stateReady:    sync.State(sc.Name + "-ready"),
		stateDone:     sync.State(sc.Name + "-done"),
		stateFinished: sync.State(sc.Name + "-finished"),
		peersTopic:    sync.NewTopic(sc.Name+"-peers", &peerRecord{}),
		resultTopic:   sync.NewTopic(sc.Name+"-results", &resultRecord{}),
	}
}

// lifecycle runs the node instance within ctx (its budget).
func (in *instance) lifecycle(ctx context.Context) error {
	p, s := in.p, in.summary
	in.slot = p.Slot()
	if in.role == topology.RoleLeaf {
		s.Codec = p.Codec.String()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	waitCtx, waitCancel := context.WithTimeout(context.Background(), p.Budget()+waitGrace)
	defer waitCancel()
	in.waitCtx = waitCtx
	in.live = newLiveness(in)
	in.live.cancelWork = cancel

	runErr := in.run(ctx)
	if in.live.crashed.Load() {
		// A crash: nothing more is announced or written (liveness.go).
		in.closeFiles()
		return &result.Failure{Kind: result.FailCrash, Message: fmt.Sprintf("%s %s/%d crashed (fault schedule)", in.role, in.group, in.seq)}
	}
	if runErr != nil {
		runErr = failure(result.FailRun, in.timeoutFailure(runErr))
		in.recordPartial()
		s.Failure = runErr.(*result.Failure)
		if s.Failure.Kind != result.FailParity {
			in.abandon(runErr)
		}
	}
	if err := in.finish(); err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}

// EnvDataIP names the environment variable that, when set, is the address a node listens on
// instead of the SDK's data-network IP. Without a sidecar the SDK answers 127.0.0.1 (right for
// local:exec and for pods on the host network, each on its own port); a pod on a cluster's pod
// network sets it to its pod IP (the downward API's status.podIP: see package cluster).
const EnvDataIP = "STREAMSIM_DATA_IP"

func dataIP(ic *run.InitContext) (net.IP, error) {
	if v := os.Getenv(EnvDataIP); v != "" {
		ip := net.ParseIP(v)
		if ip == nil || ip.To4() == nil {
			return nil, fmt.Errorf("%s=%q is not an IPv4 address", EnvDataIP, v)
		}
		return ip, nil
	}
	return ic.NetClient.GetDataNetworkIP()
}

// groupSizes is the run's groups and their instance counts, as far as the RunEnv tells: its
// own group's count, and every group named in its params is not known. Scenarios check what
// they can from this and the params.
func groupSizes(env *runtime.RunEnv) map[string]int {
	return map[string]int{env.TestGroupID: env.TestGroupInstanceCount}
}

// abandon lets the other instances go on after this one failed with err.
func (in *instance) abandon(err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !in.addrSent {
		in.addrSent = true
		in.client.Publish(ctx, in.peersTopic, &peerRecord{Role: string(in.role), Group: in.group, Instance: in.seq, Error: err.Error()})
	}
	if !in.resultSent && (in.publishes || in.plan == nil) {
		in.resultSent = true
		in.client.Publish(ctx, in.resultTopic, &resultRecord{Group: in.group, Instance: in.seq, Error: err.Error()})
	}
	for _, st := range []sync.State{in.stateNodes, in.stateReady, in.stateDone} {
		if !in.signaled[st] {
			in.signaled[st] = true
			in.client.SignalEntry(ctx, st)
		}
	}
}

func (in *instance) run(ctx context.Context) error {
	n := in.runenv.TestInstanceCount
	var lk *link.Link
	if in.spec.Link != nil {
		var err error
		if lk, err = in.spec.Link(in.p, in.group, in.seq, n); err != nil {
			return failure(result.FailSetup, fmt.Errorf("link: %w", err))
		}
	}
	h, err := in.net.Host(lk)
	if err != nil {
		return failure(result.FailSetup, err)
	}
	in.summary.Transport = h.Transport()
	if lk != nil {
		sh := lk.Shape()
		in.summary.Link = &result.Link{Region: sh.Region, Class: sh.Class, UpBitsPerSec: sh.UpBitsPerSec, DownBitsPerSec: sh.DownBitsPerSec}
	}
	in.host = h
	in.summary.PeerID = h.ID().String()
	if err := in.exchange(ctx, n); err != nil {
		return err
	}
	plan, err := in.spec.Plan(in.p, in.members)
	if err != nil {
		return failure(result.FailSetup, fmt.Errorf("topology: %w", err))
	}
	in.plan = plan
	if len(in.p.Faults) > 0 {
		if in.faults, err = newFaultRunner(in); err != nil {
			return failure(result.FailSetup, err)
		}
	}
	self := &plan.Nodes[in.me]
	in.publishes = self.Publishes
	in.summary.Kind, in.summary.Client = self.Kind, self.Client.Name
	in.summary.Receiver = in.spec.Receiver(self)
	in.summary.SeenTTLNs = int64(in.p.Scaled(self.Client.SeenTTL))
	in.summary.Peers = len(self.Dial)
	for j := range plan.Nodes {
		if slices.Contains(plan.Nodes[j].Dial, in.me) {
			in.summary.Peers++
		}
	}
	if err := in.startNode(ctx, self); err != nil {
		return err
	}
	if err := in.waitSubscribed(ctx, self); err != nil {
		return err
	}
	if in.publishes {
		// Open the shared workload before the barrier, so every publisher of the process
		// is counted before the first slot is taken.
		if in.slots, err = openSlots(in.p.Workload(), in.p.Slots, in.plan); err != nil {
			return err
		}
		defer in.slots.close()
	}
	in.signaled[in.stateReady] = true
	in.phase = "waiting at the ready barrier"
	if _, err := in.client.SignalAndWait(ctx, in.stateReady, n); err != nil {
		return fmt.Errorf("ready barrier: %w", err)
	}

	// The measured phase.
	start := time.Now()
	cpu := startProcessMeter(in.p.Clock)
	if MeasuredPhase != nil {
		MeasuredPhase(true)
	}
	in.summary.Start = start
	if err := in.startReliability(ctx, start); err != nil { // liveness.go
		return err
	}
	results := make(chan *resultRecord, n+16)
	if _, err := in.client.Subscribe(ctx, in.resultTopic, results); err != nil {
		return fmt.Errorf("subscribe to results: %w", err)
	}
	if in.publishes {
		in.phase = "publishing"
		if err := in.publish(ctx, start); err != nil {
			return err
		}
	}
	if in.spec.Receiver(self) {
		in.phase = "receiving"
		if err := in.receive(ctx, results); err != nil {
			return err
		}
	} else {
		in.summary.Duration = time.Since(start).Seconds()
	}
	if err := in.live.hold(ctx); err != nil {
		return err
	}
	in.signaled[in.stateDone] = true
	in.phase = "waiting at the done barrier"
	if _, err := in.client.SignalAndWait(in.waitCtx, in.stateDone, n); err != nil {
		return fmt.Errorf("done barrier: %w", err)
	}
	in.done = true
	in.live.stopWatching()
	if !in.spec.Receiver(self) {
		in.summary.Duration = time.Since(start).Seconds()
	}
	in.summary.Process = cpu.finish()
	if MeasuredPhase != nil {
		MeasuredPhase(false)
	}
	// Learn of every instance announced lost before the barrier opened (liveness.go).
	if err := in.live.settle(in.waitCtx); err != nil {
		return fmt.Errorf("status topic: %w", err)
	}
	if err := in.live.failure(); err != nil {
		in.recordPartial()
		return err
	}
	return in.parityErr
}

// exchange announces this instance's address and collects every instance's, sorted by group
// and sequence number; in.members, in.infos and in.me describe them.
func (in *instance) exchange(ctx context.Context, n int) error {
	self := peerRecord{Role: string(in.role), Group: in.group, Instance: in.seq, ID: in.host.ID().String(), Codec: in.p.Codec}
	for _, a := range in.host.Addrs() {
		self.Addrs = append(self.Addrs, a.String())
	}
	recs := make(chan *peerRecord, n+16)
	if _, err := in.client.Subscribe(ctx, in.peersTopic, recs); err != nil {
		return fmt.Errorf("subscribe to peers: %w", err)
	}
	in.addrSent = true
	if _, err := in.client.Publish(ctx, in.peersTopic, &self); err != nil {
		return fmt.Errorf("publish address: %w", err)
	}
	var records []*peerRecord
	for len(records) < n {
		select {
		case r := <-recs:
			if r.Error != "" {
				return failure(result.FailPeer, fmt.Errorf("instance %s/%d failed: %s", r.Group, r.Instance, r.Error))
			}
			records = append(records, r)
		case <-ctx.Done():
			return fmt.Errorf("address exchange: %d of %d instances: %w", len(records), n, ctx.Err())
		}
	}
	slices.SortFunc(records, func(a, b *peerRecord) int {
		if a.Group != b.Group {
			if a.Group < b.Group {
				return -1
			}
			return 1
		}
		return a.Instance - b.Instance
	})
	in.members = make([]topology.Member, n)
	in.infos = make([]peer.AddrInfo, n)
	in.me = -1
	for i, r := range records {
		in.members[i] = topology.Member{Group: r.Group, Instance: r.Instance, Role: topology.Role(r.Role), Codec: r.Codec}
		id, err := peer.Decode(r.ID)
		if err != nil {
			return fmt.Errorf("peer record %s/%d: %w", r.Group, r.Instance, err)
		}
		in.infos[i].ID = id
		for _, s := range r.Addrs {
			a, err := ma.NewMultiaddr(s)
			if err != nil {
				return fmt.Errorf("peer record %s/%d: %w", r.Group, r.Instance, err)
			}
			in.infos[i].Addrs = append(in.infos[i].Addrs, a)
		}
		if id == in.host.ID() {
			in.me = i
		}
	}
	if in.me < 0 {
		return errors.New("own record missing from the address exchange")
	}
	return nil
}

// startNode builds the node the plan describes, dials its peers and subscribes to its topics.
func (in *instance) startNode(ctx context.Context, self *topology.Node) error {
	// In a mesh only the observed node records: its streams are what the sweep replays.
	if in.p.Record && (in.plan.Observed < 0 || in.plan.Observed == in.me) {
		var err error
		in.rec, err = trace.Create(filepath.Join(in.runenv.TestOutputsPath, TraceFile), trace.Header{
			Version: trace.Version, Source: "recorder",
			Params: map[string]string{"scenario": in.sc.Name, "role": string(in.role), "kind": self.Kind, "group": in.group,
				"instance": strconv.Itoa(in.seq), "payload": in.p.Payload, "profile": in.p.Profile.Name,
				"time_scale": strconv.FormatFloat(in.p.TimeScale, 'g', -1, 64), "seed": strconv.FormatInt(in.p.Seed, 10),
				"note": "frames as go-libp2p-pubsub wrote or read them (ssz_snappy payloads), before stream compression"},
		})
		if err != nil {
			return fmt.Errorf("frame recorder: %w", err)
		}
	}
	if in.spec.RecordMessages || len(in.p.Faults) > 0 { // fault runs are accounted per message
		var err error
		if in.msgLog, err = result.CreateMessageLog(filepath.Join(in.runenv.TestOutputsPath, result.MessagesFile)); err != nil {
			return fmt.Errorf("message log: %w", err)
		}
		in.summary.Messages = result.MessagesFile
	}
	roles := map[peer.ID]string{}
	for i, m := range in.members {
		roles[in.infos[i].ID] = string(m.Role)
		if in.plan.Nodes[i].Kind != "" && in.plan.Nodes[i].Kind != string(m.Role) {
			roles[in.infos[i].ID] = in.plan.Nodes[i].Kind
		}
	}
	var direct []peer.AddrInfo
	for _, j := range self.Direct {
		direct = append(direct, in.infos[j])
	}
	// Stagger heartbeats over one interval, deterministically by position.
	stagger := time.Duration(0)
	if len(in.members) > 1 {
		stagger = self.Client.Heartbeat * time.Duration(in.me) / time.Duration(len(in.members))
	}
	opts := []node.Option{
		node.WithCodecs(self.Codecs...), node.WithPayloadSSZ(in.p.Payload == "ssz"), node.WithTimeScale(in.p.TimeScale),
		node.WithClient(self.Client), node.WithDirectPeers(direct), node.WithFlowControl(in.spec.FlowControl),
		node.WithPeerRoles(func(id peer.ID) string { return roles[id] }), node.WithHeartbeatDelay(stagger),
		node.WithLostLog(len(in.p.Faults) > 0), // lostlog.go
		node.WithNodeSeed(in.p.Seed, in.me),    // validation.go
	}
	if in.rec != nil {
		opts = append(opts, node.WithRecorder(in.rec))
	}
	opts = append(opts, node.WithCodecCPUCharge(in.p.CodecCPU)) // on the virtual clock
	if in.spec.NodeOptions != nil {
		more, err := in.spec.NodeOptions(in.p)
		if err != nil {
			return err
		}
		opts = append(opts, more...)
	}
	node, err := node.NewNode(in.host, opts...)
	if err != nil {
		return err
	}
	in.node = node
	in.summary.HeartbeatNs = int64(node.Heartbeat()) // what pubsub was given
	for _, v := range node.Protocols() {
		in.summary.Protocols = append(in.summary.Protocols, string(v))
	}
	// Dial only once every instance's GossipSub has registered its protocols: a peer dialled
	// before would refuse the dialler's gossipsub stream, and pubsub does not retry it.
	in.signaled[in.stateNodes] = true
	in.phase = "waiting for every node to start"
	if _, err := in.client.SignalAndWait(ctx, in.stateNodes, in.runenv.TestInstanceCount); err != nil {
		return fmt.Errorf("nodes barrier: %w", err)
	}
	for _, j := range self.Dial {
		if err := node.Host().Connect(ctx, in.infos[j]); err != nil {
			return fmt.Errorf("connect to %s/%d: %w", in.members[j].Group, in.members[j].Instance, err)
		}
	}
	in.received = newDeliveries(self.Topics, in.msgLog)
	if err := in.received.subscribe(node, self.Topics); err != nil {
		return err
	}
	in.summary.Topics = self.Topics
	return nil
}

// waitSubscribed waits until pubsub sees each peer the plan lists subscribed to each topic.
func (in *instance) waitSubscribed(ctx context.Context, self *topology.Node) error {
	want := map[string][]peer.ID{}
	for t, idx := range self.WaitFor {
		for _, j := range idx {
			want[t] = append(want[t], in.infos[j].ID)
		}
	}
	return node.WaitSubscribed(ctx, in.node.PubSub(), want)
}

// finish snapshots the meters, writes the summary and results, waits for every instance to
// do the same and closes the node.
func (in *instance) finish() error {
	var err error
	if in.node != nil {
		// BandwidthCounter totals are swept once a second.
		time.Sleep(1200 * time.Millisecond)
		in.summary.Streams = in.node.FreezeStats() // the recording stops here too
		in.summary.Pubsub = in.node.PubsubStats()
		in.summary.Bandwidth = in.node.Bandwidth()
		in.summary.StreamErrors = in.node.StreamErrors()
		if lk := in.host.Link(); lk != nil && in.summary.Link != nil && in.host.Transport() != network.TransportSimnet {
			st := lk.Stats()
			l := in.summary.Link
			l.UpBytes, l.DownBytes, l.HandshakeErrors = st.UpBytes, st.DownBytes, st.HandshakeErrors
			l.LateMeanMs, l.LateMaxMs = float64(st.LateMean)/1e6, float64(st.LateMax)/1e6
		}
	}
	in.reliabilityRecords() // liveness.go
	if werr := in.writeSummary(); werr != nil {
		err = werr
	}
	in.recordPoints()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	if in.done {
		if _, berr := in.client.SignalAndWait(ctx, in.stateFinished, in.runenv.TestInstanceCount); berr != nil && err == nil {
			err = fmt.Errorf("finished barrier: %w", berr)
		}
	} else if !in.signaled[in.stateFinished] {
		// A failed instance does not hold the others at the finished barrier.
		in.signaled[in.stateFinished] = true
		in.client.SignalEntry(ctx, in.stateFinished)
	}
	cancel()
	if in.node != nil {
		in.node.Close()
	} else if in.host != nil {
		in.host.Close()
	}
	if in.rec != nil {
		if cerr := in.rec.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("frame recorder: %w", cerr)
		}
	}
	if in.msgLog != nil {
		if cerr := in.msgLog.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("message log: %w", cerr)
		}
	}
	return err
}

func (in *instance) writeSummary() error { return in.env.writeSummary() }

func (in *instance) recordPoints() {
	r := in.runenv.R()
	s := in.summary
	// CPU points say whether they come from an optimized build (Testground's exec:go is not).
	build := "optimized"
	if !s.Optimized {
		build = "unoptimized"
	}
	for _, st := range s.Streams {
		tag := ",peer_role=" + st.PeerRole + ",direction=" + st.Direction + ",codec=" + st.Codec
		r.RecordPoint("wire_bytes"+tag, float64(st.WireBytes))
		r.RecordPoint("raw_bytes"+tag, float64(st.RawBytes))
		r.RecordPoint("frames"+tag, float64(st.Frames))
		r.RecordPoint("codec_time_ns"+tag+",build="+build, float64(st.CodecStats.TimeNs))
	}
	if s.Parity != nil {
		r.RecordPoint("messages", float64(s.Parity.Total()))
	}
	if s.Schedule != nil {
		r.RecordPoint("max_lag_ms", float64(s.Schedule.MaxLagNs)/1e6)
	}
	r.RecordPoint("drops", float64(s.Pubsub.Drops()))
	ok := 1.0
	if s.Failure != nil {
		ok = 0
	}
	r.RecordPoint("ok", ok)
}

// neighbours are the plan's peers of member i: those it dials and those that dial it.
func neighbours(plan *topology.Plan, i int) []int {
	out := slices.Clone(plan.Nodes[i].Dial)
	for j := range plan.Nodes {
		if slices.Contains(plan.Nodes[j].Dial, i) && !slices.Contains(out, j) {
			out = append(out, j)
		}
	}
	slices.Sort(out)
	return out
}

// slotTime converts slots to the run's (scaled) time.
func (in *instance) slotTime(slots float64) time.Duration { return in.p.SlotsTime(slots) }
