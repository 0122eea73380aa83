// Package bubble enters a testing/synctest bubble from an ordinary program, the virtual
// clock's way in for `streamsim run` (Go has synctest.Test in tests only). It is a package of
// its own so that only the programs that run the virtual clock link it: the CLI does, the
// Testground plan (whose instances are processes on the real clock) does not.
package bubble

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/streamsim/streamsim/sim/network"
)

// Run runs f in a testing/synctest bubble from an ordinary program (streamsim run
// --clock virtual): Go has no synctest.Run outside tests, so it enters one through
// testing.MainStart with a test of its own. Tests call synctest.Test themselves and give the
// embedded runner that (Embedded.Bubble). The program's own flags must be parsed already:
// testing parses flag.CommandLine, which is parsed here with no arguments. testing's PASS/FAIL
// line goes nowhere; a panic in f is returned as an error.
func Run(f func()) (err error) {
	if !flag.CommandLine.Parsed() {
		flag.CommandLine.Parse(nil)
	}
	var ran bool
	var panicked, stragglers any
	test := testing.InternalTest{Name: "streamsim-virtual-clock", F: func(t *testing.T) {
		// synctest.Test panics when f has returned and goroutines it started are still
		// blocked (a pubsub writer in its first write's hold, a stream's release waiting for
		// that writer): after a finished run that must not cost the run's figures.
		defer func() {
			if r := recover(); r != nil {
				stragglers = r
			}
		}()
		synctest.Test(t, func(*testing.T) {
			defer func() { panicked = recover() }()
			f()
			ran = true
			// Goroutines the run leaves behind end on timers of their own (a first write's
			// hold ends by MaxHold): time passes for them here, at no cost in wall time.
			time.Sleep(bubbleLinger)
		})
	}}
	m := testing.MainStart(bubbleDeps{}, []testing.InternalTest{test}, nil, nil, nil)
	null, oerr := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if oerr != nil {
		return oerr
	}
	defer null.Close()
	network.StdoutMu.Lock()
	saved := os.Stdout
	os.Stdout = null
	network.StdoutMu.Unlock()
	code := m.Run()
	network.StdoutMu.Lock()
	os.Stdout = saved
	network.StdoutMu.Unlock()
	switch {
	case panicked == nil && ran && stragglers != nil:
		// The run ended and wrote its outputs; what remained blocked held no figure.
		fmt.Fprintf(os.Stderr, "warning: virtual clock: goroutines of the run were still blocked %v after it ended (%v); its figures are complete\n", bubbleLinger, stragglers)
		return nil
	case panicked != nil:
		return fmt.Errorf("virtual clock: the run panicked: %v", panicked)
	case stragglers != nil:
		return fmt.Errorf("virtual clock: the run never returned: %v", stragglers)
	case code != 0 || !ran:
		return fmt.Errorf("virtual clock: the bubble failed (exit code %d): a goroutine of the run outlived it or every goroutine blocked on a non-durable wait", code)
	}
	return nil
}

// bubbleLinger is the simulated time a virtual run's bubble waits, after the run returned,
// for the goroutines it left behind to end: longer than any hold (network.MaxHold).
const bubbleLinger = network.MaxHold + time.Second

// corpusEntry is testing's fuzz corpus entry as its deps interface spells it (an alias, so
// the methods below match that interface).
type corpusEntry = struct {
	Parent     string
	Path       string
	Data       []byte
	Values     []any
	Generation int
	IsSeed     bool
}

// bubbleDeps is the test-deps value testing.MainStart wants (testing/internal/testdeps cannot
// be imported): a plain run, no profiles, no fuzzing, no coverage.
type bubbleDeps struct{}

var errBubbleDeps = errors.New("not supported in a virtual-clock run")

func (bubbleDeps) ImportPath() string                          { return "" }
func (bubbleDeps) ModulePath() string                          { return "" }
func (bubbleDeps) MatchString(pat, str string) (bool, error)   { return true, nil }
func (bubbleDeps) SetPanicOnExit0(bool)                        {}
func (bubbleDeps) StartCPUProfile(io.Writer) error             { return errBubbleDeps }
func (bubbleDeps) StopCPUProfile()                             {}
func (bubbleDeps) StartTestLog(io.Writer)                      {}
func (bubbleDeps) StopTestLog() error                          { return nil }
func (bubbleDeps) WriteProfileTo(string, io.Writer, int) error { return errBubbleDeps }
func (bubbleDeps) CoordinateFuzzing(time.Duration, int64, time.Duration, int64, int, []corpusEntry, []reflect.Type, string, string) error {
	return errBubbleDeps
}
func (bubbleDeps) RunFuzzWorker(func(corpusEntry) error) error {
	return errBubbleDeps
}
func (bubbleDeps) ReadCorpus(string, []reflect.Type) ([]corpusEntry, error) {
	return nil, nil
}
func (bubbleDeps) CheckCorpus([]any, []reflect.Type) error { return nil }
func (bubbleDeps) ResetCoverage()                          {}
func (bubbleDeps) SnapshotCoverage()                       {}
func (bubbleDeps) InitRuntimeCoverage() (string, func(string, string) (string, error), func() float64) {
	return "", nil, nil
}

// RunFromTest is Run from inside a test binary: synctest.Test wants a *testing.T,
// which a benchmark does not have, so the bubble is entered through testing.MainStart as
// streamsim run does, with the go test flags that would make that inner run repeat, filter or
// profile it, or write the outer binary's files, set to neutral values for its duration.
func RunFromTest(f func()) error {
	neutral := map[string]string{"test.run": "", "test.skip": "", "test.count": "1", "test.bench": "", "test.list": "",
		"test.cpuprofile": "", "test.memprofile": "", "test.blockprofile": "", "test.mutexprofile": "", "test.trace": "",
		"test.shuffle": "off", "test.cpu": "", "test.v": "false",
		// go test's own log of the outer binary: the inner run would open it again and close it
		// under the outer run ("testing: can't write …/testlog.txt: file already closed").
		"test.testlogfile": "", "test.coverprofile": "", "test.gocoverdir": ""}
	saved := map[string]string{}
	for name, v := range neutral {
		if fl := flag.Lookup(name); fl != nil {
			saved[name] = fl.Value.String()
			flag.Set(name, v)
		}
	}
	defer func() {
		for name, v := range saved {
			flag.Set(name, v)
		}
	}()
	return Run(f)
}
