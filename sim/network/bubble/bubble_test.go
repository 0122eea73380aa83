package bubble

import (
	"strings"
	"testing"
	"time"

	"github.com/streamsim/streamsim/sim/network"
)

// A run that returns while goroutines it started are still blocked (as a pubsub writer in
// its first write's hold and a stream release waiting for it were once, after an hour-long
// full form) keeps its result: goroutines on timers end during the linger, and one blocked
// for good is a warning, not a failure.
func TestRunInBubbleStragglers(t *testing.T) {
	var holdEnded bool
	err := RunFromTest(func() {
		go func() { // a hold polling until its deadline, as linkLog.holdFirst does
			deadline := time.Now().Add(network.MaxHold)
			for time.Now().Before(deadline) {
				time.Sleep(2 * time.Millisecond)
			}
			holdEnded = true
		}()
		never := make(chan struct{})
		go func() { <-never }() // blocked for good
	})
	if err != nil {
		t.Fatalf("a finished run with stragglers: %v", err)
	}
	if !holdEnded {
		t.Error("the hold did not end within the bubble's linger")
	}
}

// A run that never returns (every goroutine blocked, main included) is an error naming the
// deadlock.
func TestRunInBubbleDeadlock(t *testing.T) {
	err := RunFromTest(func() {
		never := make(chan struct{})
		<-never
	})
	if err == nil || !strings.Contains(err.Error(), "deadlock") {
		t.Fatalf("err = %v, want the deadlock named", err)
	}
}
