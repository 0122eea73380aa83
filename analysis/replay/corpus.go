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

// recorded is one stream direction of a trace as read: its frames back to back.
type recorded struct {
	name   string // "<trace index>/<stream id>"
	stream trace.Stream
	data   []byte
	ends   []int
	at     []time.Duration
	split  time.Duration // frames before this time train dictionaries only
}

func (r *recorded) frame(i int) []byte {
	start := 0
	if i > 0 {
		start = r.ends[i-1]
	}
	return r.data[start:r.ends[i]]
}

// readTraces reads every stream direction of the traces into memory. Each trace's frames
// before trainSplit × (time of its last frame) are marked for training.
func readTraces(paths []string, trainSplit float64) ([]*recorded, []TraceInfo, bool, error) {
	var out []*recorded
	var infos []TraceInfo
	anyIDs := false
	for ti, path := range paths {
		r, err := trace.Open(path)
		if err != nil {
			return nil, nil, false, fmt.Errorf("trace %s: %w", path, err)
		}
		h := r.Header()
		info := TraceInfo{Path: path, Source: h.Source, Params: h.Params}
		byID := map[uint32]*recorded{}
		var mine []*recorded
		for {
			f, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				r.Close()
				return nil, nil, false, fmt.Errorf("trace %s: %w", path, err)
			}
			rec := byID[f.Stream]
			if rec == nil {
				s, _ := r.Stream(f.Stream)
				rec = &recorded{name: strconv.Itoa(ti) + "/" + strconv.FormatUint(uint64(f.Stream), 10), stream: s}
				byID[f.Stream] = rec
				mine = append(mine, rec)
			}
			rec.data = append(rec.data, f.Data...)
			rec.ends = append(rec.ends, len(rec.data))
			rec.at = append(rec.at, f.At)
			info.Frames++
			info.Bytes += int64(len(f.Data))
			info.Duration = max(info.Duration, f.At)
			if !anyIDs && needsIDs(f.Data) {
				anyIDs = true
			}
		}
		if err := r.Close(); err != nil {
			return nil, nil, false, fmt.Errorf("trace %s: close: %w", path, err)
		}
		split := time.Duration(trainSplit * float64(info.Duration))
		for _, rec := range mine {
			rec.split = split
		}
		info.Streams = len(mine)
		infos = append(infos, info)
		out = append(out, mine...)
	}
	return out, infos, anyIDs, nil
}

// corpus is what one sweep configuration replays: every stream direction of one view in one
// payload mode, with each frame's category split.
type corpus struct {
	view, payload string
	streams       []*corpusStream
	trainFrames   [][]byte // frames of the training part, all streams, in order
}

type corpusStream struct {
	name  string
	data  []byte
	ends  []int
	parts [][gossip.NumCategories]int
}

func (s *corpusStream) frame(i int) []byte {
	start := 0
	if i > 0 {
		start = s.ends[i-1]
	}
	return s.data[start:s.ends[i]]
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
}

// buildCorpora filters the recorded streams to a view and converts payloads, giving one
// corpus per payload mode (index as in payloads).
func buildCorpora(recs []*recorded, view string, filter *TopicFilter, payloads []string) ([]*corpus, TrafficSummary, error) {
	sum := TrafficSummary{View: view}
	out := make([]*corpus, len(payloads))
	for i, p := range payloads {
		out[i] = &corpus{view: view, payload: p}
	}
	var buf, ssz []byte
	for _, rec := range recs {
		streams := make([]*corpusStream, len(payloads))
		for i := range payloads {
			streams[i] = &corpusStream{name: rec.name}
		}
		for fi := range rec.ends {
			frame := rec.frame(fi)
			var err error
			if filter != nil {
				var kept bool
				buf, kept, err = filter.AppendFiltered(buf[:0], frame)
				if err != nil {
					return nil, sum, fmt.Errorf("stream %s frame %d: %w", rec.name, fi, err)
				}
				if !kept {
					continue
				}
				frame = buf
			}
			ssz, err = gossip.AppendSSZFrame(ssz[:0], frame)
			if err != nil {
				return nil, sum, fmt.Errorf("stream %s frame %d: raw SSZ: %w", rec.name, fi, err)
			}
			train := rec.at[fi] < rec.split
			for i, p := range payloads {
				in := frame
				if p == gossip.PayloadSSZ {
					in = ssz
				}
				if train {
					out[i].trainFrames = append(out[i].trainFrames, append([]byte(nil), in...))
					continue
				}
				parts, err := gossip.SplitFrame(in)
				if err != nil {
					return nil, sum, fmt.Errorf("stream %s frame %d: %w", rec.name, fi, err)
				}
				s := streams[i]
				s.data = append(s.data, in...)
				s.ends = append(s.ends, len(s.data))
				s.parts = append(s.parts, parts.Bytes)
			}
			if train {
				continue
			}
			parts, err := gossip.SplitFrame(frame)
			if err != nil {
				return nil, sum, fmt.Errorf("stream %s frame %d: %w", rec.name, fi, err)
			}
			sszParts, err := gossip.SplitFrame(ssz)
			if err != nil {
				return nil, sum, fmt.Errorf("stream %s frame %d: %w", rec.name, fi, err)
			}
			sum.Frames++
			for c := range parts.Bytes {
				sum.Bytes[c] += int64(parts.Bytes[c])
				sum.SSZBytes[c] += int64(sszParts.Bytes[c])
				sum.Messages[c] += int64(parts.Messages[c])
				sum.Total += int64(parts.Bytes[c])
			}
		}
		if len(streams[0].ends) > 0 {
			sum.Streams++
			for i := range payloads {
				out[i].streams = append(out[i].streams, streams[i])
			}
		}
	}
	return out, sum, nil
}
