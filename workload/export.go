package workload

import (
	"fmt"
	"reflect"
	"strconv"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/trace"
)

// TraceStreamID is the stream of a workload trace: what a leaf receives from its hub as a
// direct peer.
const TraceStreamID = 1

// TraceStream describes the single stream direction of a workload trace.
func TraceStream() trace.Stream {
	return trace.Stream{
		ID:        TraceStreamID,
		Node:      "leaf",
		Peer:      "hub",
		Direction: trace.DirectionIn,
		Protocol:  "/meshsub/1.2.0",
		Codec:     "plain",
	}
}

// TraceHeader is the header of a workload trace: source "workload" with every parameter,
// the profile and the number of slots.
func TraceHeader(p Params, profile Profile, slots int) trace.Header {
	params := p.Map()
	params["profile"] = profile.Name
	params["custody_columns"] = strconv.Itoa(len(profile.Columns))
	params["slots"] = strconv.Itoa(slots)
	params["slot_duration"] = SlotDuration.String()
	return trace.Header{Version: trace.Version, Source: "workload", Params: params}
}

// Map returns the parameters by field name, values formatted with fmt.
func (p Params) Map() map[string]string {
	out := map[string]string{}
	v := reflect.ValueOf(p)
	for i := range v.NumField() {
		out[v.Type().Field(i).Name] = fmt.Sprint(v.Field(i).Interface())
	}
	return out
}

// TraceWriter writes the frames a profile's node receives, one per wanted message: the RPC
// that a hub writes to a direct peer to forward it (gossip.AppendPublishFrame), at the
// message's send time.
type TraceWriter struct {
	w       *trace.Writer
	profile Profile
	buf     []byte
}

// NewTraceWriter declares the workload stream on w.
func NewTraceWriter(w *trace.Writer, profile Profile) (*TraceWriter, error) {
	if err := w.AddStream(TraceStream()); err != nil {
		return nil, fmt.Errorf("workload trace stream: %w", err)
	}
	return &TraceWriter{w: w, profile: profile}, nil
}

// WriteSlot writes the wanted messages of one slot and returns how many it wrote.
func (t *TraceWriter) WriteSlot(msgs []Message) (int, error) {
	n := 0
	for i := range msgs {
		m := &msgs[i]
		if !t.profile.Wants(m.Topic) {
			continue
		}
		var err error
		t.buf, err = gossip.AppendPublishFrame(t.buf[:0], m.Topic, m.Data)
		if err != nil {
			return n, fmt.Errorf("slot %d frame: %w", m.Slot, err)
		}
		if err := t.w.WriteFrame(trace.Frame{At: m.At, Stream: TraceStreamID, Category: m.Category, Data: t.buf}); err != nil {
			return n, fmt.Errorf("slot %d: %w", m.Slot, err)
		}
		n++
	}
	return n, nil
}
