package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	gosync "sync"
	"time"

	"github.com/streamsim/streamsim/sim/network"

	tgnetwork "github.com/testground/sdk-go/network"
	"github.com/testground/sdk-go/run"
	"github.com/testground/sdk-go/runtime"
	"github.com/testground/sdk-go/sync"
)

// Group is one Testground group of an embedded run.
type Group struct {
	ID        string
	Instances int
	// Params override the run's Params for this group (as a composition's groups do).
	Params map[string]string
}

// DefaultScenario is the scenario a run names none of: the proposal's live check.
const DefaultScenario = "hub-leaves"

// DefaultBubble is how an embedded run on the virtual clock enters its synctest bubble when
// Embedded.Bubble is nil: package bubble's Run, set by the programs that link it (the CLI),
// so that the Testground plan does not link the synctest entry.
var DefaultBubble func(f func()) error

// Embedded configures an in-process run of a registered scenario.
type Embedded struct {
	// Scenario is the registered scenario's name (default DefaultScenario).
	Scenario string
	// Out is the run directory; instance outputs go to Out/<group>/<instance>/.
	Out string
	// Groups are the run's groups, in order.
	Groups []Group
	// Params are the scenario's parameters as strings (Testground's test_params).
	Params map[string]string
	// Parsed, when set, is every group's parameters already parsed from Params and checked
	// (Scenario.ParseGroups, as the CLI does before any run starts); nil: Run parses them.
	Parsed map[string]*Params
	// Progress, when set, receives a progress line (carriage-return updated) while the run
	// publishes.
	Progress io.Writer
	// Bubble runs a virtual-clock run's body in a testing/synctest bubble: tests give
	// synctest.Test's; nil is DefaultBubble.
	Bubble func(f func()) error
}

// Run runs every instance of the scenario in this process, each with its own RunEnv and one
// shared in-memory sync client, and returns the instances' errors joined. Parameters are
// checked before any node starts.
func (e *Embedded) Run(ctx context.Context) error {
	name := e.Scenario
	if name == "" {
		name = DefaultScenario
	}
	sc, err := Lookup(name)
	if err != nil {
		return err
	}
	eparams := sc.EmbeddedParams(e.Params) // the scenario's clock where none is given
	if len(e.Groups) == 0 {
		return fmt.Errorf("%s: no groups", sc.Name)
	}
	parsed := e.Parsed
	if parsed == nil {
		if parsed, err = sc.ParseGroups(eparams, e.Groups); err != nil { // every group's, once
			return err
		}
	}
	params := parsed[e.Groups[0].ID] // slots and time scale for the progress line
	var insts []embeddedInstance
	for _, g := range e.Groups {
		gp := parsed[g.ID]
		for i := range g.Instances {
			insts = append(insts, embeddedInstance{group: g, seq: i, params: MergeParams(eparams, g.Params), parsed: gp})
		}
		if gp.Clock != params.Clock {
			return paramError(ParamClock, "every group of a run takes one clock: %s has %s, %s has %s", e.Groups[0].ID, params.Clock, g.ID, gp.Clock)
		}
	}
	envs, err := e.newEnvs(sc, insts)
	if err != nil {
		return err
	}
	if params.Clock == network.ClockReal {
		return e.runInstances(ctx, sc, insts, envs, params, &network.TCP{IP: "127.0.0.1", BandwidthCounter: sc.BandwidthCounter})
	}
	// The virtual clock: everything the run makes (sync client, network, hosts, nodes,
	// timers) is made inside the bubble, and waits only on what the bubble made; the
	// caller's context is not one of them (its channel would hold time still), so an
	// interrupt stops the run when the bubble returns.
	bubble := e.Bubble
	if bubble == nil {
		bubble = DefaultBubble
	}
	if bubble == nil {
		return paramError(ParamClock, "virtual: this program cannot enter a synctest bubble (streamsim run can; Testground and Kubernetes instances run on the real clock)")
	}
	var runErr error
	if err := bubble(func() {
		vn := network.NewVirtualNetworkOn(params.VNet)
		defer vn.Close()
		runErr = e.runInstances(context.Background(), sc, insts, envs, params, vn)
	}); err != nil {
		return errors.Join(runErr, err)
	}
	return runErr
}

// embeddedInstance is one instance of an embedded run: its group, its sequence number in the
// group and its parameters.
type embeddedInstance struct {
	group  Group
	seq    int
	params map[string]string
	parsed *Params
}

// newEnvs makes the instances' RunEnvs and outputs directories. A RunEnv starts goroutines
// that never end (go-metrics' meter arbiter, on a ticker made at init), so under the virtual
// clock they are made before the bubble, outside it.
func (e *Embedded) newEnvs(sc *Scenario, insts []embeddedInstance) ([]*runtime.RunEnv, error) {
	client := newMemSync()
	defer client.Close()
	runID := time.Now().UTC().Format("20060102-150405")
	envs := make([]*runtime.RunEnv, len(insts))
	for i, in := range insts {
		dir := filepath.Join(e.Out, in.group.ID, strconv.Itoa(in.seq))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("outputs: %w", err)
		}
		env, err := newRunEnv(runtime.RunParams{
			TestPlan: "streamsim", TestCase: sc.Name, TestRun: runID,
			TestOutputsPath: dir, TestTempPath: os.TempDir(),
			TestInstanceCount: len(insts), TestInstanceParams: in.params,
			TestGroupID: in.group.ID, TestGroupInstanceCount: in.group.Instances,
			TestStartTime: time.Now(), TestDisableMetrics: true,
		})
		if err != nil {
			return nil, err
		}
		envs[i] = env
	}
	return envs, nil
}

// runInstances runs the instances, each in its own goroutine, their hosts on net.
func (e *Embedded) runInstances(ctx context.Context, sc *Scenario, insts []embeddedInstance, envs []*runtime.RunEnv, params *Params, net network.Network) error {
	client := newMemSync()
	defer client.Close()
	stopProgress := e.progress(ctx, client, sc, len(insts), params)
	defer stopProgress()
	errs := make([]error, len(insts))
	var wg gosync.WaitGroup
	for i, in := range insts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			env := envs[i]
			ic := &run.InitContext{
				SyncClient: client, NetClient: tgnetwork.NewClient(client, env),
				GlobalSeq: int64(i + 1), GroupSeq: int64(in.seq + 1),
			}
			err := runRecovered(sc, env, ic, in.parsed, net)
			if cerr := env.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("close run env: %w", cerr)
			}
			if err != nil {
				errs[i] = fmt.Errorf("%s/%d: %w", in.group.ID, in.seq, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// runRecovered runs an instance, turning a panic (the SDK's Must* helpers) into an error.
func runRecovered(sc *Scenario, env *runtime.RunEnv, ic *run.InitContext, p *Params, net network.Network) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return runInstance(sc, env, ic, p, net, nil)
}

// newRunEnv creates a RunEnv whose logger writes to the instance's run.out only.
func newRunEnv(p runtime.RunParams) (*runtime.RunEnv, error) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	network.StdoutMu.Lock()
	saved := os.Stdout
	os.Stdout = null
	env := runtime.NewRunEnv(p)
	os.Stdout = saved
	network.StdoutMu.Unlock()
	return env, nil
}

// progress prints the publishing phase's progress and ETA once all instances are ready.
func (e *Embedded) progress(ctx context.Context, client sync.Client, sc *Scenario, n int, p *Params) func() {
	if e.Progress == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		fmt.Fprintf(e.Progress, "%s: starting %d nodes…", sc.Name, n)
		b, err := client.Barrier(ctx, sync.State(sc.Name+"-ready"), n)
		if err != nil {
			return
		}
		select {
		case <-b.C:
		case <-ctx.Done():
			fmt.Fprintln(e.Progress)
			return
		}
		start, wallStart := time.Now(), network.WallNow()
		slot := p.Slot()
		total := p.SlotsTime(float64(p.Slots))
		// Under the virtual clock the ticker ticks in simulated time; the line says both.
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			el := time.Since(start)
			s := min(int(el/slot)+1, p.Slots)
			eta := max(total-el, 0)
			line := fmt.Sprintf("%s: slot %d/%d, %s elapsed, ETA %s", sc.Name, s, p.Slots, el.Truncate(time.Second), eta.Truncate(time.Second))
			if el > total {
				line = fmt.Sprintf("%s: published %d slots, draining and collecting (%s)", sc.Name, p.Slots, el.Truncate(time.Second))
			}
			if p.Clock == network.ClockVirtual {
				wall := network.WallNow() - wallStart
				line = fmt.Sprintf("%s (virtual clock): slot %d/%d, %s simulated in %s wall", sc.Name, s, p.Slots, el.Truncate(time.Second), wall.Truncate(time.Second))
				if el > 0 && el < total {
					line += fmt.Sprintf(", ETA %s", time.Duration(float64(wall)*float64(total-el)/float64(el)).Truncate(time.Second))
				}
			}
			fmt.Fprintf(e.Progress, "\r\033[K%s", line)
			select {
			case <-tick.C:
			case <-ctx.Done():
				fmt.Fprint(e.Progress, "\r\033[K")
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}
