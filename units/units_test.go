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

func TestBytes(t *testing.T) {
	for in, want := range map[string]int64{"8GiB": 8 << 30, "512MiB": 512 << 20, "1TiB": 1 << 40, "4096": 4096, "3KiB": 3 << 10} {
		got, err := ParseBytes(in)
		if err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
		if back, err := ParseBytes(FormatSize(int(want))); err != nil || back != want {
			t.Errorf("FormatSize(%d) = %q does not parse back (%d, %v)", want, FormatSize(int(want)), back, err)
		}
	}
	for _, bad := range []string{"", "0", "-1GiB", "8GB", "8 GiB", "1.5GiB", "9999999TiB"} {
		if _, err := ParseBytes(bad); err == nil || !strings.Contains(err.Error(), "8GiB") {
			t.Errorf("ParseBytes(%q): error %v, want one naming the forms", bad, err)
		}
	}
	for n, want := range map[int64]string{1536 << 20: "1.5GiB", 640 << 20: "640MiB", 100: "100B", 8 << 30: "8GiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
