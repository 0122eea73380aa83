package main

// Every scenario (scenarios/all) and every scenario's report register when their packages are
// linked; the CLI links them here (plans/main.go links the scenarios only: the plan binary has
// no reports).
import (
	_ "github.com/streamsim/streamsim/scenarios/all"
	_ "github.com/streamsim/streamsim/scenarios/hubleaves/report"
	_ "github.com/streamsim/streamsim/scenarios/mesh/report"
	_ "github.com/streamsim/streamsim/scenarios/neighbourhood/report"
)
