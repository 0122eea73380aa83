package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/analysis/page"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/scenarios/neighbourhood"
)

// The neighbourhood's HTML section: figures bound to the report's JSON, and for a codec run
// over several seeds the calibration table with its spread as WriteCalibration prints it.
func TestSection(t *testing.T) {
	raw := map[gossip.Category]int64{gossip.Attestation: 1000, gossip.Control: 500}
	p := &page.Page{}
	var runs []analysis.SectionRun
	for i, label := range []string{"seed1", "seed2"} {
		r := fakeRun(label, raw, map[gossip.Category]float64{gossip.Attestation: 0.5, gossip.Control: 0.9}, 10)
		r.Figures.Codec, r.Figures.Seed, r.Figures.Subnets, r.Figures.Slots, r.Figures.TimeScale = "plain", int64(i+1), 4, 10, 1
		r.Figures.BySlot, r.Figures.Control, r.Figures.ControlOut = fakeSlots(int64(i+1)), fakeControl(0), fakeControl(int64(10*(i+1)))
		for _, c := range []string{"attestation", "control"} {
			r.Figures.Categories = append(r.Figures.Categories, neighbourhoodCategory(c, float64(100*(i+1))))
		}
		var js bytes.Buffer
		if err := r.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		src, err := p.AddSource(label, js.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, analysis.SectionRun{Label: label, Report: r, Src: src})
		if got := r.ABLabel(); got.Seed != int64(i+1) || got.Codec != "plain" {
			t.Errorf("AB label %+v", got)
		}
	}
	s := &page.Section{ID: "nb", Title: "neighbourhood"}
	p.Sections = append(p.Sections, s)
	if err := section(s, runs, nil); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := p.Write(&out); err != nil {
		t.Fatal(err)
	}
	html := out.String()
	for _, want := range []string{
		"calibration over 2 runs (seed1, seed2)",        // WriteCalibration's own table
		"150.0 ± 70.7 (100.0–200.0)",                    // attestation MiB/h over the two seeds
		`data-path="figures.categories.0.mib_per_hour"`, // per-run figures bound to JSON
		`data-path="figures.wire.0.relative_pct"`,
		"Observed node, wire bytes per slot: attestation", "Observed node, wire bytes per slot: control",
		"Observed node, inbound control entries by kind", "Observed node, outbound control entries by kind",
		"Observed node, message ids in outbound control by kind",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("section lacks %q", want)
		}
	}
	if strings.Contains(html, "wire bytes per slot: block") {
		t.Error("a per-slot chart of a category no run carried")
	}
	// Every chart mark is bound to its run's JSON and shows the value there; the new charts'
	// marks are every per-slot interval of both categories in and out, and every control kind
	// sent, zero included, in each run.
	trees := map[string]any{}
	for _, r := range runs {
		trees[r.Src.ID] = jsonTree(t, r.Src.JSON())
	}
	mark := regexp.MustCompile(`class="mark (?:bar|point)"[^>]*? data-src="(s\d+)" data-path="([^"]+)"[^>]*? data-value="([^"]+)"`)
	seen := map[string]bool{}
	for _, m := range mark.FindAllStringSubmatch(html, -1) {
		v, ok := page.Lookup(trees[m[1]], m[2])
		want, _ := v.(json.Number).Float64()
		got, err := strconv.ParseFloat(m[3], 64)
		if !ok || err != nil || got != want {
			t.Errorf("mark %s %s shows %s, its JSON holds %v", m[1], m[2], m[3], v)
		}
		seen[m[1]+" "+m[2]] = true
	}
	for _, r := range runs {
		for j := range 2 {
			for _, dir := range []string{"in", "out"} {
				for _, c := range []string{"attestation", "control"} {
					if p := fmt.Sprintf("%s figures.by_slot.%d.%s.%s.wire_bytes", r.Src.ID, j, dir, c); !seen[p] {
						t.Errorf("no mark bound to %s", p)
					}
				}
			}
		}
		for _, k := range gossip.ControlKinds() {
			for _, f := range []string{"control_in", "control_out"} {
				if p := r.Src.ID + " figures." + f + "." + k.String() + ".entries"; !seen[p] {
					t.Errorf("no mark bound to %s", p)
				}
			}
		}
		for _, k := range []string{"ihave", "iwant", "idontwant"} {
			if p := r.Src.ID + " figures.control_out." + k + ".ids"; !seen[p] {
				t.Errorf("no mark bound to %s", p)
			}
		}
	}
	// The control axes are counts: integer ticks only.
	for _, title := range []string{"Observed node, outbound control entries by kind", "Observed node, inbound control entries by kind"} {
		i := strings.Index(html, title)
		if i < 0 {
			continue
		}
		svg := html[strings.LastIndex(html[:i], "<svg"):]
		svg = svg[:strings.Index(svg, "</svg>")]
		for _, tk := range regexp.MustCompile(`class="tick"[^>]*>([^<]*)<`).FindAllStringSubmatch(svg, -1) {
			if strings.ContainsAny(tk[1], ".,") {
				t.Errorf("%s: tick %q is not an integer", title, tk[1])
			}
		}
	}
}

// fakeSlots is two measured slots of attestation and control bytes in and out, k times a base.
func fakeSlots(k int64) []result.SlotBytes {
	cb := func(raw, wire int64) result.CategoryBytes {
		return result.CategoryBytes{RawBytes: k * raw, WireBytes: k * wire}
	}
	return []result.SlotBytes{
		{Slot: 1, In: map[gossip.Category]result.CategoryBytes{gossip.Attestation: cb(5e5, 3e5), gossip.Control: cb(2e5, 1e5)},
			Out: map[gossip.Category]result.CategoryBytes{gossip.Attestation: cb(4e5, 2e5), gossip.Control: cb(1e5, 7e4)}},
		{Slot: 2.4, In: map[gossip.Category]result.CategoryBytes{gossip.Attestation: cb(6e5, 3.5e5), gossip.Control: cb(3e5, 1.5e5)},
			Out: map[gossip.Category]result.CategoryBytes{gossip.Attestation: cb(5e5, 2.5e5), gossip.Control: cb(1e5, 6e4)}},
	}
}

// fakeControl is every control kind, IDONTWANT at zero, the others base plus a few entries.
func fakeControl(base int64) map[string]result.ControlBytes {
	out := map[string]result.ControlBytes{}
	for i, k := range gossip.ControlKinds() {
		v := result.ControlBytes{}
		if k != gossip.IDontWant {
			v = result.ControlBytes{RawBytes: 100 * (base + int64(i)), WireBytes: 60 * (base + int64(i)), Entries: base + int64(i), IDs: 3 * (base + int64(i))}
		}
		out[k.String()] = v
	}
	return out
}

func jsonTree(t *testing.T, js []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func neighbourhoodCategory(c string, mib float64) neighbourhood.CategorySummary {
	return neighbourhood.CategorySummary{Category: c, MiBh: mib, RecordingMiBh: 3188, Copies: fptr(2), RecordingCopies: 1.6}
}

func fptr(v float64) *float64 { return &v }
