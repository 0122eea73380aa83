//go:build !linux

package replay

import "time"

// threadCPU is unavailable here: thread CPU figures stay zero.
func threadCPU() (time.Duration, bool) { return 0, false }
