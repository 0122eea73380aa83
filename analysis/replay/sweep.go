package replay

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

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
const ConfigForms = "none, zstd+dict[:<level>[:<window>]], or a codec spec: " + codec.Forms

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
	// Workers run configurations in parallel (default GOMAXPROCS).
	Workers int
	// Progress, if set, is called after each configuration finishes.
	Progress func(done, total int, last string)
}

// Result is one configuration replayed over one view in one payload mode.
type Result struct {
	View    string `json:"view"`
	Payload string `json:"payload"` // "" for plain, "ssz" for none
	Config  string `json:"config"`
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
	// Codec CPU over the whole replay, per input byte.
	EncodeTime     time.Duration `json:"encode_ns"`
	DecodeTime     time.Duration `json:"decode_ns"`
	EncodeNsPerB   float64       `json:"encode_ns_per_byte"`
	DecodeNsPerB   float64       `json:"decode_ns_per_byte"`
	EncodeMBPerSec float64       `json:"encode_mb_per_s"`
	DecodeMBPerSec float64       `json:"decode_mb_per_s"`
	// Thread CPU time of the encode and decode loops (Linux), which unlike the codec meters'
	// wall-clock time does not grow when other processes take the cores; it includes the
	// replay's own bookkeeping (plain's figure is that floor).
	EncodeCPUNsPerB float64 `json:"encode_thread_cpu_ns_per_byte"`
	DecodeCPUNsPerB float64 `json:"decode_thread_cpu_ns_per_byte"`
	encodeCPU       time.Duration
	decodeCPU       time.Duration
	// Memory per stream direction: encoder and decoder state (codec.Stats.StateBytes), the
	// largest over the view's streams.
	EncoderStateBytes int64 `json:"encoder_state_bytes"`
	DecoderStateBytes int64 `json:"decoder_state_bytes"`
	DictBytes         int   `json:"dict_bytes,omitempty"`
	Verified          bool  `json:"verified"` // decoded output equals the input, frame for frame
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
	Views      []TrafficSummary `json:"views"`
	Results    []Result         `json:"results"`
	Workers    int              `json:"workers"`
	Build      string           `json:"build"`
	// Notes warn about views a trace cannot fully provide (a view wanting topics the trace's
	// recording profile did not subscribe to).
	Notes   []string      `json:"notes,omitempty"`
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
	switch o.Direction {
	case "", trace.DirectionIn, trace.DirectionOut:
	default:
		return nil, fmt.Errorf("direction %q: want %s, %s or empty", o.Direction, trace.DirectionIn, trace.DirectionOut)
	}
	recs, infos, anyIDs, err := readTraces(paths, o.TrainSplit)
	if err != nil {
		return nil, err
	}
	if o.Direction != "" {
		kept := recs[:0]
		for _, r := range recs {
			if r.stream.Direction == o.Direction {
				kept = append(kept, r)
			}
		}
		if len(kept) == 0 {
			return nil, fmt.Errorf("no %s stream directions in the traces", o.Direction)
		}
		recs = kept
	}
	rep := &Report{Traces: infos, Direction: o.Direction, TrainSplit: o.TrainSplit, Payloads: o.Payloads, Workers: o.Workers}
	_, rep.Build = result.BuildOptimized()
	for _, c := range o.Grid {
		rep.Grid = append(rep.Grid, c.Name)
	}
	var evalDuration time.Duration
	for _, ti := range infos {
		evalDuration += ti.Duration - time.Duration(o.TrainSplit*float64(ti.Duration))
	}

	type job struct {
		cfg    Config
		corpus *corpus
		plain  *corpus // ssz_snappy frames of the same view: the baseline
	}
	var jobs []job
	for _, name := range o.Profiles {
		var filter *TopicFilter
		view := name
		if name == "" || name == "recorded" {
			view = "recorded"
		} else {
			prof, err := workload.ParseProfile(name)
			if err != nil {
				return nil, err
			}
			filter = &TopicFilter{Wants: prof.Wants}
			rep.Notes = append(rep.Notes, viewCoverage(infos, prof)...)
			if anyIDs {
				filter.Known = map[string]bool{}
				for _, rec := range recs {
					for i := range rec.ends {
						if err := addMessageIDs(filter.Known, rec.frame(i), prof.Wants); err != nil {
							return nil, fmt.Errorf("stream %s frame %d: %w", rec.name, i, err)
						}
					}
				}
			}
		}
		corpora, sum, err := buildCorpora(recs, view, filter, []string{gossip.PayloadSSZSnappy, gossip.PayloadSSZ})
		if err != nil {
			return nil, fmt.Errorf("view %s: %w", view, err)
		}
		if sum.Frames == 0 {
			return nil, fmt.Errorf("view %s: no frames left to evaluate", view)
		}
		sum.Duration = evalDuration
		if evalDuration > 0 {
			for c := range sum.Bytes {
				sum.PerHour[c] = float64(sum.Bytes[c]) / (1 << 20) / evalDuration.Hours()
			}
		}
		rep.Views = append(rep.Views, sum)
		byPayload := map[string]*corpus{gossip.PayloadSSZSnappy: corpora[0], gossip.PayloadSSZ: corpora[1]}
		for _, c := range o.Grid {
			switch {
			case c.None:
				jobs = append(jobs, job{cfg: c, corpus: corpora[1], plain: corpora[0]})
			case c.Spec.IsPlain() && !c.Dict:
				jobs = append(jobs, job{cfg: c, corpus: corpora[0], plain: corpora[0]})
			default:
				for _, p := range o.Payloads {
					jobs = append(jobs, job{cfg: c, corpus: byPayload[p], plain: corpora[0]})
				}
			}
		}
	}

	results := make([]Result, len(jobs))
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range min(o.Workers, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // thread CPU time measures this goroutine's work only
			defer runtime.UnlockOSThread()
			for i := range next {
				j := jobs[i]
				results[i], errs[i] = replay(j.cfg, j.corpus, j.plain)
				mu.Lock()
				done++
				if o.Progress != nil {
					o.Progress(done, len(jobs), j.cfg.Name+" ("+j.corpus.view+", "+j.corpus.payload+")")
				}
				mu.Unlock()
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i := range results {
		results[i].Proposal = compare(&results[i])
		results[i].AtProposalMix = atProposalMix(&results[i])
	}
	rep.Results = results
	rep.Elapsed = time.Since(start)
	return rep, nil
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

// unitSink records the bytes each Write brings.
type unitSink struct{ bytes.Buffer }

// replay runs one configuration over a corpus and checks that it decodes back.
func replay(cfg Config, c, plain *corpus) (Result, error) {
	r := Result{View: c.view, Payload: c.payload, Config: cfg.Name, Streams: len(c.streams)}
	if cfg.Spec.IsPlain() && !cfg.None {
		r.Payload = ""
	}
	for _, s := range plain.streams {
		for _, p := range s.parts {
			for cat, n := range p {
				r.PlainBytes[cat] += int64(n)
				r.PlainTotal += int64(n)
			}
		}
	}
	var dictBytes []byte
	if cfg.Dict {
		var err error
		if dictBytes, err = trainDict(c.trainFrames, cfg.Spec.ZstdLevel); err != nil {
			return r, fmt.Errorf("%s (%s, %s): %w", cfg.Name, c.view, c.payload, err)
		}
		r.DictBytes = len(dictBytes)
	}
	r.Verified = true
	for _, s := range c.streams {
		if err := replayStream(cfg, s, dictBytes, &r); err != nil {
			return r, fmt.Errorf("%s (%s, %s) stream %s: %w", cfg.Name, c.view, c.payload, s.name, err)
		}
	}
	for cat := range r.Bytes {
		r.Total += r.Bytes[cat]
		if r.PlainBytes[cat] > 0 {
			r.Relative[cat] = 100 * r.Bytes[cat] / float64(r.PlainBytes[cat])
		}
	}
	if r.PlainTotal > 0 {
		r.RelativeTotal = 100 * r.Total / float64(r.PlainTotal)
	}
	if r.InputBytes > 0 && !cfg.None {
		r.EncodeNsPerB = float64(r.EncodeTime.Nanoseconds()) / float64(r.InputBytes)
		r.DecodeNsPerB = float64(r.DecodeTime.Nanoseconds()) / float64(r.InputBytes)
		if r.EncodeTime > 0 {
			r.EncodeMBPerSec = float64(r.InputBytes) / 1e6 / r.EncodeTime.Seconds()
		}
		if r.DecodeTime > 0 {
			r.DecodeMBPerSec = float64(r.InputBytes) / 1e6 / r.DecodeTime.Seconds()
		}
		r.EncodeCPUNsPerB = float64(r.encodeCPU.Nanoseconds()) / float64(r.InputBytes)
		r.DecodeCPUNsPerB = float64(r.decodeCPU.Nanoseconds()) / float64(r.InputBytes)
	}
	return r, nil
}

// attribute shares n wire bytes out like the frame's categories.
func attribute(r *Result, n int, parts *[gossip.NumCategories]int, frameLen int) {
	if n == 0 || frameLen == 0 {
		return
	}
	scale := float64(n) / float64(frameLen)
	for cat, b := range parts {
		if b != 0 {
			r.Bytes[cat] += float64(b) * scale
		}
	}
}

func replayStream(cfg Config, s *corpusStream, dictBytes []byte, r *Result) error {
	return replayStreamHook(cfg, s, dictBytes, r, nil)
}

// replayStreamHook is replayStream with a hook run between encoding and decoding (tests
// corrupt the input there to check that a mismatch is caught).
func replayStreamHook(cfg Config, s *corpusStream, dictBytes []byte, r *Result, afterEncode func()) error {
	r.Frames += int64(len(s.ends))
	r.InputBytes += int64(len(s.data))
	if cfg.None {
		// No compression: the wire carries the raw-SSZ frames themselves. "Decoding" is what
		// a receiver would do before pubsub sees them: re-Snappy each payload; un-Snappying
		// that again must give the same frame.
		var snappied, back []byte
		for i := range s.ends {
			f := s.frame(i)
			attribute(r, len(f), &s.parts[i], len(f))
			var err error
			if snappied, err = gossip.AppendSnappyFrame(snappied[:0], f); err != nil {
				return fmt.Errorf("frame %d: %w", i, err)
			}
			if back, err = gossip.AppendSSZFrame(back[:0], snappied); err != nil {
				return fmt.Errorf("frame %d: %w", i, err)
			}
			if !bytes.Equal(back, f) {
				return fmt.Errorf("frame %d: %w", i, ErrMismatch)
			}
		}
		return nil
	}
	var sink unitSink
	sink.Grow(len(s.data)/2 + 4096) // most configurations compress; growing is not codec time but slows the replay
	spec := cfg.Spec
	var opts []codec.Option
	if cfg.Dict {
		opts = append(opts, codec.WithDict(dictBytes))
	}
	w := spec.NewWriter(&sink, opts...)
	prev := 0
	last := -1
	cpu0, _ := threadCPU()
	for i := range s.ends {
		f := s.frame(i)
		if _, err := w.Write(f); err != nil {
			return fmt.Errorf("encode frame %d: %w", i, err)
		}
		attribute(r, sink.Len()-prev, &s.parts[i], len(f))
		prev = sink.Len()
		last = i
	}
	encStats := w.(codec.Meter).Stats()
	if err := w.Close(); err != nil {
		return fmt.Errorf("close encoder: %w", err)
	}
	cpu1, _ := threadCPU()
	r.encodeCPU += cpu1 - cpu0
	if tail := sink.Len() - prev; tail > 0 && last >= 0 {
		// A stream's closing bytes (zstd's frame end) count with its last frame.
		attribute(r, tail, &s.parts[last], len(s.frame(last)))
	}
	if closed := w.(codec.Meter).Stats(); closed.Time > encStats.Time {
		encStats.Time = closed.Time
	}
	r.EncodeTime += encStats.Time
	r.EncoderStateBytes = max(r.EncoderStateBytes, encStats.StateBytes)

	if afterEncode != nil {
		afterEncode()
	}
	rd := spec.NewReader(bytes.NewReader(sink.Bytes()), opts...)
	defer rd.Close()
	buf := make([]byte, 0, 64<<10)
	cpu0, _ = threadCPU()
	for i := range s.ends {
		f := s.frame(i)
		if cap(buf) < len(f) {
			buf = make([]byte, len(f))
		}
		buf = buf[:len(f)]
		if _, err := io.ReadFull(rd, buf); err != nil {
			return fmt.Errorf("decode frame %d: %w", i, err)
		}
		if !bytes.Equal(buf, f) {
			return fmt.Errorf("frame %d: %w", i, ErrMismatch)
		}
	}
	var one [1]byte
	if n, err := rd.Read(one[:]); n != 0 || (err != io.EOF && err != nil) {
		return fmt.Errorf("after the last frame: %d more bytes, %v: %w", n, err, ErrMismatch)
	}
	cpu1, _ = threadCPU()
	r.decodeCPU += cpu1 - cpu0
	decStats := rd.(codec.Meter).Stats()
	r.DecodeTime += decStats.Time
	r.DecoderStateBytes = max(r.DecoderStateBytes, decStats.StateBytes)
	return nil
}
