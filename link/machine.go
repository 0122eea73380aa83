package link

import (
	"os"
	"strconv"
	"strings"
)

// MachineBusy reads the machine's busy and total CPU time (jiffies) from Linux's /proc/stat.
// Busy leaves out idle and iowait only. Niced time counts: niced jobs do not yield enough for
// timing (two fuzzers at nice 19 raised a shaped mesh's p99 goroutine wait from 12.6 ms to
// 335 ms, and made link timing checks miss by 10–90 %). ok is false where /proc/stat cannot
// be read. Timing figures (link accuracy,
// delivery latency) are only valid while the machine is not saturated; callers sample this
// around what they time.
func MachineBusy() (busy, total uint64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, 0, false
	}
	for i, v := range f[1:] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total, true
}
