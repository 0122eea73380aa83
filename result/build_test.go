package result

import (
	"runtime/debug"
	"testing"
)

func TestBuildSettingsOptimized(t *testing.T) {
	cases := []struct {
		name     string
		settings []debug.BuildSetting
		want     bool
		desc     string
	}{
		{"no gcflags", []debug.BuildSetting{{Key: "-compiler", Value: "gc"}, {Key: "CGO_ENABLED", Value: "1"}}, true, "optimized"},
		// Exactly what Testground v0.6.0's exec:go builder passes (pkg/build/exec_go.go).
		{"exec:go", []debug.BuildSetting{{Key: "-buildmode", Value: "exe"}, {Key: "-gcflags", Value: "all=-N -l"}}, false, "unoptimized (-gcflags=all=-N -l)"},
		{"bare -N", []debug.BuildSetting{{Key: "-gcflags", Value: "-N"}}, false, "unoptimized (-gcflags=-N)"},
		{"per package", []debug.BuildSetting{{Key: "-gcflags", Value: "github.com/streamsim/streamsim/codec/...=-N -l"}}, false, "unoptimized (-gcflags=github.com/streamsim/streamsim/codec/...=-N -l)"},
		{"inlining off only", []debug.BuildSetting{{Key: "-gcflags", Value: "all=-l"}}, true, "optimized"},
		{"other flags", []debug.BuildSetting{{Key: "-gcflags", Value: "-m -B"}}, true, "optimized"},
		{"-N in another setting", []debug.BuildSetting{{Key: "-ldflags", Value: "-N"}}, true, "optimized"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, desc := buildSettingsOptimized(c.settings)
			if got != c.want || desc != c.desc {
				t.Fatalf("buildSettingsOptimized(%v) = %v, %q; want %v, %q", c.settings, got, desc, c.want, c.desc)
			}
		})
	}
}
