package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/sim/runner"
)

var update = flag.Bool("update", false, "rewrite manifest.toml's test cases from the scenario registry")

// testCasesMarker starts the part of manifest.toml that is generated from the registry.
const testCasesMarker = "# One test case per registered scenario"

// manifestTestCases is manifest.toml's test cases as the scenario registry declares them: one
// per scenario, its instance bounds, every parameter with its type, default, unit and
// description.
func manifestTestCases() string {
	var b strings.Builder
	b.WriteString(testCasesMarker + " (runner.Scenarios), generated from it:\n")
	b.WriteString("# go test ./plans -run TestManifestIsTheRegistry -update rewrites everything below.\n")
	for _, sc := range runner.Scenarios() {
		fmt.Fprintf(&b, "[[testcases]]\nname = %q\ninstances = { min = %d, max = %d, default = %d }\n\n  [testcases.params]\n",
			sc.Name, sc.MinInstances, sc.MaxInstances, sc.DefaultInstances)
		for _, p := range sc.Declared() {
			def := strconv.Quote(p.Default)
			switch p.Type {
			case "int", "float", "bool":
				def = p.Default
			}
			unit := ""
			if p.Unit != "" {
				unit = fmt.Sprintf(", unit = %q", p.Unit)
			}
			fmt.Fprintf(&b, "  %s = { type = %q, default = %s%s, desc = %q }\n", p.Name, p.Type, def, unit, p.Desc)
		}
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// manifest.toml's test cases are the registry's, descriptions and units included (they were
// typed by hand and drifted). With -update the test rewrites them.
func TestManifestIsTheRegistry(t *testing.T) {
	const path = "../manifest.toml"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, testCasesMarker)
	if i < 0 {
		t.Fatalf("%s has no line starting %q before its test cases", path, testCasesMarker)
	}
	want := manifestTestCases()
	if *update {
		if err := os.WriteFile(path, []byte(text[:i]+want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := text[i:]; got != want {
		gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
		for j := 0; j < max(len(gl), len(wl)); j++ {
			var g, w string
			if j < len(gl) {
				g = gl[j]
			}
			if j < len(wl) {
				w = wl[j]
			}
			if g != w {
				t.Fatalf("%s differs from the registry at its test cases' line %d:\n have %s\n want %s\n(go test ./plans -run TestManifestIsTheRegistry -update rewrites it)", path, j+1, g, w)
			}
		}
	}
}
