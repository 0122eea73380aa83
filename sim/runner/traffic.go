package runner

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/sim/node"
)

// deliveries counts what a node's subscriptions delivered, per topic, with an
// order-independent id digest, and logs first-delivery times when the scenario records them.
type deliveries struct {
	topics []string
	index  map[string]int
	n      []atomic.Int64
	lanes  [][2]atomic.Uint64
	all    atomic.Int64
	log    *result.MessageLog
}

func newDeliveries(topics []string, log *result.MessageLog) *deliveries {
	d := &deliveries{topics: topics, index: map[string]int{}, log: log}
	for i, t := range topics {
		d.index[t] = i
	}
	d.n = make([]atomic.Int64, len(topics))
	d.lanes = make([][2]atomic.Uint64, len(topics))
	return d
}

func (d *deliveries) add(topic int, id string) {
	if d.log != nil {
		d.log.Add(id, time.Now().UnixNano(), false, "")
	}
	d.n[topic].Add(1)
	if len(id) >= 16 {
		d.lanes[topic][0].Add(binary.LittleEndian.Uint64([]byte(id[:8])))
		d.lanes[topic][1].Add(binary.LittleEndian.Uint64([]byte(id[8:16])))
	}
	d.all.Add(1)
}

func (d *deliveries) total() int64 { return d.all.Load() }

// parity returns what was delivered, per category.
func (d *deliveries) parity() *result.Parity {
	p := &result.Parity{}
	for i, t := range d.topics {
		p.AddTally(gossip.TopicCategory(t), result.Tally{Messages: d.n[i].Load(), Digest: [2]uint64{d.lanes[i][0].Load(), d.lanes[i][1].Load()}})
	}
	return p
}

// subscribe subscribes n to every topic and counts what each subscription delivers.
func (d *deliveries) subscribe(n *node.Node, topics []string) error {
	for i, t := range topics {
		topic, err := n.Topic(t)
		if err != nil {
			return err
		}
		sub, err := topic.Subscribe(pubsub.WithBufferSize(4096))
		if err != nil {
			return fmt.Errorf("subscribe %s: %w", t, err)
		}
		go func() {
			for {
				m, err := sub.Next(n.Context())
				if err != nil {
					return
				}
				d.add(i, m.ID)
			}
		}()
	}
	return nil
}

// tallies counts published messages per topic.
type tallies map[string]result.Tally

func (t tallies) add(topic string, id [gossip.MessageIDBytes]byte) {
	x := t[topic]
	x.Messages++
	x.Digest[0] += binary.LittleEndian.Uint64(id[:8])
	x.Digest[1] += binary.LittleEndian.Uint64(id[8:16])
	t[topic] = x
}

// publish publishes this instance's share of the workload on schedule: message seq of the run
// (in schedule order) belongs to the member the plan's Origin names.
func (in *instance) publish(ctx context.Context, start time.Time) error {
	// Each topic's handle and whether the receivers' profile wants it, looked up once per
	// topic (Profile.Wants parses the topic).
	type pubTopic struct {
		t      *pubsub.Topic
		wanted bool
	}
	topics := map[string]pubTopic{}
	mine := tallies{}
	published := &result.Parity{}
	inProfile := &result.Parity{}
	sched := &result.Schedule{SlotNs: int64(in.slot)}
	var lagSum time.Duration
	seq, count := 0, 0
	for slotIndex := range in.p.Slots {
		sl, err := in.slots.slot(slotIndex)
		if err != nil {
			return fmt.Errorf("workload: %w", err)
		}
		for i := range sl.msgs {
			m := &sl.msgs[i]
			seq++
			if sl.origins[i] != in.me {
				continue
			}
			pt, ok := topics[m.Topic]
			if !ok {
				if pt.t, err = in.node.Topic(m.Topic); err != nil {
					return err
				}
				pt.wanted = in.p.Profile.Wants(m.Topic)
				topics[m.Topic] = pt
			}
			if err := in.live.hold(ctx); err != nil { // hang fault (liveness.go)
				return err
			}
			// Pace on the outbound queues: a burst the machine cannot absorb shows as lag
			// against the schedule instead of as dropped RPCs (when flow control is on).
			in.node.AwaitBacklog("")
			target := start.Add(in.p.Scaled(m.At))
			// Sleeping for less than a millisecond oversleeps (timer slack) and would make a
			// burst fall behind; publish everything due within the next millisecond.
			if d := time.Until(target); d > time.Millisecond {
				time.Sleep(d)
			}
			id := sl.ids[i]
			if in.msgLog != nil {
				in.msgLog.Add(string(id[:]), time.Now().UnixNano(), true, m.Topic)
			}
			if err := pt.t.Publish(ctx, m.Data); err != nil {
				return fmt.Errorf("publish on %s: %w", m.Topic, err)
			}
			lag := max(time.Since(target), 0)
			lagSum += lag
			sched.MaxLagNs = max(sched.MaxLagNs, int64(lag))
			if lag > in.slot {
				sched.LateMessages++
			}
			count++
			mine.add(m.Topic, id)
			one := result.Tally{Messages: 1, Digest: [2]uint64{binary.LittleEndian.Uint64(id[:8]), binary.LittleEndian.Uint64(id[8:16])}}
			published.AddTally(m.Category, one)
			if pt.wanted {
				inProfile.AddTally(m.Category, one)
			}
		}
		in.slots.release(slotIndex)
	}
	if seq == 0 {
		return errors.New("workload produced no messages")
	}
	sched.Messages = int64(count)
	if count > 0 {
		sched.MeanLagNs = int64(lagSum) / int64(count)
	}
	sched.ScheduledNs = int64(in.p.Slots) * int64(in.slot)
	sched.ElapsedNs = int64(time.Since(start))
	in.summary.Schedule = sched
	in.summary.Published = published
	if !in.spec.Receiver(&in.plan.Nodes[in.me]) {
		// A publisher's parity record is what it published within the receivers' profile.
		in.summary.Parity = inProfile
	}
	in.resultSent = true
	_, err := in.client.Publish(ctx, in.resultTopic, &resultRecord{Group: in.group, Instance: in.seq, Topics: mine})
	return err
}

// receive waits for every publishing instance's published set, then until this node has
// received everything published on its topics (or deliveries stop for a while), and checks
// parity: the same count and id digest in every category.
func (in *instance) receive(ctx context.Context, results chan *resultRecord) error {
	publishers := 0
	for _, nd := range in.plan.Nodes {
		if nd.Publishes {
			publishers++
		}
	}
	want := &result.Parity{}
	mine := map[string]bool{}
	for _, t := range in.received.topics {
		mine[t] = true
	}
	for got := 0; got < publishers; {
		select {
		case r := <-results:
			if r.Error != "" {
				return failure(result.FailPeer, fmt.Errorf("publisher %s/%d failed: %s", r.Group, r.Instance, r.Error))
			}
			for t, x := range r.Topics {
				if mine[t] {
					want.AddTally(gossip.TopicCategory(t), x)
				}
			}
			got++
		case <-in.waitCtx.Done():
			return fmt.Errorf("waiting for publishers' results (%d of %d): %w", got, publishers, in.waitCtx.Err())
		}
	}
	d := in.received
	idle := max(5*time.Second, 2*in.slot)
	last, lastChange := d.total(), time.Now()
	for d.total() < want.Total() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if err := in.live.hold(ctx); err != nil { // hang fault (liveness.go)
			return err
		}
		if t := d.total(); t != last {
			last, lastChange = t, time.Now()
		} else if time.Since(lastChange) > idle {
			break
		}
	}
	// Anything beyond the published set would arrive right behind it.
	time.Sleep(min(in.slot/4, time.Second))
	in.summary.Duration = time.Since(in.summary.Start).Seconds()
	in.summary.Parity = d.parity()
	in.summary.Expected = want
	// With faults, parity is judged per message by the reports' fault accounting, from every
	// node's message log and link outages (analysis/faults.go).
	if !in.summary.Parity.Equal(want) && len(in.p.Faults) == 0 {
		in.parityErr = &result.Failure{Kind: result.FailParity, Message: fmt.Sprintf("%s %s/%d (%s): %s", in.role, in.group, in.seq,
			in.node.Protocols()[0], in.summary.Parity.Diff(want))}
	}
	return nil
}
