// Command thincopies writes a recording with fewer attestation copies on the recording node's
// inbound streams, for a sensitivity check of a sweep: it keeps each attestation copy with
// probability KEEP (by a hash of its stream and message, so the same input gives the same
// output), as if the node sat in fewer of its peers' meshes, re-encodes each RPC without the
// dropped messages (a frame left empty is dropped) and copies everything else unchanged.
//
// Usage: go run ./scripts/thincopies IN OUT KEEP   (KEEP in (0, 1]; a .gz OUT is gzipped)
package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"strconv"

	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"google.golang.org/protobuf/proto"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/trace"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: thincopies IN OUT KEEP   (KEEP: the share of attestation copies kept, in (0, 1])")
		os.Exit(2)
	}
	keep, err := strconv.ParseFloat(os.Args[3], 64)
	if err != nil || !(keep > 0 && keep <= 1) {
		fmt.Fprintf(os.Stderr, "thincopies: KEEP %q: want a share in (0, 1]\n", os.Args[3])
		os.Exit(2)
	}
	r, err := trace.Open(os.Args[1])
	if err != nil {
		panic(err)
	}
	h := r.Header()
	w, err := trace.Create(os.Args[2], h)
	if err != nil {
		panic(err)
	}
	declared := map[uint32]bool{}
	var kept, dropped, framesDropped int
	for {
		fr, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			panic(err)
		}
		s, _ := r.Stream(fr.Stream)
		if !declared[fr.Stream] {
			declared[fr.Stream] = true
			if err := w.AddStream(s); err != nil {
				panic(err)
			}
		}
		if s.Direction == "in" {
			body, _, err := gossip.FrameBody(fr.Data)
			var rpc pb.RPC
			if err == nil && proto.Unmarshal(body, &rpc) == nil && len(rpc.Publish) > 0 {
				var pubs []*pb.Message
				changed := false
				for _, m := range rpc.Publish {
					if gossip.TopicCategory(m.GetTopic()) == gossip.Attestation {
						hh := fnv.New64a()
						binary.Write(hh, binary.LittleEndian, fr.Stream)
						hh.Write(m.Data)
						if float64(hh.Sum64()%1000000)/1e6 >= keep {
							dropped++
							changed = true
							continue
						}
						kept++
					}
					pubs = append(pubs, m)
				}
				if changed {
					rpc.Publish = pubs
					nb, err := proto.Marshal(&rpc)
					if err != nil {
						panic(err)
					}
					if len(nb) == 0 {
						framesDropped++
						continue
					}
					fr.Data = binary.AppendUvarint(nil, uint64(len(nb)))
					fr.Data = append(fr.Data, nb...)
					if p, err := gossip.SplitFrame(fr.Data); err == nil {
						fr.Category = p.Dominant()
					}
				}
			}
		}
		if err := w.WriteFrame(fr); err != nil {
			panic(err)
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	fmt.Printf("attestation messages kept %d, dropped %d; frames left empty and dropped %d\n", kept, dropped, framesDropped)
}
