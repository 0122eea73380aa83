package result

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A written summary carries the process's origin, and reading it back keeps it.
func TestWriteSummaryRecordsOrigin(t *testing.T) {
	path := filepath.Join(t.TempDir(), SummaryFile)
	if err := WriteSummary(path, &NodeSummary{Scenario: "mesh", Role: "node", Group: "nodes"}); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSummary(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Origin == nil {
		t.Fatal("summary has no origin")
	}
	if want := strings.Join(os.Args, " "); s.Origin.Command != want {
		t.Errorf("command %q, want %q", s.Origin.Command, want)
	}
	if host, _ := os.Hostname(); s.Origin.Host != host {
		t.Errorf("host %q, want %q", s.Origin.Host, host)
	}
	if s.Origin.Cores < 1 || !strings.HasPrefix(s.Origin.GoVersion, "go") {
		t.Errorf("origin %+v: want cores >= 1 and a Go version", s.Origin)
	}
}
