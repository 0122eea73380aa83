package replay

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/trace"
)

// A sweep streams its traces: nothing holds a trace's frames. A first pass (scan) reads each
// trace's streams, length and published message ids; a training pass, only when a
// configuration trains a dictionary, samples the training part; the replay pass reads every
// trace once more and hands each frame, filtered to each view and converted to each payload
// mode, to every configuration at once, each of which keeps a live encoder and decoder per
// stream. Memory is the codecs' state per stream and configuration, the message ids (for
// views that filter IWANT and IDONTWANT) and a few batches of frames in flight.

// TraceInfo describes one input trace of a sweep.
type TraceInfo struct {
	Path     string            `json:"path"`
	Source   string            `json:"source"`
	Params   map[string]string `json:"params,omitempty"`
	Streams  int               `json:"streams"`
	Frames   int64             `json:"frames"`
	Bytes    int64             `json:"bytes"`
	Duration time.Duration     `json:"duration_ns"` // time of the last frame
}

// scan is what the first pass learns of the traces.
type scan struct {
	infos []TraceInfo
	// split is each trace's training boundary: frames before it train dictionaries only.
	split []time.Duration
	// keep tells, per trace, which stream ids the sweep replays (its direction).
	keep []map[uint32]bool
	// names labels a stream: "<trace index>/<stream id>".
	names []map[uint32]string
	// owners tells, per trace, each stream's node, peer and direction.
	owners []map[uint32]*owner
	// anyIDs: some frame carries IWANT or IDONTWANT, which views filter by message id.
	anyIDs bool
	// topics maps the pubsub id of every published message to its topic (interned).
	topics map[string]string
	frames int64 // replayed frames over every trace
}

// scanTraces reads every trace once: its streams, kept by direction, its length, and the
// message ids views need.
func scanTraces(paths []string, trainSplit float64, direction string) (*scan, error) {
	sc := &scan{}
	for ti, path := range paths {
		var info TraceInfo
		keep, names, owners := map[uint32]bool{}, map[uint32]string{}, map[uint32]*owner{}
		err := readTrace(path, func(r *trace.Reader) {
			h := r.Header()
			info = TraceInfo{Path: path, Source: h.Source, Params: h.Params}
		}, func(r *trace.Reader, f trace.Frame) error {
			if _, seen := keep[f.Stream]; !seen {
				s, _ := r.Stream(f.Stream)
				keep[f.Stream] = direction == "" || s.Direction == direction
				owners[f.Stream] = newOwner(ti, s)
				names[f.Stream] = strconv.Itoa(ti) + "/" + strconv.FormatUint(uint64(f.Stream), 10)
				info.Streams++
			}
			info.Frames++
			info.Bytes += int64(len(f.Data))
			info.Duration = max(info.Duration, f.At)
			if !keep[f.Stream] {
				return nil
			}
			sc.frames++
			if !sc.anyIDs && needsIDs(f.Data) {
				sc.anyIDs = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sc.infos = append(sc.infos, info)
		sc.split = append(sc.split, time.Duration(trainSplit*float64(info.Duration)))
		sc.keep = append(sc.keep, keep)
		sc.names = append(sc.names, names)
		sc.owners = append(sc.owners, owners)
	}
	if !sc.anyIDs {
		return sc, nil
	}
	// Views filter IWANT and IDONTWANT by the topic of the message an id names: one more
	// pass records the topic of every published message.
	sc.topics = map[string]string{}
	interned := map[string]string{}
	for ti, path := range paths {
		err := readTrace(path, nil, func(_ *trace.Reader, f trace.Frame) error {
			if !sc.keep[ti][f.Stream] {
				return nil
			}
			return addMessageTopics(sc.topics, interned, f.Data)
		})
		if err != nil {
			return nil, err
		}
	}
	return sc, nil
}

// readTrace opens the trace at path, calls start with its reader (header and streams so
// far) and fn with every frame in order, and closes it; errors name the trace.
func readTrace(path string, start func(*trace.Reader), fn func(*trace.Reader, trace.Frame) error) error {
	r, err := trace.Open(path)
	if err != nil {
		return fmt.Errorf("trace %s: %w", path, err)
	}
	if start != nil {
		start(r)
	}
	err = forFrames(r, func(f trace.Frame) error { return fn(r, f) })
	if cerr := r.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	if err != nil {
		return fmt.Errorf("trace %s: %w", path, err)
	}
	return nil
}

// forFrames calls fn with every frame of r, in order.
func forFrames(r *trace.Reader, fn func(trace.Frame) error) error {
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
	}
}

// corpusKey names what a configuration replays: one view in one payload mode and layout.
type corpusKey struct {
	view    int // index into the sweep's views
	payload string
	layout  string
}

// frameIn is one frame as a configuration sees it: the stream it belongs to, its bytes in
// the corpus's payload mode and their split by category.
type frameIn struct {
	stream string
	data   []byte
	parts  [gossip.NumCategories]int
	owner  *owner // nil in tests that replay frames without a trace
	topic  string // of a topic stream's frame, "" on a recorded stream
}

// view is one of the sweep's views of the traces.
type view struct {
	name   string
	filter *TopicFilter // nil: as recorded
	sum    TrafficSummary
	seen   map[string]bool // streams with an evaluated frame
	ihave  *recurrence     // IHAVE ids per stream direction, as the view replays them
	// opened holds the topic streams the view has opened (their header sent).
	opened map[string]bool
}

// prepare turns one recorded frame into what each payload mode of a view replays: filtered to
// the view, in ssz_snappy and (when wanted) raw SSZ, each split by category. kept is false
// when the view keeps nothing of it.
type prepared struct {
	snappy, ssz frameIn
	messages    [gossip.NumCategories]int // published messages and control entries
}

func (v *view) prepare(stream string, o *owner, frame []byte, wantSSZ bool, buf *[]byte) (p prepared, kept bool, err error) {
	if v.filter != nil {
		var ok bool
		*buf, ok, err = v.filter.AppendFiltered((*buf)[:0], frame)
		if err != nil || !ok {
			return p, false, err
		}
		frame = *buf
	}
	p.snappy = frameIn{stream: stream, data: append([]byte(nil), frame...), owner: o}
	parts, err := gossip.SplitFrame(frame)
	if err != nil {
		return p, false, err
	}
	p.snappy.parts, p.messages = parts.Bytes, parts.Messages
	if wantSSZ {
		ssz, err := gossip.AppendSSZFrame(nil, frame)
		if err != nil {
			return p, false, fmt.Errorf("raw SSZ: %w", err)
		}
		sszParts, err := gossip.SplitFrame(ssz)
		if err != nil {
			return p, false, err
		}
		p.ssz = frameIn{stream: stream, data: ssz, parts: sszParts.Bytes, owner: o}
	}
	return p, true, nil
}

// laidOut is one recorded frame as a view's corpora replay it: prepared (filtered, in each
// payload mode) and, under topic streams, split per payload mode into the control stream's
// frame and the topic streams' (with the header that opens a stream before its first frame).
type laidOut struct {
	p     prepared
	split [2][]frameIn
}

// frames returns what a corpus of layout and payload mode (0 ssz_snappy, 1 ssz) replays.
func (l *laidOut) frames(layout string, payload int) []frameIn {
	switch {
	case layout == LayoutTopicStreams:
		return l.split[payload]
	case payload == 1:
		return []frameIn{l.p.ssz}
	}
	return []frameIn{l.p.snappy}
}

// layOut lays one recorded frame out for the view: kept is false when the view keeps
// nothing of it; an error means the view cannot read it or a layout cannot carry it, and
// skipped is then the bytes it leaves out of the view.
func (v *view) layOut(stream string, o *owner, frame []byte, wantSSZ, wantTopics bool, buf *[]byte) (l laidOut, kept bool, skipped int, err error) {
	l.p, kept, err = v.prepare(stream, o, frame, wantSSZ, buf)
	if err != nil {
		return l, false, len(frame), err
	}
	if !kept || !wantTopics {
		return l, kept, 0, nil
	}
	l.split[0], err = topicSplit(l.p.snappy)
	if err == nil && wantSSZ {
		l.split[1], err = topicSplit(l.p.ssz)
	}
	if err != nil {
		return l, false, len(l.p.snappy.data), err
	}
	// Both payload modes carry the same messages: the streams this frame opens get their
	// header in both.
	fresh := v.open(l.split[0])
	for i := range l.split {
		l.split[i] = withHeaders(l.split[i], fresh)
	}
	return l, true, 0, nil
}

// count adds an evaluated frame to the view's traffic summary.
func (v *view) count(p *prepared) error {
	if err := v.ihave.add(p.snappy.stream, p.snappy.data); err != nil {
		return err
	}
	v.sum.Frames++
	for c, b := range p.snappy.parts {
		v.sum.Bytes[c] += int64(b)
		v.sum.SSZBytes[c] += int64(p.ssz.parts[c])
		v.sum.Messages[c] += int64(p.messages[c])
		v.sum.Total += int64(b)
		v.sum.DirTotal[p.snappy.owner.dirIndex()] += int64(b)
	}
	if !v.seen[p.snappy.stream] {
		v.seen[p.snappy.stream] = true
		v.sum.Streams++
	}
	return nil
}

// TrafficSummary is a view's traffic over the evaluated part, per category.
type TrafficSummary struct {
	View     string                        `json:"view"`
	Streams  int                           `json:"streams"`
	Frames   int64                         `json:"frames"`
	Messages [gossip.NumCategories]int64   `json:"messages"`
	Bytes    [gossip.NumCategories]int64   `json:"bytes"` // plain (today's) bytes
	SSZBytes [gossip.NumCategories]int64   `json:"ssz_bytes"`
	Duration time.Duration                 `json:"duration_ns"` // evaluated time, summed over traces
	PerHour  [gossip.NumCategories]float64 `json:"mib_per_hour"`
	Total    int64                         `json:"total_bytes"`
	// DirTotal splits Total by direction: inbound, outbound (the recording node's view).
	DirTotal [2]int64 `json:"direction_total_bytes"`
	// Skipped are frames left out because a layout cannot carry them.
	Skipped Skipped `json:"skipped"`
	// IHave is how IHAVE ids recur on the view's stream directions.
	IHave IHaveRecurrence `json:"ihave_recurrence"`
}

// trainSampler keeps an even sample of a corpus's training frames within trainKeepBytes,
// stream by stream (dictionaries are trained on the streams one after another, as each was
// recorded). When the kept frames outgrow the bound, every other frame of each stream is
// dropped and only every second one is kept from then on, so the sample stays spread over
// the whole training part.
type trainSampler struct {
	byStream map[string]*streamSample
	order    []string
	bytes    int
	stride   int
}

type streamSample struct {
	frames [][]byte
	seen   int
}

// trainKeepBytes bounds a corpus's training sample (trainDict uses dictSampleBytes of it).
const trainKeepBytes = 8 * dictSampleBytes

func (s *trainSampler) add(stream string, f []byte) {
	if s.byStream == nil {
		s.byStream, s.stride = map[string]*streamSample{}, 1
	}
	ss := s.byStream[stream]
	if ss == nil {
		ss = &streamSample{}
		s.byStream[stream] = ss
		s.order = append(s.order, stream)
	}
	ss.seen++
	if (ss.seen-1)%s.stride != 0 {
		return
	}
	ss.frames = append(ss.frames, f)
	s.bytes += len(f)
	for s.bytes > trainKeepBytes && s.stride < 1<<30 {
		s.bytes = 0
		for _, st := range s.byStream {
			kept := st.frames[:0]
			for i, f := range st.frames {
				if i%2 == 0 {
					kept = append(kept, f)
					s.bytes += len(f)
				}
			}
			st.frames = kept
		}
		s.stride *= 2
	}
}

// frames is the sample, stream after stream in the order they first appeared.
func (s *trainSampler) frames() [][]byte {
	var out [][]byte
	for _, name := range s.order {
		out = append(out, s.byStream[name].frames...)
	}
	return out
}
