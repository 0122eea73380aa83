package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The plan's instances are processes on the real clock: the binary does not link the
// virtual clock's synctest entry (package bubble), which only the CLI needs.
func TestPlanDoesNotLinkTheBubble(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/streamsim/streamsim/sim/network/bubble" || dep == "testing/synctest" {
			t.Errorf("the plan links %s", dep)
		}
	}
}
