package result

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// Origin says where a summary's figures come from: the command that ran, the source commit
// it was built from, and the machine. Reports print it beside every figure (streamsim report
// --html states it in each section), so a page never shows a number without its run.
type Origin struct {
	// Command is the process's command line (an embedded A/B's whole command; a Testground
	// instance's plan binary).
	Command string `json:"command"`
	// Commit is the VCS revision the binary was built from, with "+dirty" when the tree had
	// changes. A binary built without VCS stamping (GOFLAGS=-buildvcs=false) gets the
	// revision of the git checkout it runs in, marked "(checkout)"; "" when neither is known.
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
	if o.Commit == "" {
		o.Commit = checkoutCommit()
	}
	return o
}

var checkout struct {
	once   sync.Once
	commit string
}

// checkoutCommit is the working directory's git revision ("" outside a checkout or
// without git), asked once per process.
func checkoutCommit() string {
	checkout.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		rev, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
		if err != nil {
			return
		}
		c := strings.TrimSpace(string(rev))
		if st, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
			c += "+dirty"
		}
		checkout.commit = c + " (checkout)"
	})
	return checkout.commit
}
