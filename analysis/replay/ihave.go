package replay

import (
	"fmt"
	"slices"

	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"google.golang.org/protobuf/proto"

	"github.com/streamsim/streamsim/gossip"
)

// RecurrenceDistances and IHaveRecurrence are gossip's: one count of IHAVE id repeats for
// the offline replay and the live runs.
var RecurrenceDistances = gossip.RecurrenceDistances

// IHaveRecurrence is gossip.IHaveRecurrence.
type IHaveRecurrence = gossip.IHaveRecurrence

// recurrence tracks IHAVE ids per stream direction of one view.
type recurrence struct{ r *gossip.Recurrence }

func newRecurrence() *recurrence { return &recurrence{r: gossip.NewRecurrence()} }

// add accounts one frame of stream as the view replays it.
func (r *recurrence) add(stream string, frame []byte) error {
	body, _, err := gossip.FrameBody(frame)
	if err != nil {
		return fmt.Errorf("IHAVE ids: %w", err)
	}
	var ids []string
	for fld, err := range gossip.Fields(body) {
		if err != nil {
			return fmt.Errorf("IHAVE ids: %w", err)
		}
		if !fld.Is(gossip.FieldControl) {
			continue
		}
		var c pb.ControlMessage
		if err := proto.Unmarshal(fld.Value, &c); err != nil {
			return fmt.Errorf("IHAVE ids: control: %w", err)
		}
		for _, ih := range c.GetIhave() {
			ids = append(ids, ih.GetMessageIDs()...)
		}
	}
	r.r.Frame(stream, int64(len(frame)), slices.Values(ids))
	return nil
}
