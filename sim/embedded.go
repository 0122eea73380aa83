package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	gosync "sync"
	"time"

	"github.com/testground/sdk-go/network"
	"github.com/testground/sdk-go/run"
	"github.com/testground/sdk-go/runtime"
	"github.com/testground/sdk-go/sync"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/workload"
)

// Embedded configures an in-process hub-leaves run.
type Embedded struct {
	// Out is the run directory; instance outputs go to Out/<group>/<instance>/.
	Out string
	// Leaves are the leaf codecs, one leaf group each (named leaf-<index>-<codec>).
	Leaves []codec.Spec
	// Params are the scenario's parameters (ParamProfile, ParamSlots, …) as strings; the
	// runner sets ParamPublishers from Publishers and each leaf group's ParamCodec.
	Params map[string]string
	// GroupParams override Params per group ID (as a Testground composition's groups do).
	GroupParams map[string]map[string]string
	Publishers  int
	// Progress, when set, receives a progress line (carriage-return updated) while the run
	// publishes.
	Progress io.Writer
}

// LeafGroup is the group ID of the i-th leaf with codec spec.
func LeafGroup(i int, spec codec.Spec) string {
	name := strings.NewReplacer(":", "-", "/", "-").Replace(strings.ToLower(spec.String()))
	return fmt.Sprintf("leaf-%d-%s", i, name)
}

// stdoutMu serializes the moment a RunEnv is created: its logger always writes to stdout,
// which the embedded runner redirects to the instance's run.out only.
var stdoutMu gosync.Mutex

// Run runs every instance of HubLeaves in this process, each with its own RunEnv and one
// shared in-memory sync client, and returns the instances' errors joined.
func (e *Embedded) Run(ctx context.Context) error {
	if e.Publishers < 1 {
		return errors.New("need at least one publisher")
	}
	if len(e.Leaves) == 0 {
		return errors.New("need at least one leaf")
	}
	params, err := ParseParams(e.Params)
	if err != nil {
		return err
	}
	type instance struct {
		group    string
		seq      int
		groupN   int
		leafSpec *codec.Spec
	}
	var insts []instance
	for i := range e.Publishers {
		insts = append(insts, instance{group: GroupPublishers, seq: i, groupN: e.Publishers})
	}
	insts = append(insts, instance{group: GroupHub, groupN: 1})
	for i, l := range e.Leaves {
		insts = append(insts, instance{group: LeafGroup(i, l), groupN: 1, leafSpec: &e.Leaves[i]})
	}
	client := sync.NewInmemClient()
	runID := time.Now().UTC().Format("20060102-150405")
	envs := make([]*runtime.RunEnv, len(insts))
	for i, in := range insts {
		p := map[string]string{}
		for k, v := range e.Params {
			p[k] = v
		}
		p[ParamPublishers] = strconv.Itoa(e.Publishers)
		if in.leafSpec != nil {
			p[ParamCodec] = in.leafSpec.String()
		}
		for k, v := range e.GroupParams[in.group] {
			p[k] = v
		}
		dir := filepath.Join(e.Out, in.group, strconv.Itoa(in.seq))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("outputs: %w", err)
		}
		env, err := newRunEnv(runtime.RunParams{
			TestPlan: "streamsim", TestCase: "hub-leaves", TestRun: runID,
			TestOutputsPath: dir, TestTempPath: os.TempDir(),
			TestInstanceCount: len(insts), TestInstanceParams: p,
			TestGroupID: in.group, TestGroupInstanceCount: in.groupN,
			TestStartTime: time.Now(), TestDisableMetrics: true,
		})
		if err != nil {
			return err
		}
		envs[i] = env
	}
	stopProgress := e.progress(ctx, client, len(insts), params)
	defer stopProgress()
	errs := make([]error, len(insts))
	var wg gosync.WaitGroup
	for i, in := range insts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			env := envs[i]
			ic := &run.InitContext{
				SyncClient: client, NetClient: network.NewClient(client, env),
				GlobalSeq: int64(i + 1), GroupSeq: int64(in.seq + 1),
			}
			err := runInstance(env, ic)
			if cerr := env.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("close run env: %w", cerr)
			}
			if err != nil {
				errs[i] = fmt.Errorf("%s/%d: %w", in.group, in.seq, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// runInstance runs the scenario, turning a panic (the SDK's Must* helpers) into an error.
func runInstance(env *runtime.RunEnv, ic *run.InitContext) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return HubLeaves(env, ic)
}

// newRunEnv creates a RunEnv whose logger writes to the instance's run.out only.
func newRunEnv(p runtime.RunParams) (*runtime.RunEnv, error) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	stdoutMu.Lock()
	saved := os.Stdout
	os.Stdout = null
	env := runtime.NewRunEnv(p)
	os.Stdout = saved
	stdoutMu.Unlock()
	return env, nil
}

// progress prints the publishing phase's progress and ETA once all instances are ready.
func (e *Embedded) progress(ctx context.Context, client sync.Client, n int, p Params) func() {
	if e.Progress == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		fmt.Fprintf(e.Progress, "hub-leaves: starting %d nodes…", n)
		b, err := client.Barrier(ctx, stateReady, n)
		if err != nil {
			return
		}
		select {
		case <-b.C:
		case <-ctx.Done():
			fmt.Fprintln(e.Progress)
			return
		}
		start := time.Now()
		slot := time.Duration(float64(workload.SlotDuration) / p.TimeScale)
		total := time.Duration(p.Slots) * slot
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			el := time.Since(start)
			s := min(int(el/slot)+1, p.Slots)
			eta := max(total-el, 0)
			line := fmt.Sprintf("hub-leaves: slot %d/%d, %s elapsed, ETA %s", s, p.Slots, el.Truncate(time.Second), eta.Truncate(time.Second))
			if el > total {
				line = fmt.Sprintf("hub-leaves: published %d slots, draining and collecting (%s)", p.Slots, el.Truncate(time.Second))
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
