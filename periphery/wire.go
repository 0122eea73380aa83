package periphery

import (
	"errors"
	"fmt"

	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"google.golang.org/protobuf/encoding/protowire"
)

// readRPC reads what a boundary peer acts on from one pb.RPC frame: how many full messages it
// carries (discarded) and the control entries it obeys (GRAFT, PRUNE with its backoff, IWANT).
// IHAVE, IDONTWANT, subscriptions and message bodies are skipped unread: a grafter out of the
// real node's mesh receives IHAVE of every message of its topics (hundreds of ids per
// heartbeat on an attestation subnet), and decoding each id into a string cost more than the
// rest of the peer. The result is what proto.Unmarshal gives for those fields
// (FuzzReadRPC).
func readRPC(b []byte) (messages int, ctl *pb.ControlMessage, err error) {
	err = fields(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch {
		case num == 2 && typ == protowire.BytesType:
			messages++
		case num == 3 && typ == protowire.BytesType:
			if ctl == nil {
				ctl = &pb.ControlMessage{}
			}
			return readControl(v, ctl)
		}
		return nil
	})
	return messages, ctl, err
}

func readControl(b []byte, ctl *pb.ControlMessage) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 2: // iwant
			w := &pb.ControlIWant{}
			if err := fields(v, func(n protowire.Number, t protowire.Type, id []byte) error {
				if n == 1 && t == protowire.BytesType {
					w.MessageIDs = append(w.MessageIDs, string(id))
				}
				return nil
			}); err != nil {
				return err
			}
			ctl.Iwant = append(ctl.Iwant, w)
		case 3: // graft
			g := &pb.ControlGraft{}
			if err := fields(v, func(n protowire.Number, t protowire.Type, s []byte) error {
				if n == 1 && t == protowire.BytesType {
					g.TopicID = ptr(string(s))
				}
				return nil
			}); err != nil {
				return err
			}
			ctl.Graft = append(ctl.Graft, g)
		case 4: // prune
			pr := &pb.ControlPrune{}
			if err := fields(v, func(n protowire.Number, t protowire.Type, s []byte) error {
				switch {
				case n == 1 && t == protowire.BytesType:
					pr.TopicID = ptr(string(s))
				case n == 3 && t == protowire.VarintType:
					bo, _ := protowire.ConsumeVarint(s)
					pr.Backoff = &bo
				}
				return nil
			}); err != nil {
				return err
			}
			ctl.Prune = append(ctl.Prune, pr)
		}
		return nil
	})
}

func ptr[T any](v T) *T { return &v }

var errTruncated = errors.New("periphery: truncated protobuf field")

// fields calls f for each field of the protobuf message b with its number, wire type and
// value: the payload of a length-delimited field, the encoded varint of a varint field, nil
// for the others.
func fields(b []byte, f func(protowire.Number, protowire.Type, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("periphery: bad protobuf tag: %w", protowire.ParseError(n))
		}
		b = b[n:]
		var v []byte
		switch typ {
		case protowire.BytesType:
			val, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return errTruncated
			}
			v, n = val, m
		case protowire.VarintType:
			_, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return errTruncated
			}
			v, n = b[:m], m
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return errTruncated
			}
		}
		if err := f(num, typ, v); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
