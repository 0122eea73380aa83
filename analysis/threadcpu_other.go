//go:build !linux

package analysis

import "time"

// threadCPU is unavailable here: thread CPU figures stay zero.
func threadCPU() (time.Duration, bool) { return 0, false }
