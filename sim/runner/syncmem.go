package runner

import (
	"context"
	"fmt"
	"reflect"
	gosync "sync"

	"github.com/testground/sdk-go/sync"
)

// memSync is the embedded runner's sync client: the SDK's in-memory client, whose Publish
// sends to every subscriber's channel while holding the client's one lock. A subscriber that
// stops reading (its instance is past the waits it subscribed for) or reads slowly while it
// publishes itself then blocks the whole run: every Publish, SignalEntry and barrier waits for
// that lock (seen: a 48-node mesh hung 24 minutes in SignalAndWait under a load spike). Here
// each subscription is served by its own goroutines through an unbounded queue, so the SDK
// client's sends never block, and delivery to the subscriber's channel ends with the
// subscription's context, as the sync service's does.
type memSync struct {
	sync.Client
	closed    chan struct{}
	closeOnce gosync.Once
}

func newMemSync() *memSync {
	return &memSync{Client: sync.NewInmemClient(), closed: make(chan struct{})}
}

// Close ends every subscription's goroutines.
func (m *memSync) Close() error {
	m.closeOnce.Do(func() { close(m.closed) })
	return m.Client.Close()
}

// Subscribe delivers the topic's records, past and future, to ch (a channel of the topic's
// type) until ctx ends.
func (m *memSync) Subscribe(ctx context.Context, topic *sync.Topic, ch interface{}) (*sync.Subscription, error) {
	out := reflect.ValueOf(ch)
	if out.Kind() != reflect.Chan {
		return nil, fmt.Errorf("subscribe: %T is not a channel", ch)
	}
	// The SDK client sends into in, which the pump empties at once into the queue.
	in := reflect.MakeChan(out.Type(), 64)
	var (
		mu    gosync.Mutex
		queue []reflect.Value
		ready = make(chan struct{}, 1)
	)
	go func() {
		// After ctx ends the pump keeps taking what the SDK client sends, dropping it, until
		// the client closes: a full channel would block every Publish.
		closed := reflect.ValueOf(m.closed)
		for {
			chosen, v, ok := reflect.Select([]reflect.SelectCase{
				{Dir: reflect.SelectRecv, Chan: in},
				{Dir: reflect.SelectRecv, Chan: closed},
			})
			if chosen == 1 || !ok {
				return
			}
			if ctx.Err() != nil {
				continue
			}
			mu.Lock()
			queue = append(queue, v)
			mu.Unlock()
			select {
			case ready <- struct{}{}:
			default:
			}
		}
	}()
	go func() {
		done := reflect.ValueOf(ctx.Done())
		for {
			mu.Lock()
			var next reflect.Value
			have := len(queue) > 0
			if have {
				next, queue = queue[0], queue[1:]
			}
			mu.Unlock()
			if !have {
				select {
				case <-ready:
					continue
				case <-ctx.Done():
					return
				}
			}
			if chosen, _, _ := reflect.Select([]reflect.SelectCase{
				{Dir: reflect.SelectSend, Chan: out, Send: next},
				{Dir: reflect.SelectRecv, Chan: done},
			}); chosen == 1 {
				return
			}
		}
	}()
	return m.Client.Subscribe(ctx, topic, in.Interface())
}

// PublishSubscribe and MustSubscribe go through Subscribe (the SDK's sugar would call its own).
func (m *memSync) PublishSubscribe(ctx context.Context, topic *sync.Topic, payload interface{}, ch interface{}) (int64, *sync.Subscription, error) {
	seq, err := m.Publish(ctx, topic, payload)
	if err != nil {
		return -1, nil, err
	}
	sub, err := m.Subscribe(ctx, topic, ch)
	return seq, sub, err
}

func (m *memSync) MustSubscribe(ctx context.Context, topic *sync.Topic, ch interface{}) *sync.Subscription {
	sub, err := m.Subscribe(ctx, topic, ch)
	if err != nil {
		panic(err)
	}
	return sub
}

func (m *memSync) MustPublishSubscribe(ctx context.Context, topic *sync.Topic, payload interface{}, ch interface{}) (int64, *sync.Subscription) {
	seq, sub, err := m.PublishSubscribe(ctx, topic, payload, ch)
	if err != nil {
		panic(err)
	}
	return seq, sub
}
