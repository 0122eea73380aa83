// Package units reads and writes the sizes and rates that parameters, flags and reports
// carry: byte sizes like 64KiB or 1MiB, link rates like 50Mbit.
package units

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSize parses a byte size: a plain integer or an integer with a KiB, MiB or GiB suffix.
func ParseSize(v string) (int, error) {
	num, mult := v, 1
	for _, u := range []struct {
		suffix string
		mult   int
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if strings.HasSuffix(v, u.suffix) {
			num, mult = strings.TrimSuffix(v, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseUint(num, 10, 31)
	if err != nil || int(n) > (1<<31-1)/mult {
		return 0, fmt.Errorf("size %q is not a byte count like 4096, 4KiB, 64KiB or 1MiB", v)
	}
	return int(n) * mult, nil
}

// FormatSize formats n with the largest of GiB, MiB, KiB that divides it, else as a
// plain integer.
func FormatSize(n int) string {
	switch {
	case n > 0 && n%(1<<30) == 0:
		return strconv.Itoa(n>>30) + "GiB"
	case n > 0 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "MiB"
	case n > 0 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n)
}

// BytesForms describes what ParseBytes accepts.
const BytesForms = "a byte count like 8GiB, 512MiB, 64KiB, 1TiB or 1073741824"

// ParseBytes parses a byte count that may be large (a memory budget): a positive integer,
// optionally with a KiB, MiB, GiB or TiB suffix.
func ParseBytes(v string) (int64, error) {
	num, mult := v, int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}} {
		if strings.HasSuffix(v, u.suffix) {
			num, mult = strings.TrimSuffix(v, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 63)
	if err != nil || n <= 0 || n > (1<<63-1)/mult {
		return 0, fmt.Errorf("size %q is not %s", v, BytesForms)
	}
	return n * mult, nil
}

// FormatBytes formats a byte count for people: in the largest of TiB, GiB, MiB, KiB it
// reaches, with up to two decimals ("1.5GiB", "640MiB"), else in bytes.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.mult || -n >= u.mult {
			s := strconv.FormatFloat(float64(n)/float64(u.mult), 'f', 2, 64)
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
			return s + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// ParseBitsPerSec reads a link rate: a non-negative integer with an optional unit kbit,
// Mbit or Gbit (powers of 1000, as Shadow and tc use them) or bit, e.g. "50Mbit", "1Gbit",
// "1024Mbit"; "0" or "unlimited" mean no limit.
func ParseBitsPerSec(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "unlimited" {
		return 0, nil
	}
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"Gbit", 1e9}, {"Mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v < 0 || v > (1<<62)/mult {
		return 0, fmt.Errorf("link rate %q: want a non-negative integer with unit bit, kbit, Mbit or Gbit (e.g. 50Mbit), or unlimited", s)
	}
	return v * mult, nil
}

// FormatBitsPerSec writes a rate the way ParseBitsPerSec reads it, in the largest exact unit.
func FormatBitsPerSec(v int64) string {
	switch {
	case v == 0:
		return "unlimited"
	case v%1e9 == 0:
		return strconv.FormatInt(v/1e9, 10) + "Gbit"
	case v%1e6 == 0:
		return strconv.FormatInt(v/1e6, 10) + "Mbit"
	case v%1e3 == 0:
		return strconv.FormatInt(v/1e3, 10) + "kbit"
	}
	return strconv.FormatInt(v, 10) + "bit"
}
