package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"text/template"

	"github.com/streamsim/streamsim/scenarios/hubleaves"

	"github.com/BurntSushi/toml"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/sim/runner"
)

// The structs below mirror the parts of Testground v0.6.0's manifest and composition types
// (pkg/api/manifest.go, pkg/api/composition.go) that these checks need, with the same TOML
// keys and the same TOML library version.

type manifest struct {
	Name      string
	Builders  map[string]map[string]interface{} `toml:"builders"`
	Runners   map[string]map[string]interface{} `toml:"runners"`
	TestCases []struct {
		Name      string
		Instances struct {
			Min     int `toml:"min"`
			Max     int `toml:"max"`
			Default int `toml:"default"`
		}
		Params map[string]struct {
			Type    string
			Desc    string `toml:"desc"`
			Unit    string
			Default interface{}
		} `toml:"params"`
	} `toml:"testcases"`
}

type instances struct {
	Count      uint    `toml:"count"`
	Percentage float64 `toml:"percentage"`
}

type runParams struct {
	TestParams map[string]interface{} `toml:"test_params"`
}

type composition struct {
	Global struct {
		Plan           string                 `toml:"plan"`
		Case           string                 `toml:"case"`
		Builder        string                 `toml:"builder"`
		Runner         string                 `toml:"runner"`
		BuildConfig    map[string]interface{} `toml:"build_config"`
		Run            *runParams             `toml:"run"`
		DisableMetrics bool                   `toml:"disable_metrics"`
	} `toml:"global"`
	Groups []struct {
		ID        string    `toml:"id"`
		Instances instances `toml:"instances"`
		Run       runParams `toml:"run"`
	} `toml:"groups"`
	Runs []struct {
		ID         string                 `toml:"id"`
		TestParams map[string]interface{} `toml:"test_params"`
		Groups     []struct {
			ID         string                 `toml:"id"`
			GroupID    string                 `toml:"group_id"`
			Instances  instances              `toml:"instances"`
			TestParams map[string]interface{} `toml:"test_params"`
		} `toml:"groups"`
	} `toml:"runs"`
}

// instanceGroup is one group of one run with its effective parameters, as the daemon hands
// them to instances.
type instanceGroup struct {
	id     string
	count  int
	params map[string]string
}

func loadManifest(t *testing.T) *manifest {
	t.Helper()
	var m manifest
	if _, err := toml.DecodeFile("../manifest.toml", &m); err != nil {
		t.Fatalf("manifest.toml: %v", err)
	}
	return &m
}

// loadComposition runs a composition file through text/template as the Testground client does
// (with an empty environment), then decodes it.
func loadComposition(t *testing.T, path string) *composition {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := template.New(filepath.Base(path)).Parse(string(src))
	if err != nil {
		t.Fatalf("%s: template: %v", path, err)
	}
	var buf bytes.Buffer
	if err := tpl.Execute(&buf, struct{ Env map[string]string }{Env: map[string]string{}}); err != nil {
		t.Fatalf("%s: template: %v", path, err)
	}
	var c composition
	if _, err := toml.Decode(buf.String(), &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &c
}

// manifestDefaults renders a test case's defaults as Testground does: strings as they are,
// other values JSON-encoded (pkg/api/manifest.go, defaultParameters).
func manifestDefaults(t *testing.T, m *manifest, testCase string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, tc := range m.TestCases {
		if tc.Name != testCase {
			continue
		}
		for name, p := range tc.Params {
			switch v := p.Default.(type) {
			case string:
				out[name] = v
			default:
				b, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				out[name] = string(b)
			}
		}
	}
	return out
}

func TestManifestDeclaresThePlan(t *testing.T) {
	m := loadManifest(t)
	if m.Name != "streamsim" {
		t.Errorf("plan name %q, want streamsim", m.Name)
	}
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	module := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(string(gomod), "\n", 2)[0], "module"))
	for _, b := range []string{"exec:go", "docker:go"} {
		cfg, ok := m.Builders[b]
		if !ok {
			t.Errorf("builder %s missing", b)
			continue
		}
		if cfg["enabled"] != true || cfg["exec_pkg"] != "./plans" || cfg["module_path"] != module {
			t.Errorf("builder %s: %v; want enabled, exec_pkg ./plans, module_path %s", b, cfg, module)
		}
	}
	for _, r := range []string{"local:exec", "cluster:k8s"} {
		if cfg, ok := m.Runners[r]; !ok || cfg["enabled"] != true {
			t.Errorf("runner %s missing or not enabled", r)
		}
	}
	// One test case per registered scenario, in the registry's instance bounds.
	table := testcases()
	var names []string
	for _, tc := range m.TestCases {
		names = append(names, tc.Name)
		sc, err := runner.Lookup(tc.Name)
		if err != nil {
			t.Errorf("manifest test case %s: %v", tc.Name, err)
			continue
		}
		if _, ok := table[tc.Name]; !ok {
			t.Errorf("manifest test case %s is not in plans/main.go's table", tc.Name)
		}
		if tc.Instances.Min != sc.MinInstances || tc.Instances.Max != sc.MaxInstances || tc.Instances.Default != sc.DefaultInstances {
			t.Errorf("test case %s: instances %+v; the scenario says min %d max %d default %d", tc.Name, tc.Instances,
				sc.MinInstances, sc.MaxInstances, sc.DefaultInstances)
		}
	}
	var registered []string
	for _, sc := range runner.Scenarios() {
		registered = append(registered, sc.Name)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != strings.Join(registered, ",") {
		t.Errorf("manifest test cases %v; registered scenarios %v", names, registered)
	}
}

// Every test case declares exactly its scenario's parameters, with the scenario's types and
// defaults, and a description.
func TestManifestParamsAreTheScenarios(t *testing.T) {
	m := loadManifest(t)
	for _, tc := range m.TestCases {
		sc, err := runner.Lookup(tc.Name)
		if err != nil {
			continue // reported by TestManifestDeclaresThePlan
		}
		defaults := manifestDefaults(t, m, tc.Name)
		var declared, want []string
		for name, p := range tc.Params {
			declared = append(declared, name)
			if p.Default == nil || strings.TrimSpace(p.Desc) == "" || p.Type == "" {
				t.Errorf("%s: param %s: type %q, default %v, desc %q: all three are required", tc.Name, name, p.Type, p.Default, p.Desc)
			}
		}
		for _, d := range sc.Declared() {
			want = append(want, d.Name)
			mp, ok := tc.Params[d.Name]
			if !ok {
				continue
			}
			if mp.Type != d.Type || defaults[d.Name] != d.Default {
				t.Errorf("%s: param %s: manifest type %q default %q; the scenario declares %q, %q",
					tc.Name, d.Name, mp.Type, defaults[d.Name], d.Type, d.Default)
			}
		}
		sort.Strings(declared)
		sort.Strings(want)
		if strings.Join(declared, ",") != strings.Join(want, ",") {
			t.Errorf("%s: manifest declares %v; the scenario reads %v", tc.Name, declared, want)
		}
		if _, err := sc.ParseParams(defaults); err != nil {
			t.Errorf("%s: manifest defaults do not parse: %v", tc.Name, err)
		}
	}
}

// runGroups resolves a composition into its runs' groups with effective parameters, with
// Testground v0.6.0's precedence (pkg/api/composition_preparation.go): run group, run,
// composition group, global, manifest defaults. A composition without [[runs]] is one run.
func runGroups(t *testing.T, name string, c *composition, defaults map[string]string) map[string][]instanceGroup {
	t.Helper()
	str := func(where string, in map[string]interface{}) map[string]string {
		out := map[string]string{}
		for k, v := range in {
			s, ok := v.(string)
			if !ok {
				t.Errorf("%s: %s: test_params %s = %v is a %T; Testground passes only TOML strings", name, where, k, v, v)
				continue
			}
			if strings.ContainsAny(s, "=|") {
				t.Errorf("%s: %s: test_params %s = %q contains '=' or '|', which the SDK drops", name, where, k, s)
			}
			if _, ok := defaults[k]; !ok {
				t.Errorf("%s: %s: test_params %s is not a manifest parameter", name, where, k)
			}
			out[k] = s
		}
		return out
	}
	merge := func(layers ...map[string]string) map[string]string {
		out := map[string]string{}
		for i := len(layers) - 1; i >= 0; i-- {
			for k, v := range layers[i] {
				out[k] = v
			}
		}
		return out
	}
	var global map[string]string
	if c.Global.Run != nil {
		global = str("global", c.Global.Run.TestParams)
	}
	groups := map[string]map[string]string{}
	counts := map[string]int{}
	for _, g := range c.Groups {
		groups[g.ID] = str("group "+g.ID, g.Run.TestParams)
		counts[g.ID] = int(g.Instances.Count)
	}
	out := map[string][]instanceGroup{}
	if len(c.Runs) == 0 {
		for _, g := range c.Groups {
			out["default"] = append(out["default"], instanceGroup{g.ID, counts[g.ID], merge(groups[g.ID], global, defaults)})
		}
		return out
	}
	for _, r := range c.Runs {
		run := str("run "+r.ID, r.TestParams)
		for _, g := range r.Groups {
			gid := g.GroupID
			if gid == "" {
				gid = g.ID
			}
			base, ok := groups[gid]
			if !ok {
				t.Errorf("%s: run %s: group %s refers to unknown group %s", name, r.ID, g.ID, gid)
				continue
			}
			count := int(g.Instances.Count)
			if count == 0 {
				count = counts[gid]
			}
			own := str("run "+r.ID+" group "+g.ID, g.TestParams)
			out[r.ID] = append(out[r.ID], instanceGroup{g.ID, count, merge(own, run, base, global, defaults)})
		}
	}
	return out
}

func TestCompositionsFitManifestAndScenario(t *testing.T) {
	m := loadManifest(t)
	paths, err := filepath.Glob("../compositions/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"history-sweep-local.toml", "hub-leaves-k8s-ci.toml", "hub-leaves-k8s-large.toml", "hub-leaves-k8s.toml", "hub-leaves-local.toml", "mesh-history-sweep-local.toml", "mesh-k8s-ci.toml", "mesh-k8s.toml", "mesh-local.toml", "neighbourhood-k8s-ci.toml", "neighbourhood-k8s.toml", "neighbourhood-local.toml"}
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("compositions %v, want %v", names, want)
	}
	for _, path := range paths {
		name := filepath.Base(path)
		c := loadComposition(t, path)
		sc, err := runner.Lookup(c.Global.Case)
		if c.Global.Plan != "streamsim" || err != nil {
			t.Errorf("%s: plan %q case %q, want streamsim and a registered scenario", name, c.Global.Plan, c.Global.Case)
			continue
		}
		defaults := manifestDefaults(t, m, sc.Name)
		if _, ok := m.Builders[c.Global.Builder]; !ok {
			t.Errorf("%s: builder %q not in the manifest", name, c.Global.Builder)
		}
		if _, ok := m.Runners[c.Global.Runner]; !ok {
			t.Errorf("%s: runner %q not in the manifest", name, c.Global.Runner)
		}
		if !c.Global.DisableMetrics {
			t.Errorf("%s: disable_metrics must be true: results go to results.out and summary.json, not InfluxDB", name)
		}
		switch c.Global.Runner {
		case "local:exec":
			if c.Global.Builder != "exec:go" {
				t.Errorf("%s: local:exec runs exec:go builds, not %s", name, c.Global.Builder)
			}
		case "cluster:k8s":
			img, _ := c.Global.BuildConfig["build_base_image"].(string)
			if c.Global.Builder != "docker:go" || !strings.HasPrefix(img, "golang:1.26") {
				t.Errorf("%s: cluster:k8s wants docker:go with a Go 1.26 build_base_image; got %s, %q", name, c.Global.Builder, img)
			}
		default:
			t.Errorf("%s: unexpected runner %s", name, c.Global.Runner)
		}

		runs := runGroups(t, name, c, defaults)
		for id, groups := range runs {
			total, hubs, leaves, pubs := 0, 0, 0, 0
			for _, g := range groups {
				total += g.count
				p, err := sc.ParseParams(g.params)
				if err == nil {
					err = sc.Check(p, map[string]int{g.id: g.count})
				}
				if err == nil {
					err = runner.CheckProcessClock(p) // Testground instances are processes
				}
				if err != nil {
					t.Errorf("%s: run %s group %s: %v", name, id, g.id, err)
					continue
				}
				if sc != hubleaves.HubLeaves {
					continue
				}
				switch g.id {
				case hubleaves.GroupHub:
					hubs += g.count
				case hubleaves.GroupPublishers:
					pubs += g.count
					if p.Values[hubleaves.ParamPublishers] != strconv.Itoa(g.count) {
						t.Errorf("%s: run %s: param publishers %s but the group has %d instances", name, id, p.Values[hubleaves.ParamPublishers], g.count)
					}
				default:
					leaves += g.count
					if _, ok := g.params[runner.ParamCodec]; !ok {
						t.Errorf("%s: run %s: leaf group %s sets no codec", name, id, g.id)
					}
					if !strings.HasPrefix(g.id, "leaf-") {
						t.Errorf("%s: run %s: leaf group %s is not named leaf-<index>-<codec>", name, id, g.id)
					}
				}
			}
			if sc == hubleaves.HubLeaves && (hubs != 1 || pubs < 1 || leaves < 1) {
				t.Errorf("%s: run %s: %d hubs, %d publishers, %d leaves; want 1, ≥1, ≥1", name, id, hubs, pubs, leaves)
			}
			if total < sc.MinInstances || total > sc.MaxInstances {
				t.Errorf("%s: run %s: %d instances outside the scenario's [%d, %d]", name, id, total, sc.MinInstances, sc.MaxInstances)
			}
		}
	}
}

// The sweep runs the snappy-stream history sizes the issue names and zstd, each run against a
// plain leaf, and run ids sort in sweep order (Testground runs them sorted by id).
func TestHistorySweepPoints(t *testing.T) {
	m := loadManifest(t)
	c := loadComposition(t, "../compositions/history-sweep-local.toml")
	runs := runGroups(t, "history-sweep-local.toml", c, manifestDefaults(t, m, c.Global.Case))
	var ids []string
	for id := range runs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var got []string
	for _, id := range ids {
		var compressed []string
		plain := 0
		for _, g := range runs[id] {
			if g.id == hubleaves.GroupHub || g.id == hubleaves.GroupPublishers {
				continue
			}
			spec, err := codec.Parse(g.params[runner.ParamCodec])
			if err != nil {
				t.Fatalf("run %s group %s: %v", id, g.id, err)
			}
			if spec.String() == "plain" {
				plain++
			} else {
				compressed = append(compressed, spec.String())
			}
		}
		if plain != 1 || len(compressed) != 1 {
			t.Errorf("run %s: %d plain and %v compressed leaves; want one of each", id, plain, compressed)
			continue
		}
		got = append(got, compressed[0])
	}
	var want []string
	for _, s := range []string{"snappy-stream:4KiB", "snappy-stream:16KiB", "snappy-stream:64KiB", "snappy-stream:256KiB", "snappy-stream:1MiB", "zstd"} {
		spec, err := codec.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, spec.String())
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("sweep points in run order %v, want %v", got, want)
	}
}
