package main

// Every scenario (scenarios/all) and every scenario's report register when their packages are
// linked; the CLI links them here (plans/main.go links the scenarios only: the plan binary has
// no reports).
import (
	_ "github.com/streamsim/streamsim/scenarios/all"
	_ "github.com/streamsim/streamsim/scenarios/hubleaves/report"
	_ "github.com/streamsim/streamsim/scenarios/mesh/report"
	_ "github.com/streamsim/streamsim/scenarios/neighbourhood/report"
	"github.com/streamsim/streamsim/sim/network/bubble"
	"github.com/streamsim/streamsim/sim/runner"
)

// The CLI runs the virtual clock: its embedded runs enter their bubble through package bubble.
func init() { runner.DefaultBubble = bubble.Run }
