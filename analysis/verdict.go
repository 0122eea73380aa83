package analysis

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/streamsim/streamsim/result"
)

// Checks is a list of checks' outcome: OK until a problem is recorded.
type Checks struct {
	OK       bool     `json:"ok"`
	Problems []string `json:"problems,omitempty"`
}

// Problem records a failed check.
func (c *Checks) Problem(format string, args ...any) {
	c.OK = false
	c.Problems = append(c.Problems, fmt.Sprintf(format, args...))
}

// Verdict is how every run report ends: its checks, the notes that qualify its figures
// without failing it (an unoptimized build, a saturated machine), and the build the figures
// come from. Its JSON fields sit at the top level of every report.
type Verdict struct {
	Build     string `json:"build"`
	Optimized bool   `json:"optimized"`
	Checks
	Notes []string `json:"notes,omitempty"`
	// Flags say why the run's figures may not stand in an answer or a verdict even where
	// its checks passed (or why they failed): each is also a note or a problem.
	Flags []Flag `json:"flags,omitempty"`
}

// Flag is one reason a run's figures are kept out of the decision page's answer and
// verdicts.
type Flag struct {
	Kind   string `json:"kind"` // one of the Flag* kinds
	Reason string `json:"reason"`
}

// The kinds of flag. A run whose checks failed is flagged FlagFailed by its problems alone.
const (
	FlagFailed      = "failed"
	FlagLate        = "late"
	FlagSaturated   = "machine saturated"
	FlagCalibration = "outside calibration"
)

// Flag records a note that keeps the run's figures out of answers and verdicts.
func (v *Verdict) Flag(kind, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	v.Notes = append(v.Notes, msg)
	v.Flags = append(v.Flags, Flag{Kind: kind, Reason: msg})
}

// Late records a failed check that is lateness (the run did not keep up with its schedule).
func (v *Verdict) Late(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	v.Problem("%s", msg)
	v.Flags = append(v.Flags, Flag{Kind: FlagLate, Reason: msg})
}

// Reasons are every reason the run's figures are kept out of answers: its flags, then each
// problem no flag already names (as FlagFailed).
func (v *Verdict) Reasons() []Flag {
	out := append([]Flag{}, v.Flags...)
	for _, p := range v.Problems {
		named := false
		for _, f := range v.Flags {
			named = named || f.Reason == p
		}
		if !named {
			out = append(out, Flag{Kind: FlagFailed, Reason: p})
		}
	}
	if !v.OK && len(out) == 0 {
		out = append(out, Flag{Kind: FlagFailed, Reason: "the run failed its checks"})
	}
	return out
}

// NewVerdict is a verdict with no problem yet and an optimized build until a node says
// otherwise.
func NewVerdict() Verdict { return Verdict{Optimized: true, Checks: Checks{OK: true}} }

// Note records a qualification of the report's figures.
func (v *Verdict) Note(format string, args ...any) {
	v.Notes = append(v.Notes, fmt.Sprintf(format, args...))
}

// TakeBuild takes the build of a node (or of a run the report joins): the report's is the
// first one's, or the first unoptimized one's (figures are only as good as the worst build
// among them).
func (v *Verdict) TakeBuild(build string, optimized bool) {
	if v.Build == "" || (v.Optimized && !optimized) {
		v.Build, v.Optimized = build, optimized
	}
}

// NoteBuild adds the note every report carries when its CPU figures come from an unoptimized
// build.
func (v *Verdict) NoteBuild() {
	if !v.Optimized {
		v.Note("%s", UnoptimizedNote(v.Build))
	}
}

// UnoptimizedNote is the note on CPU figures from an unoptimized build.
func UnoptimizedNote(build string) string {
	return "CPU figures come from an " + build + " build and are inflated; compare them only with each other"
}

// Err is nil when every check passed, otherwise the problems joined.
func (v *Verdict) Err() error {
	if v.OK {
		return nil
	}
	if len(v.Problems) == 0 {
		return errors.New("the run failed its checks")
	}
	return errors.New(strings.Join(v.Problems, "; "))
}

// WriteFooter prints the end of a report's table: notes, problems, and `result: OK` or
// `result: FAIL`.
func (v *Verdict) WriteFooter(w io.Writer) error {
	for _, n := range v.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, p := range v.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	_, err := fmt.Fprintf(w, "result: %s\n", OKFail(v.OK))
	return err
}

// WriteJSON writes a report as one indented JSON object: every report's --json form.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func OKFail(ok bool) string {
	if ok {
		return "OK"
	}
	return "FAIL"
}

// PercentOf is result.PercentOf of byte counts, nil when b is zero (JSON leaves it out).
func PercentOf(a, b int64) *float64 {
	v, ok := result.PercentOf(float64(a), float64(b))
	if !ok {
		return nil
	}
	return &v
}

// AddDrops adds a node's pubsub losses to dropsBy by kind (dropped_rpcs, undeliverable,
// rejected) and returns their sum.
func AddDrops(dropsBy map[string]int64, n *result.NodeSummary) int64 {
	dropsBy["dropped_rpcs"] += n.Pubsub.DroppedRPCs
	dropsBy["undeliverable"] += n.Pubsub.Undeliverable
	for _, v := range n.Pubsub.Rejected {
		dropsBy["rejected"] += v
	}
	return n.Pubsub.Drops()
}

// MB formats a byte count in decimal units with three significant digits.
func MB(n int64) string {
	v := float64(n)
	for _, u := range []string{"B", "kB", "MB", "GB"} {
		if v < 999.5 || u == "GB" {
			switch {
			case u == "B":
				return fmt.Sprintf("%d B", n)
			case v < 9.995:
				return fmt.Sprintf("%.2f %s", v, u)
			case v < 99.95:
				return fmt.Sprintf("%.1f %s", v, u)
			}
			return fmt.Sprintf("%.0f %s", v, u)
		}
		v /= 1000
	}
	return ""
}
