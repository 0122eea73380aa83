package replay

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/trace"
	"github.com/streamsim/streamsim/units"
)

// A sweep runs within a memory budget. Every configuration holds a live encoder and decoder
// per stream direction it replays, for the whole replay: on a topic-streams layout that is
// thousands of streams, and with a 2 MiB zstd window 6.2 MiB each. Before it replays, the
// sweep estimates what each configuration's streams will hold (the bytes through each stream,
// from a sizing pass over the traces, against each codec's state measured at that fill),
// and plans: configurations run together while they fit, then in turn, one pass over the
// traces each; a configuration that does not fit on its own replays its stream directions in
// groups, a pass each. Results are the same, figure for figure: each configuration sees the
// same frames in the same order and batches whatever else runs beside it, and a configuration
// replayed in groups adds its wire bytes up in the frames' order at its last group.

// DefaultMemoryBudget is a sweep's memory budget unless one is given.
const DefaultMemoryBudget int64 = 8 << 30

// planShare is the share of the budget the estimated live heap may take: the Go collector,
// given the budget as its memory limit, collects before the heap outgrows it, and needs
// room above the live heap to do so without running all the time.
const planShare = 0.75

// Per-stream allowances beside the measured codec state.
const (
	// frameBufferFactor times a stream's largest frame: the encoder's and decoder's buffers
	// grow to the largest unit (the calibration's frames are at most calibrationBigFrame).
	frameBufferFactor = 4
	// streamOverhead is the replay's own bookkeeping per stream direction (structures, name,
	// map entries).
	streamOverhead = 1 << 10
	// dictBuilderBytes is the dictionary builder's peak heap on its largest sample
	// (dictSampleBytes): 261 MiB measured (klauspost/compress/dict, 8 MiB of frames).
	dictBuilderBytes = 320 << 20
)

// MemoryPlan is how a sweep fits its budget: the estimate and the passes over the traces.
type MemoryPlan struct {
	BudgetBytes int64 `json:"budget_bytes"`
	// OutsideBytes is the process's resident memory the Go runtime does not manage (the
	// program's code and data), measured, with a margin: the rest of the budget is the Go
	// runtime's memory limit and the plan's.
	OutsideBytes int64 `json:"outside_go_bytes"`
	// FixedBytes is held through the whole replay: the live heap measured after the passes
	// that scan and count the traces (streams, message ids, the views' summaries), the frames
	// in flight and every configuration's buffers.
	FixedBytes int64 `json:"fixed_bytes"`
	// TrainingBytes is the estimated peak while dictionaries are trained (before the replay).
	TrainingBytes int64 `json:"training_bytes,omitempty"`
	// AllAtOnceBytes is the estimate with every configuration replayed at once.
	AllAtOnceBytes int64 `json:"all_at_once_bytes"`
	// PeakBytes is the estimated peak of the plan: the largest pass, or training.
	PeakBytes int64      `json:"peak_bytes"`
	Passes    []PassPlan `json:"passes"`
}

// PassPlan is one pass over the traces: the configurations it replays (with "[group i/n]"
// when a configuration's stream directions are split) and its estimate.
type PassPlan struct {
	Jobs  []string `json:"jobs"`
	Bytes int64    `json:"estimated_bytes"`
}

// BudgetError is a budget too small for the smallest unit a sweep can replay: one stream
// direction of one configuration beside what every pass holds.
type BudgetError struct {
	Budget int64
	// Need is the estimate of the smallest pass (Fixed, what every pass holds, and the
	// largest stream direction) and Fits the smallest budget that holds it.
	Need, Fixed, Fits int64
	// Unit says what the smallest pass holds.
	Unit string
	// AllAtOnce is the estimate with every configuration at once, and AllFits its budget.
	AllAtOnce, AllFits int64
}

// ErrMemoryBudget is wrapped by a BudgetError.
var ErrMemoryBudget = errors.New("memory budget too small")

func (e *BudgetError) Error() string {
	return fmt.Sprintf("memory budget %s is too small for even one configuration: the smallest pass (%s) needs an estimated %s; a budget of %s would fit (%s would replay every configuration at once, estimated %s)",
		units.FormatBytes(e.Budget), e.Unit, units.FormatBytes(e.Need),
		units.FormatSize(int(e.Fits)), units.FormatSize(int(e.AllFits)), units.FormatBytes(e.AllAtOnce))
}

func (e *BudgetError) Unwrap() error { return ErrMemoryBudget }

// budgetFor is the budget whose planned share holds need beside the process's memory
// outside the Go heap, rounded up to a readable size.
func budgetFor(need, outside int64) int64 {
	b := int64(float64(need)/planShare) + outside + 1
	step := int64(64 << 20)
	switch {
	case b > 16<<30:
		step = 1 << 30
	case b > 4<<30:
		step = 256 << 20
	}
	return (b + step - 1) / step * step
}

// streamSize is what the counting pass learns of one stream direction of a corpus: the bytes
// through it, its largest frame and the most bytes it carries in one of the corpus's batches
// (its feed holds one batch's units).
type streamSize struct {
	bytes, maxFrame, maxBatch int64
	batch                     int64 // the batch inBatch counts
	inBatch                   int64
}

// corpusSizes are a corpus's stream directions in the order they first carry a frame, with
// its batches cut as the replay cuts them.
type corpusSizes struct {
	order    []string
	streams  map[string]*streamSize
	frames   int64
	maxFrame int64
	// The batch being filled: its number, frames and bytes.
	batch                   int64
	batchFrames, batchBytes int
}

func (c *corpusSizes) add(stream string, n int) {
	s := c.streams[stream]
	if s == nil {
		s = &streamSize{batch: -1}
		c.streams[stream] = s
		c.order = append(c.order, stream)
	}
	s.bytes += int64(n)
	s.maxFrame = max(s.maxFrame, int64(n))
	c.maxFrame = max(c.maxFrame, int64(n))
	c.frames++
	if s.batch != c.batch {
		s.batch, s.inBatch = c.batch, 0
	}
	s.inBatch += int64(n)
	s.maxBatch = max(s.maxBatch, s.inBatch)
	c.batchFrames++
	c.batchBytes += n
}

// endFrame ends a recorded frame's part of the corpus: the replay cuts its batches there.
func (c *corpusSizes) endFrame() {
	if c.batchFrames >= batchFrames || c.batchBytes >= batchBytes {
		c.batch++
		c.batchFrames, c.batchBytes = 0, 0
	}
}

// sizes is the counting pass's result: every corpus's streams.
type sizes struct {
	corpus map[corpusKey]*corpusSizes
}

// countPass reads the traces' evaluated part once and lays every frame out for every view as
// the replay will (view filter, payload modes, topic streams): it counts each view's traffic
// (its summary, the frames it leaves out, IHAVE recurrence), and learns each corpus's stream
// directions, the bytes through each and its largest frame, for the memory plan. The replay
// passes then lay the same frames out again without counting.
func countPass(paths []string, sc *scan, views []*view, jobs []*job) (*sizes, error) {
	sz := &sizes{corpus: map[corpusKey]*corpusSizes{}}
	wantSSZ, wantTopics := wanted(views, jobs)
	for _, j := range jobs {
		if sz.corpus[j.key] == nil {
			sz.corpus[j.key] = &corpusSizes{streams: map[string]*streamSize{}}
		}
	}
	var buf []byte
	for ti, path := range paths {
		var index int64 // of the frame in its trace
		err := readTrace(path, nil, func(_ *trace.Reader, f trace.Frame) error {
			index++
			if !sc.keep[ti][f.Stream] || f.At < sc.split[ti] {
				return nil
			}
			name := sc.names[ti][f.Stream]
			for vi, v := range views {
				l, kept, skipped, err := v.layOut(name, sc.owners[ti][f.Stream], f.Data, wantSSZ[vi], wantTopics[vi], &buf)
				if err != nil {
					// A frame the view cannot read (a malformed or cut-short RPC) or a layout
					// cannot carry is left out of every configuration and of the baseline alike,
					// counted and, the first few, named.
					sk := &v.sum.Skipped
					sk.Frames++
					sk.Bytes += int64(skipped)
					if len(sk.First) < skippedExamples {
						sk.First = append(sk.First, fmt.Sprintf("trace %s stream %d frame #%d at %v: %v", path, f.Stream, index, f.At, err))
					}
					continue
				}
				if !kept {
					continue
				}
				if err := v.count(&l.p); err != nil {
					return err
				}
				for _, layout := range Layouts {
					for pi, payload := range []string{gossip.PayloadSSZSnappy, gossip.PayloadSSZ} {
						if c := sz.corpus[corpusKey{vi, payload, layout}]; c != nil {
							for _, f := range l.frames(layout, pi) {
								c.add(f.stream, len(f.data))
							}
							c.endFrame()
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return sz, nil
}

// wanted tells per view whether any job needs its raw-SSZ frames and its topic streams.
func wanted(views []*view, jobs []*job) (wantSSZ, wantTopics []bool) {
	wantSSZ, wantTopics = make([]bool, len(views)), make([]bool, len(views))
	for _, j := range jobs {
		if j.key.payload == gossip.PayloadSSZ {
			wantSSZ[j.key.view] = true
		}
		if j.key.layout == LayoutTopicStreams {
			wantTopics[j.key.view] = true
		}
	}
	return wantSSZ, wantTopics
}

// streamEstimate is the memory one stream direction of a configuration holds: its codecs'
// measured state at its bytes, buffers for its largest frame, the feed between encoder and
// decoder (the stream's units of one batch at most, as an appended slice: up to twice that,
// with room for units a little larger than their frames) and the replay's bookkeeping.
func streamEstimate(curve stateCurve, s *streamSize) int64 {
	feed := 2 * (s.maxBatch + s.maxBatch/64 + 64)
	return curve.of(s.bytes) + frameBufferFactor*s.maxFrame + feed + streamOverhead
}

// unit is what a pass replays of one job: all of its streams (groups 1) or one group.
type unit struct {
	job   *job
	group int
	bytes int64
}

func (u unit) label(views []*view) string {
	s := fmt.Sprintf("%s (%s, %s, %s)", u.job.cfg.Name, views[u.job.key.view].name, u.job.key.payload, u.job.key.layout)
	if u.job.groups > 1 {
		s += fmt.Sprintf(" [group %d/%d]", u.group+1, u.job.groups)
	}
	return s
}

// planMemory estimates every job's memory and packs the jobs into passes within the budget,
// splitting a job that does not fit on its own into groups of stream directions. It sets
// each job's groups. heapAfterScan is the live heap measured before.
func planMemory(budget, outside, heapAfterScan int64, sz *sizes, views []*view, jobs []*job) ([][]unit, *MemoryPlan, error) {
	plan := &MemoryPlan{BudgetBytes: budget, OutsideBytes: outside}
	usable := int64(planShare * float64(budget-outside))
	// Frames in flight: per corpus, the batch being filled, the four a job's channel holds
	// and the one it works on, each as frames and their descriptions.
	var inFlight int64
	for _, c := range sz.corpus {
		inFlight += 6 * (batchBytes + c.maxFrame + batchFrames*200)
	}
	// Each job's own buffers: the batch decoded back, its lists.
	var jobBuffers int64
	for _, j := range jobs {
		jobBuffers += 2*(batchBytes+sz.corpus[j.key].maxFrame) + batchFrames*16
	}
	plan.FixedBytes = heapAfterScan + inFlight + jobBuffers
	var dictCorpora int64
	seenDict := map[corpusKey]bool{}
	for _, j := range jobs {
		if k := (corpusKey{j.key.view, j.key.payload, LayoutOneStream}); j.cfg.Dict && !seenDict[k] {
			seenDict[k] = true
			dictCorpora++
		}
	}
	if dictCorpora > 0 {
		plan.TrainingBytes = heapAfterScan + dictCorpora*(trainKeepBytes+trainKeepBytes/4) + dictBuilderBytes
	}

	// Every job's streams, estimated.
	type est struct {
		streams []int64
		total   int64
	}
	ests := make([]est, len(jobs))
	all := plan.FixedBytes
	var worst int64
	var worstJob *job
	for i, j := range jobs {
		c := sz.corpus[j.key]
		curve := measuredState(j.cfg)
		e := est{streams: make([]int64, len(c.order))}
		for k, name := range c.order {
			s := c.streams[name]
			if j.cfg.None {
				e.streams[k] = streamOverhead
			} else {
				e.streams[k] = streamEstimate(curve, s)
			}
			e.total += e.streams[k]
			if one := e.streams[k] + jobOverhead(c, 2); one > worst {
				worst, worstJob = one, j
			}
		}
		ests[i] = e
		all += e.total
	}
	plan.AllAtOnceBytes = max(all, plan.TrainingBytes)
	// The smallest pass: what every pass holds and one stream direction.
	need := max(plan.FixedBytes+worst, plan.TrainingBytes)
	if need > usable {
		what := "what every pass holds"
		if worstJob != nil {
			what = "one stream direction of " + unitName(worstJob, views) + " beside what every pass holds"
		}
		if plan.TrainingBytes > plan.FixedBytes+worst {
			what = fmt.Sprintf("training the zstd dictionaries: %d samples of the training part, then the builder", dictCorpora)
		}
		return nil, nil, &BudgetError{Budget: budget, Need: need, Fixed: plan.FixedBytes, Fits: budgetFor(need, outside), Unit: what,
			AllAtOnce: plan.AllAtOnceBytes, AllFits: budgetFor(plan.AllAtOnceBytes, outside)}
	}

	// Units: a job whole, or its streams in groups that fit a pass on their own.
	room := usable - plan.FixedBytes
	var todo []unit
	for i, j := range jobs {
		e := ests[i]
		if e.total+jobOverhead(sz.corpus[j.key], 1) <= room || j.cfg.None {
			j.groups = 1
			todo = append(todo, unit{job: j, bytes: e.total})
			continue
		}
		// Split: frames' wire bytes are kept between groups (4 bytes a frame).
		wires := jobOverhead(sz.corpus[j.key], 2)
		c := sz.corpus[j.key]
		j.groupOf = map[string]int{}
		group, size := 0, int64(0)
		for k, name := range c.order {
			if size > 0 && size+e.streams[k]+wires > room {
				todo = append(todo, unit{job: j, group: group, bytes: size + wires})
				group, size = group+1, 0
			}
			j.groupOf[name] = group
			size += e.streams[k]
		}
		todo = append(todo, unit{job: j, group: group, bytes: size + wires})
		j.groups = group + 1
	}
	// Passes: the units in order, while they fit.
	var passes [][]unit
	var cur []unit
	var curBytes int64
	for _, u := range todo {
		if len(cur) > 0 && curBytes+u.bytes > room {
			passes = append(passes, cur)
			cur, curBytes = nil, 0
		}
		cur = append(cur, u)
		curBytes += u.bytes
	}
	if len(cur) > 0 {
		passes = append(passes, cur)
	}
	plan.PeakBytes = plan.TrainingBytes
	for _, p := range passes {
		pp := PassPlan{Bytes: plan.FixedBytes}
		for _, u := range p {
			pp.Jobs = append(pp.Jobs, u.label(views))
			pp.Bytes += u.bytes
		}
		plan.Passes = append(plan.Passes, pp)
		plan.PeakBytes = max(plan.PeakBytes, pp.Bytes)
	}
	return passes, plan, nil
}

// jobOverhead is a job's own memory beyond its streams: with groups > 1, the wire bytes of
// every frame of its corpus kept between groups.
func jobOverhead(c *corpusSizes, groups int) int64 {
	if groups <= 1 {
		return 0
	}
	return 4 * c.frames
}

func unitName(j *job, views []*view) string {
	return fmt.Sprintf("%s (view %s, payload %s, layout %s)", j.cfg.Name, views[j.key.view].name, j.key.payload, j.key.layout)
}

// withMemoryLimit sets the Go runtime's memory limit to the budget less the memory outside
// it while f runs (lower only: a smaller limit set by the caller stays), so the collector
// keeps the heap inside it.
func withMemoryLimit(budget, outside int64, f func() error) error {
	prev := debug.SetMemoryLimit(-1)
	limit := min(prev, max(1, int64(0.9*float64(budget))-outside))
	debug.SetMemoryLimit(limit)
	defer debug.SetMemoryLimit(prev)
	return f()
}

// String summarizes the plan in one line.
func (p *MemoryPlan) String() string {
	if p == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "memory budget %s: estimated peak %s in %d pass(es) over the traces (all configurations at once: %s)",
		units.FormatBytes(p.BudgetBytes), units.FormatBytes(p.PeakBytes), len(p.Passes), units.FormatBytes(p.AllAtOnceBytes))
	return b.String()
}

// outsideMargin is added to the measured memory outside the Go runtime: code paged in later.
const outsideMargin = 16 << 20

// outsideGo measures the process's resident memory that the Go runtime does not manage (the
// program's code and data, C libraries): resident bytes less the runtime's mapped, unreleased
// memory, plus outsideMargin. Off Linux it is the margin alone.
func outsideGo() int64 {
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return outsideMargin
	}
	f := strings.Fields(string(statm))
	if len(f) < 2 {
		return outsideMargin
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return outsideMargin
	}
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	goMem := int64(s[0].Value.Uint64() - s[1].Value.Uint64())
	return max(0, pages*int64(os.Getpagesize())-goMem) + outsideMargin
}
