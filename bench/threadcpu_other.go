//go:build !linux

package bench

import "time"

// ThreadCPU is unavailable here: thread CPU figures stay zero.
func ThreadCPU() (time.Duration, bool) { return 0, false }

// ClockCost is 0 where there is no thread CPU clock.
func ClockCost() time.Duration { return 0 }
