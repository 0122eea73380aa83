package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/trace"
)

func init() {
	register("reframe", "rewrite a trace's frames as another gossipsub library frames them (the same content)", runReframe)
}

// runReframe rewrites a trace with every frame of the chosen directions re-framed
// (gossip.Reframer): the same streams, each frame replaced by the frames the framing makes of
// it, at the same time offset. `streamsim sweep` of the input and the output measures what the
// framing alone does to a codec, on identical content.
func runReframe(args []string) error {
	fs := flag.NewFlagSet("reframe", flag.ContinueOnError)
	framing := fs.String("framing", string(gossip.FramingRust), "the framing to write: "+gossip.FramingNames())
	direction := fs.String("direction", "all", "stream directions to re-frame, from the recording node's view: in, out or all; the others are copied")
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintln(out, "usage: streamsim reframe [flags] IN OUT")
		fmt.Fprintln(out, "\nWrites trace IN to OUT (a .gz name gzips it) with each frame of the chosen directions cut as the")
		fmt.Fprintln(out, "framing's library cuts the same RPC (docs/inputs.md §14); prints frames and bytes before and after.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usageError{errors.New("need IN and OUT (usage: streamsim reframe [flags] IN OUT)")}
	}
	f, err := gossip.ParseFraming(*framing)
	if err != nil {
		return usageError{fmt.Errorf("-framing: %w", err)}
	}
	switch *direction {
	case "in", "out", "all":
	default:
		return usageError{fmt.Errorf("-direction %q: allowed in, out, all", *direction)}
	}
	st, err := reframeTrace(fs.Arg(0), fs.Arg(1), f, *direction)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "%s framing, direction %s: %d frames of %d bytes became %d frames of %d bytes (%+.3f %%); %d frames copied; %d malformed frames copied as they were\n",
		f, *direction, st.framesIn, st.bytesIn, st.framesOut, st.bytesOut, 100*float64(st.bytesOut-st.bytesIn)/float64(max(st.bytesIn, 1)),
		st.copied, st.malformed)
	return nil
}

type reframeStats struct {
	framesIn, framesOut, bytesIn, bytesOut int64
	copied, malformed                      int64
}

func reframeTrace(in, out string, f gossip.Framing, direction string) (reframeStats, error) {
	var st reframeStats
	r, err := trace.Open(in)
	if err != nil {
		return st, err
	}
	defer r.Close()
	h := r.Header()
	params := map[string]string{}
	for k, v := range h.Params {
		params[k] = v
	}
	params["reframed"] = string(f) + ":" + direction
	w, err := trace.Create(out, trace.Header{Source: h.Source, Params: params})
	if err != nil {
		return st, err
	}
	declared := map[uint32]bool{}
	var rf gossip.Reframer
	var buf []byte
	var ends []int
	for {
		fr, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			w.Close()
			return st, fmt.Errorf("%s: %w", in, err)
		}
		s, _ := r.Stream(fr.Stream)
		if !declared[fr.Stream] {
			declared[fr.Stream] = true
			if err := w.AddStream(s); err != nil {
				w.Close()
				return st, err
			}
		}
		if direction != "all" && s.Direction != direction {
			st.copied++
			if err := w.WriteFrame(fr); err != nil {
				w.Close()
				return st, err
			}
			continue
		}
		st.framesIn++
		st.bytesIn += int64(len(fr.Data))
		buf, ends, err = rf.Append(buf[:0], ends[:0], f, fr.Data)
		if err != nil {
			st.malformed++
			buf, ends = append(buf[:0], fr.Data...), append(ends[:0], len(fr.Data))
		}
		start := 0
		for _, e := range ends {
			part := buf[start:e]
			start = e
			cat := fr.Category
			if p, err := gossip.SplitFrame(part); err == nil {
				cat = p.Dominant()
			}
			if err := w.WriteFrame(trace.Frame{At: fr.At, Stream: fr.Stream, Category: cat, Data: part}); err != nil {
				w.Close()
				return st, err
			}
			st.framesOut++
			st.bytesOut += int64(len(part))
		}
	}
	return st, w.Close()
}
