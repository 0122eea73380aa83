package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/testground/sdk-go/run"
	"github.com/testground/sdk-go/runtime"
	"github.com/testground/sdk-go/sync"

	"github.com/streamsim/streamsim/link"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/sim/network"
	"github.com/streamsim/streamsim/sim/node"
	"github.com/streamsim/streamsim/topology"
)

// Env is one instance of a run as the runner hands it to its scenario's Run: the parameters
// (parsed once for its group), the run's network (every host of the instance comes from it),
// its place in the run, its outputs directory and the summary it fills.
type Env struct {
	Scenario *Scenario
	Params   *Params
	Net      network.Network
	// RunEnv and Sync are the Testground runtime and sync service of the instance (the
	// embedded runner's in-process ones in an embedded run).
	RunEnv *runtime.RunEnv
	Sync   sync.Client
	// Group and Seq place the instance (Seq from 0 within its group; the run's instance
	// count is RunEnv.TestInstanceCount).
	Group string
	Seq   int
	Role  topology.Role
	// Outputs is the instance's outputs directory; Summary is written there as
	// result.SummaryFile.
	Outputs string
	Summary *result.NodeSummary

	init *run.InitContext
}

// Finish ends an instance that runs without the node lifecycle: err (the instance's outcome)
// becomes the summary's failure, with its kind (a timeout when the budget ran out), and the
// summary is written. It returns the failure, or the write's error.
func (e *Env) Finish(err error) error {
	if err != nil {
		kind := result.FailRun
		if errors.Is(err, context.DeadlineExceeded) {
			kind = result.FailTimeout
		}
		err = failure(kind, err)
		e.Summary.Failure = err.(*result.Failure)
	}
	if werr := e.writeSummary(); werr != nil && err == nil {
		err = werr
	}
	return err
}

func (e *Env) writeSummary() error {
	if err := result.WriteSummary(filepath.Join(e.Outputs, result.SummaryFile), e.Summary); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// NodeSpec is what a scenario of one node per instance (NodeLifecycle) supplies: the plan
// and everything about the node that the parameters and the instance's position decide.
type NodeSpec struct {
	// Plan builds the topology from the members the address exchange announced; every
	// instance calls it with the same members and gets the same plan.
	Plan func(p *Params, members []topology.Member) (*topology.Plan, error)
	// Receiver tells whether a member checks what it receives against what was published
	// to its topics (hub-leaves: the leaves; a mesh: every node).
	Receiver func(n *topology.Node) bool
	// FlowControl: whether nodes pause reading while their outbound queues are full (see
	// node.WithFlowControl). Off where gossip timing is the result.
	FlowControl bool
	// RecordMessages: every node writes the time it published or first received each message
	// (messages.bin), for delivery latency in reports.
	RecordMessages bool
	// NodeOptions are extra node options from the scenario's parameters.
	NodeOptions func(p *Params) ([]node.Option, error)
	// Link returns the shaped link of the instance seq of group (of instances in all), or nil
	// for an unshaped host. It runs before the address exchange, so it can depend only on
	// the parameters and the instance's position.
	Link func(p *Params, group string, seq, instances int) (*link.Link, error)
}
