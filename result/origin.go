package result

import (
	"os"
	"runtime"
	"runtime/debug"
	"strings"
)

// Origin says where a summary's figures come from: the command that ran, the source commit
// it was built from, and the machine. Reports print it beside every figure (streamsim report
// --html states it in each section), so a page never shows a number without its run.
type Origin struct {
	// Command is the process's command line (an embedded A/B's whole command; a Testground
	// instance's plan binary).
	Command string `json:"command"`
	// Commit is the VCS revision the binary was built from ("" when the toolchain recorded
	// none, as `go run` outside a module checkout), with "+dirty" when the tree had changes.
	Commit    string `json:"commit,omitempty"`
	Host      string `json:"host,omitempty"`
	GoVersion string `json:"go"`
	OS        string `json:"os"`
	Cores     int    `json:"cores"` // runtime.NumCPU
}

// CurrentOrigin is this process's origin.
func CurrentOrigin() *Origin {
	o := &Origin{Command: strings.Join(os.Args, " "), GoVersion: runtime.Version(),
		OS: runtime.GOOS + "/" + runtime.GOARCH, Cores: runtime.NumCPU()}
	o.Host, _ = os.Hostname()
	if info, ok := debug.ReadBuildInfo(); ok {
		dirty := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				o.Commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if o.Commit != "" && dirty {
			o.Commit += "+dirty"
		}
	}
	return o
}
