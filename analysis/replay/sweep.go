package replay

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streamsim/streamsim/bench"
	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/trace"
	"github.com/streamsim/streamsim/workload"
)

// Config is one column of a sweep grid: a stream codec, or one of the two references.
type Config struct {
	// Name is the canonical name: "none", "plain", a codec spec (codec.Spec.String) or
	// "zstd+dict" followed by the zstd spec's parameters.
	Name string
	// None is no compression at all: the frames with raw SSZ payloads as they are.
	None bool
	// Spec is the stream codec (plain for the baseline).
	Spec codec.Spec
	// Dict trains a zstd dictionary on the training part and evaluates zstd with it.
	Dict bool
}

// ConfigForms lists the accepted configuration forms.
var ConfigForms = "none, zstd+dict[:<level>[:<window>]], or a codec spec: " + codec.Forms

// ParseConfig parses one grid entry.
func ParseConfig(s string) (Config, error) {
	switch {
	case s == "none":
		return Config{Name: "none", None: true}, nil
	case s == "zstd+dict" || strings.HasPrefix(s, "zstd+dict:"):
		spec, err := codec.Parse("zstd" + strings.TrimPrefix(s, "zstd+dict"))
		if err != nil {
			return Config{}, fmt.Errorf("sweep configuration %q: %w", s, err)
		}
		return Config{Name: "zstd+dict" + strings.TrimPrefix(spec.Explicit(), "zstd"), Spec: spec, Dict: true}, nil
	}
	spec, err := codec.Parse(s)
	if err != nil {
		return Config{}, fmt.Errorf("sweep configuration %q: %w", s, err)
	}
	return Config{Name: spec.Explicit(), Spec: spec}, nil
}

// ParseGrid parses a comma-separated list of configurations.
func ParseGrid(list string) ([]Config, error) {
	var out []Config
	seen := map[string]bool{}
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		c, err := ParseConfig(s)
		if err != nil {
			return nil, err
		}
		if !seen[c.Name] {
			seen[c.Name] = true
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("empty sweep grid")
	}
	return out, nil
}

// DefaultGridList is the default grid: the proposal's rows plus the history sizes between.
const DefaultGridList = "none,plain," +
	"snappy-stream:4KiB:fast,snappy-stream:16KiB:fast,snappy-stream:64KiB:fast,snappy-stream:256KiB:fast,snappy-stream:1MiB:fast," +
	"snappy-stream:64KiB:better,zstd:3:2MiB,zstd+dict:3:2MiB"

// DefaultGrid returns the parsed default grid.
func DefaultGrid() []Config {
	g, err := ParseGrid(DefaultGridList)
	if err != nil {
		panic(err) // a constant
	}
	return g
}

// Options configure a sweep.
type Options struct {
	Grid []Config
	// Payloads are the payload modes inside compressed streams (gossip.PayloadSSZSnappy,
	// gossip.PayloadSSZ). none and plain do not depend on it and are replayed once.
	Payloads []string
	// Profiles are the views: each is the traces filtered to a workload profile's topics
	// (TopicFilter). "" or "recorded" keeps the traces as recorded.
	Profiles []string
	// TrainSplit is the share of each trace's time used only to train dictionaries; every
	// configuration is evaluated on the rest, with streams starting empty at the split.
	TrainSplit float64
	// Direction keeps only stream directions of this direction (trace.DirectionIn or
	// trace.DirectionOut, from the recording node's view); "" keeps all. The proposal's
	// figures are inbound.
	Direction string
	// Layouts are the stream layouts replayed (LayoutOneStream, LayoutTopicStreams; default
	// one-stream). Every layout is measured against the same baseline: today's plain bytes
	// on one stream.
	Layouts []string
	// Workers run configurations in parallel (default GOMAXPROCS).
	Workers int
	// MemoryBudget bounds the sweep's memory (default DefaultMemoryBudget): configurations
	// replay together while their estimated state fits, then in turn (MemoryPlan).
	MemoryBudget int64
	// Plan, if set, is called with the memory plan before the replay starts.
	Plan func(*MemoryPlan)
	// Progress, if set, is called after each configuration finishes.
	Progress func(done, total int, last string)
}

// Result is one configuration replayed over one view in one payload mode.
type Result struct {
	View    string `json:"view"`
	Payload string `json:"payload"` // "" for plain, "ssz" for none
	Config  string `json:"config"`
	Layout  string `json:"layout"`
	Streams int    `json:"streams"`
	Frames  int64  `json:"frames"`
	// InputBytes went into the encoders (and came out of the decoders).
	InputBytes int64 `json:"input_bytes"`
	// Bytes are the wire bytes per category (each unit's bytes shared out like its frame's)
	// and PlainBytes today's bytes of the same frames.
	Bytes      [gossip.NumCategories]float64 `json:"wire_bytes"`
	PlainBytes [gossip.NumCategories]int64   `json:"plain_bytes"`
	Total      float64                       `json:"wire_total"`
	PlainTotal int64                         `json:"plain_total"`
	// Relative is Bytes/PlainBytes in percent per category (NaN-free: 0 when no plain bytes)
	// and RelativeTotal the same in total.
	Relative      [gossip.NumCategories]float64 `json:"relative"`
	RelativeTotal float64                       `json:"relative_total"`
	// The same by direction, inbound then outbound (the recording node's view).
	DirBytes         [2][gossip.NumCategories]float64 `json:"direction_wire_bytes"`
	DirTotal         [2]float64                       `json:"direction_wire_total"`
	DirPlainTotal    [2]int64                         `json:"direction_plain_total"`
	DirRelativeTotal [2]float64                       `json:"direction_relative_total"`
	// Codec time over the whole replay, per input byte: wall clock of the loops that only
	// encode or decode (frames), so it grows when other processes take the cores.
	EncodeTime     time.Duration `json:"encode_ns"`
	DecodeTime     time.Duration `json:"decode_ns"`
	EncodeNsPerB   float64       `json:"encode_ns_per_byte"`
	DecodeNsPerB   float64       `json:"decode_ns_per_byte"`
	EncodeMBPerSec float64       `json:"encode_mb_per_s"`
	DecodeMBPerSec float64       `json:"decode_mb_per_s"`
	// Thread CPU time of the same loops (Linux), which does not grow when other processes
	// take the cores: the codecs' own work (plain's figure is the copy into the stream),
	// less the meter's. MeterCPUNsPerB is the meter's: one thread-CPU clock read per loop
	// of a batch of frames (a system call, bench.ClockCost), per input byte.
	EncodeCPUNsPerB float64 `json:"encode_thread_cpu_ns_per_byte"`
	DecodeCPUNsPerB float64 `json:"decode_thread_cpu_ns_per_byte"`
	MeterCPUNsPerB  float64 `json:"meter_thread_cpu_ns_per_byte"`
	encodeCPU       time.Duration
	decodeCPU       time.Duration
	batches         int64 // timed loops of each direction
	// Memory per stream direction: encoder and decoder state (codec.Stats.StateBytes), the
	// largest over the view's streams.
	EncoderStateBytes int64 `json:"encoder_state_bytes"`
	DecoderStateBytes int64 `json:"decoder_state_bytes"`
	DictBytes         int   `json:"dict_bytes,omitempty"`
	// Memory is the codec state by peer and node, as the recording nodes hold it.
	Memory   Memory `json:"memory"`
	Verified bool   `json:"verified"` // decoded output equals the input, frame for frame
	// Proposal holds the proposal's published figure where one exists, by "total" or
	// category name, with the difference.
	Proposal map[string]Comparison `json:"proposal,omitempty"`
	// AtProposalMix is this configuration's per-category figures weighted by the proposal's
	// inbound MiB/h per category, with control at the proposal's own control figure (this
	// traffic may have no control): what the total would be with the recording's traffic mix.
	// 0 when the proposal published no control figure for the configuration or view.
	AtProposalMix float64 `json:"at_proposal_mix,omitempty"`
}

// Report is a whole sweep.
type Report struct {
	Traces     []TraceInfo      `json:"traces"`
	Direction  string           `json:"direction,omitempty"` // "" for every direction
	TrainSplit float64          `json:"train_split"`
	Grid       []string         `json:"grid"`
	Payloads   []string         `json:"payloads"`
	Layouts    []string         `json:"layouts"`
	Views      []TrafficSummary `json:"views"`
	Results    []Result         `json:"results"`
	Workers    int              `json:"workers"`
	Build      string           `json:"build"`
	// Origin is the command, commit and machine of the sweep.
	Origin *result.Origin `json:"origin,omitempty"`
	// Notes warn about views a trace cannot fully provide (a view wanting topics the trace's
	// recording profile did not subscribe to).
	Notes []string `json:"notes,omitempty"`
	// Memory is the plan the sweep ran under: its budget, estimate and passes.
	Memory  *MemoryPlan   `json:"memory,omitempty"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

// ErrMismatch is wrapped when a configuration does not decode back to its input.
var ErrMismatch = errors.New("round trip mismatch")

// Sweep replays every stream direction of the traces through the grid, for every view and
// payload mode. Any decode mismatch fails the sweep.
func Sweep(paths []string, o Options) (*Report, error) {
	start := time.Now()
	if len(o.Grid) == 0 {
		o.Grid = DefaultGrid()
	}
	if len(o.Payloads) == 0 {
		o.Payloads = []string{gossip.PayloadSSZSnappy, gossip.PayloadSSZ}
	}
	for _, p := range o.Payloads {
		if _, err := gossip.ParsePayload(p); err != nil {
			return nil, err
		}
	}
	if len(o.Profiles) == 0 {
		o.Profiles = []string{"all-subnets", "default"}
	}
	if o.TrainSplit < 0 || o.TrainSplit >= 1 {
		return nil, fmt.Errorf("train split %g: want 0 <= split < 1", o.TrainSplit)
	}
	for _, c := range o.Grid {
		if c.Dict && o.TrainSplit == 0 {
			return nil, fmt.Errorf("configuration %s needs a training part: train split is 0", c.Name)
		}
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.MemoryBudget == 0 {
		o.MemoryBudget = DefaultMemoryBudget
	}
	if o.MemoryBudget < 0 {
		return nil, fmt.Errorf("memory budget %d: want a positive byte count", o.MemoryBudget)
	}
	if len(o.Layouts) == 0 {
		o.Layouts = []string{LayoutOneStream}
	}
	layouts, err := ParseLayouts(strings.Join(o.Layouts, ","))
	if err != nil {
		return nil, err
	}
	o.Layouts = layouts // each once: a layout given twice would replay twice
	switch o.Direction {
	case "", trace.DirectionIn, trace.DirectionOut:
	default:
		return nil, fmt.Errorf("direction %q: want %s, %s or empty", o.Direction, trace.DirectionIn, trace.DirectionOut)
	}
	// The whole sweep runs under the budget: the Go runtime's memory limit is set from it
	// before the first read.
	outside := outsideGo()
	var rep *Report
	err = withMemoryLimit(o.MemoryBudget, outside, func() error {
		var err error
		rep, err = sweep(paths, o, start, outside)
		return err
	})
	return rep, err
}

// sweep is Sweep once its options are checked.
func sweep(paths []string, o Options, start time.Time, outside int64) (*Report, error) {
	sc, err := scanTraces(paths, o.TrainSplit, o.Direction)
	if err != nil {
		return nil, err
	}
	if o.Direction != "" && sc.frames == 0 {
		return nil, fmt.Errorf("no %s stream directions in the traces", o.Direction)
	}
	rep := &Report{Traces: sc.infos, Direction: o.Direction, TrainSplit: o.TrainSplit, Payloads: o.Payloads, Layouts: o.Layouts, Workers: o.Workers}
	_, rep.Build = result.BuildOptimized()
	rep.Origin = result.CurrentOrigin()
	for _, c := range o.Grid {
		rep.Grid = append(rep.Grid, c.Name)
	}
	// Per hour of simulated time: a recorder's frame times are wall time, which at time
	// scale s is 1/s of the simulated time (its header says the scale).
	var evalDuration time.Duration
	for i, ti := range sc.infos {
		evalDuration += time.Duration(float64(ti.Duration-sc.split[i]) * timeScaleOf(ti))
	}

	var views []*view
	var jobs []*job
	for _, name := range o.Profiles {
		v := &view{name: name, seen: map[string]bool{}, opened: map[string]bool{}, ihave: newRecurrence()}
		if name == "" || name == "recorded" {
			v.name = "recorded"
		} else {
			prof, err := workload.ParseProfile(name)
			if err != nil {
				return nil, err
			}
			v.filter = &TopicFilter{Wants: prof.Wants, Known: knownFor(sc.topics, prof.Wants)}
			rep.Notes = append(rep.Notes, viewCoverage(sc.infos, prof)...)
		}
		v.sum.View = v.name
		vi := len(views)
		views = append(views, v)
		for _, layout := range o.Layouts {
			for _, c := range o.Grid {
				switch {
				case c.None && layout != LayoutOneStream:
					// none un-Snappies the payloads of RPC frames; a topic stream's TopicRPC
					// frames are not RPC frames. Today's layout carries the figure.
				case c.None:
					jobs = append(jobs, newJob(c, corpusKey{vi, gossip.PayloadSSZ, layout}, v.name))
				case c.Spec.IsPlain() && !c.Dict:
					jobs = append(jobs, newJob(c, corpusKey{vi, gossip.PayloadSSZSnappy, layout}, v.name))
				default:
					for _, p := range o.Payloads {
						jobs = append(jobs, newJob(c, corpusKey{vi, p, layout}, v.name))
					}
				}
			}
		}
	}
	// The views are counted, and every corpus's streams sized, in one pass; the memory plan
	// comes from those sizes and the heap that pass leaves.
	sz, err := countPass(paths, sc, views, jobs)
	if err != nil {
		return nil, err
	}
	for _, v := range views {
		v.ihave.r.Forget() // its figures are counted
	}
	passes, plan, err := planMemory(o.MemoryBudget, outside, heapLive(), sz, views, jobs)
	if err != nil {
		return nil, err
	}
	rep.Memory = plan
	if o.Plan != nil {
		o.Plan(plan)
	}
	wantSSZ, wantTopics := wanted(views, jobs)
	err = func() error {
		if err := trainDicts(paths, sc, views, jobs); err != nil {
			return err
		}
		var done int64
		total := sc.frames * int64(len(passes))
		var progress func(int64)
		if o.Progress != nil {
			progress = func(n int64) {
				done += n
				if done%20000 == 0 {
					o.Progress(int(done), int(total), fmt.Sprintf("pass %d of %d", done/max(1, sc.frames)+1, len(passes)))
				}
			}
		}
		for _, pass := range passes {
			if err := replayPass(paths, sc, views, pass, wantSSZ, wantTopics, o, progress); err != nil {
				return err
			}
		}
		if o.Progress != nil {
			o.Progress(int(total), int(total), "done")
		}
		return nil
	}()
	if err != nil {
		return nil, err
	}
	for _, v := range views {
		if v.sum.Frames == 0 {
			return nil, fmt.Errorf("view %s: no frames left to evaluate", v.name)
		}
		v.sum.Duration = evalDuration
		v.sum.IHave = v.ihave.r.Sum()
		if evalDuration > 0 {
			for c := range v.sum.Bytes {
				v.sum.PerHour[c] = float64(v.sum.Bytes[c]) / (1 << 20) / evalDuration.Hours()
			}
		}
		rep.Views = append(rep.Views, v.sum)
		if sk := v.sum.Skipped; sk.Frames > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("view %s: %d frame(s), %d bytes today, cannot be read or laid out as the layouts need and are left out of every configuration and the baseline; the first: %s",
				v.name, sk.Frames, sk.Bytes, strings.Join(sk.First, "; ")))
		}
	}
	for _, j := range jobs {
		r := j.r
		if r.Layout == LayoutOneStream {
			// The proposal's figures are for one stream per direction.
			r.Proposal = compare(&r)
			r.AtProposalMix = atProposalMix(&r)
		}
		rep.Results = append(rep.Results, r)
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// batchFrames and batchBytes bound the frames of one corpus that go to its configurations at
// a time: a batch's compressed and decoded bytes stay in the caches beside the codecs' state
// (with 512 frames of 5 KB of control, 2.5 MB of feed evicted the encoder's table between
// frames and doubled its time).
// bench runs its stream codecs in the same batches (bench.BatchLen).
const (
	batchFrames = bench.BatchFrames
	batchBytes  = bench.BatchBytes
)

// replayPass reads every trace once and hands each evaluated frame, laid out for each view
// and payload mode, to every unit of the pass replaying that corpus. Jobs run on their own
// goroutines (each on its own OS thread, so thread CPU time measures its codec work), at most
// o.Workers at a time, a batch at a time. A corpus's batches are cut by its frames alone, so
// every pass gives a job the same batches. The views were counted by countPass: a pass lays
// frames out (opening topic streams afresh) without counting them.
func replayPass(paths []string, sc *scan, views []*view, pass []unit, wantSSZ, wantTopics []bool, o Options, progress func(int64)) error {
	byCorpus := map[corpusKey][]int{}
	inPass := make([]bool, len(views))
	for i, u := range pass {
		byCorpus[u.job.key] = append(byCorpus[u.job.key], i)
		inPass[u.job.key.view] = true
	}
	for _, v := range views {
		v.opened = map[string]bool{}
	}
	chans := make([]chan []frameIn, len(pass))
	errs := make([]error, len(pass))
	tokens := make(chan struct{}, o.Workers)
	var wg sync.WaitGroup
	for i, u := range pass {
		j := u.job
		j.startGroup(u.group)
		chans[i] = make(chan []frameIn, 4)
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for batch := range chans[i] {
				if errs[i] != nil {
					continue // drain
				}
				tokens <- struct{}{}
				errs[i] = j.batch(batch)
				<-tokens
			}
			if errs[i] == nil {
				if beforeFinish != nil {
					beforeFinish()
				}
				errs[i] = j.finish(views[j.key.view].sum)
			}
			if errs[i] != nil {
				errs[i] = fmt.Errorf("%s (%s, %s): %w", j.cfg.Name, views[j.key.view].name, j.key.payload, errs[i])
			}
		}()
	}
	pending := map[corpusKey][]frameIn{}
	pendingBytes := map[corpusKey]int{}
	flush := func(k corpusKey) {
		if b := pending[k]; len(b) > 0 {
			for _, ui := range byCorpus[k] {
				chans[ui] <- b // read-only from here on: every job of the corpus shares it
			}
			pending[k], pendingBytes[k] = nil, 0
		}
	}
	readErr := func() error {
		var buf []byte
		for ti, path := range paths {
			err := readTrace(path, nil, func(_ *trace.Reader, f trace.Frame) error {
				if !sc.keep[ti][f.Stream] {
					return nil
				}
				if progress != nil {
					progress(1)
				}
				if f.At < sc.split[ti] {
					return nil // training part: trainDicts used it
				}
				name := sc.names[ti][f.Stream]
				for vi, v := range views {
					if !inPass[vi] {
						continue
					}
					l, kept, _, err := v.layOut(name, sc.owners[ti][f.Stream], f.Data, wantSSZ[vi], wantTopics[vi], &buf)
					if err != nil || !kept {
						continue // countPass counted what the view leaves out
					}
					for _, layout := range Layouts {
						for pi, payload := range []string{gossip.PayloadSSZSnappy, gossip.PayloadSSZ} {
							k := corpusKey{vi, payload, layout}
							if len(byCorpus[k]) == 0 {
								continue
							}
							for _, f := range l.frames(layout, pi) {
								pending[k] = append(pending[k], f)
								pendingBytes[k] += len(f.data)
							}
							if len(pending[k]) >= batchFrames || pendingBytes[k] >= batchBytes {
								flush(k)
							}
						}
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	}()
	// Every corpus's last batch, in the same order in every pass.
	for _, k := range sortedCorpora(pending) {
		flush(k)
	}
	for _, c := range chans {
		close(c)
	}
	wg.Wait()
	return errors.Join(append([]error{readErr}, errs...)...)
}

// beforeFinish, if set (tests), runs when a job has replayed its pass's frames and before it
// closes its streams: its codec state is at its largest.
var beforeFinish func()

// sortedCorpora returns m's keys in a fixed order.
func sortedCorpora(m map[corpusKey][]frameIn) []corpusKey {
	keys := make([]corpusKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b corpusKey) int {
		return cmp.Or(cmp.Compare(a.view, b.view), cmp.Compare(a.payload, b.payload), cmp.Compare(a.layout, b.layout))
	})
	return keys
}

// trainDicts trains the dictionary of every job that needs one on its corpus's training
// part (the frames before each trace's split), read in one pass and sampled evenly.
func trainDicts(paths []string, sc *scan, views []*view, jobs []*job) error {
	// A dictionary is trained on a view's recorded frames in one payload mode, whatever
	// the layout it then serves (under topic streams, every stream loads it).
	dictKey := func(k corpusKey) corpusKey { return corpusKey{k.view, k.payload, LayoutOneStream} }
	need := map[corpusKey]*trainSampler{}
	for _, j := range jobs {
		if j.cfg.Dict {
			need[dictKey(j.key)] = &trainSampler{}
		}
	}
	if len(need) == 0 {
		return nil
	}
	var buf []byte
	for ti, path := range paths {
		err := readTrace(path, nil, func(_ *trace.Reader, f trace.Frame) error {
			if !sc.keep[ti][f.Stream] || f.At >= sc.split[ti] {
				return nil
			}
			for vi, v := range views {
				s, sszS := need[corpusKey{vi, gossip.PayloadSSZSnappy, LayoutOneStream}], need[corpusKey{vi, gossip.PayloadSSZ, LayoutOneStream}]
				if s == nil && sszS == nil {
					continue
				}
				p, kept, err := v.prepare(sc.names[ti][f.Stream], sc.owners[ti][f.Stream], f.Data, sszS != nil, &buf)
				if err != nil {
					continue // not a sample; the evaluated part counts the frames it leaves out
				}
				if !kept {
					continue
				}
				if s != nil {
					s.add(p.snappy.stream, p.snappy.data)
				}
				if sszS != nil {
					sszS.add(p.ssz.stream, p.ssz.data)
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("training part: %w", err)
		}
	}
	type dictID struct {
		k     corpusKey
		level int
	}
	trained := map[dictID][]byte{}
	for _, j := range jobs {
		if !j.cfg.Dict {
			continue
		}
		id := dictID{dictKey(j.key), j.cfg.Spec.ZstdLevel}
		d, ok := trained[id]
		if !ok {
			var err error
			if d, err = trainDict(need[id.k].frames(), j.cfg.Spec.ZstdLevel); err != nil {
				return fmt.Errorf("%s (%s, %s): %w", j.cfg.Name, views[j.key.view].name, j.key.payload, err)
			}
			trained[id] = d
		}
		j.dict, j.r.DictBytes = d, len(d)
	}
	return nil
}

// viewCoverage notes the traces whose recording profile (workload traces say it in their
// header) lacks topics the view's profile wants: filtering cannot add what was not recorded.
func viewCoverage(infos []TraceInfo, view workload.Profile) []string {
	var notes []string
	for _, ti := range infos {
		name := ti.Params["profile"]
		if name == "" {
			continue
		}
		rec, err := workload.ParseProfile(name)
		if err != nil {
			continue
		}
		if n, err := strconv.Atoi(ti.Params["custody_columns"]); err == nil && n != len(rec.Columns) {
			if rec, err = rec.WithCustody(n); err != nil {
				continue
			}
		}
		var missing []string
		for _, topic := range view.Topics("00000000") {
			if !rec.Wants(topic) {
				_, n, _ := gossip.ParseTopic(topic)
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			notes = append(notes, fmt.Sprintf("view %s: trace %s was recorded with profile %s, which lacks %d of the view's topics (%s); the view is incomplete",
				view.Name, ti.Path, name, len(missing), strings.Join(missing[:min(len(missing), 4)], ", ")))
		}
	}
	return notes
}

var percentOf = result.PercentOf

// timeScaleOf is the time scale a trace was recorded at (its header's time_scale; 1 when it
// has none, as workload traces, whose times are simulated already).
func timeScaleOf(ti TraceInfo) float64 {
	if v, err := strconv.ParseFloat(ti.Params["time_scale"], 64); err == nil && v > 0 {
		return v
	}
	return 1
}
