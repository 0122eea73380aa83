package main

// Scenarios and report kinds that live outside packages sim and analysis register when
// their packages are linked; the CLI links them all here (plans/main.go does the same for
// the scenarios).
import (
	_ "github.com/streamsim/streamsim/neighbourhood"
	_ "github.com/streamsim/streamsim/neighbourhood/report"
)
