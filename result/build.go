package result

import (
	"runtime/debug"
	"strings"
)

// BuildOptimized reports whether the running binary was compiled with the Go compiler's
// optimizations on, from the build settings the toolchain records in the binary. Testground's
// exec:go builder compiles plans with -gcflags=all=-N -l (optimizations and inlining off), which
// inflates every CPU figure; such results must say so. The string describes the build in a few
// words for reports ("optimized", or "unoptimized (-gcflags=all=-N -l)"). A binary without build
// information (rare: stripped or very old toolchains) counts as optimized, with a note saying so.
func BuildOptimized() (bool, string) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return true, "optimized (no build info in the binary)"
	}
	return buildSettingsOptimized(info.Settings)
}

// buildSettingsOptimized is BuildOptimized on given settings.
func buildSettingsOptimized(settings []debug.BuildSetting) (bool, string) {
	for _, s := range settings {
		if s.Key != "-gcflags" {
			continue
		}
		if gcflagsDisableOptimization(s.Value) {
			return false, "unoptimized (-gcflags=" + s.Value + ")"
		}
	}
	return true, "optimized"
}

// gcflagsDisableOptimization reports whether a -gcflags value passes -N (disable optimizations)
// to any package: "all=-N -l", "-N", "example.com/pkg=-N -l". A per-package -N still marks the
// binary, since the codec or the node may be among the packages it covers.
func gcflagsDisableOptimization(value string) bool {
	for _, f := range strings.Fields(value) {
		if i := strings.IndexByte(f, '='); i >= 0 && !strings.HasPrefix(f, "-") {
			f = f[i+1:] // pattern=flag
		}
		if f == "-N" || strings.HasPrefix(f, "-N=") && f != "-N=false" {
			return true
		}
	}
	return false
}
