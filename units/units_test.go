package units

import (
	"strings"
	"testing"
)

func TestSizes(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		back string
	}{
		{"0", 0, "0"}, {"4096", 4096, "4KiB"}, {"4KiB", 4096, "4KiB"}, {"64KiB", 65536, "64KiB"},
		{"1MiB", 1 << 20, "1MiB"}, {"1GiB", 1 << 30, "1GiB"}, {"1000", 1000, "1000"}, {"1536KiB", 1536 << 10, "1536KiB"},
	} {
		n, err := ParseSize(c.in)
		if err != nil || n != c.n {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, n, err, c.n)
		}
		if got := FormatSize(c.n); got != c.back {
			t.Errorf("FormatSize(%d) = %q, want %q", c.n, got, c.back)
		}
	}
	for _, in := range []string{"", "KiB", "-1", "4 KiB", "4kib", "1.5MiB", "4GiB", "0x10"} {
		if n, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, n)
		}
	}
}

func TestBitsPerSec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		out  string
	}{
		{"50Mbit", 50e6, "50Mbit"}, {"1024Mbit", 1024e6, "1024Mbit"}, {"1Gbit", 1e9, "1Gbit"},
		{"10 Mbit", 10e6, "10Mbit"}, {"1500kbit", 1500e3, "1500kbit"}, {"123bit", 123, "123bit"},
		{"8000", 8000, "8kbit"}, {"0", 0, "unlimited"}, {"unlimited", 0, "unlimited"},
	} {
		got, err := ParseBitsPerSec(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseBitsPerSec(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
			continue
		}
		if s := FormatBitsPerSec(got); s != tc.out {
			t.Errorf("FormatBitsPerSec(%d) = %q, want %q", got, s, tc.out)
		}
	}
	for _, in := range []string{"", "-5Mbit", "5 MB", "1.5Mbit", "Mbit", "50mbit", "99999999999Gbit"} {
		if _, err := ParseBitsPerSec(in); err == nil || !strings.Contains(err.Error(), "Mbit") {
			t.Errorf("ParseBitsPerSec(%q): %v, want an error listing the units", in, err)
		}
	}
}
