package watermill

import (
	"context"
	"errors"
	"sync"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// ConsumerOpener returns a new, not yet started consumer of a Watermill topic, in the
// consumer group the Subscriber was built for. The Subscriber calls it once per
// Subscribe and closes the consumer when that subscription ends.
type ConsumerOpener func(topic string) (hub.Consumer, error)

// Subscriber is a message.Subscriber over hub consumers: a hub transport's consumer
// groups, redelivery and dead-letters offered to Watermill applications.
//
// Each Subscribe starts one consumer; its handler hands each event over as a message
// (EventToMessage) and waits: Ack acks the event, Nack fails it (the transport's
// redelivery and, past its retry limit, its dead-letter apply). The next message comes
// after the previous one was acked or nacked, as Watermill expects. Cancelling
// Subscribe's context or Close ends the subscription and closes its channel. A message
// still waiting to be taken or acked when the subscription ends counts as a failed
// delivery: it is redelivered, and at its last allowed delivery it is dead-lettered.
type Subscriber struct {
	open ConsumerOpener
	init func(topic string) error

	mu      sync.Mutex
	closed  bool
	closing chan struct{}
	subs    []*subscription
}

// errSubscriptionEnded is what the handler returns for a message the application did
// not settle before the subscription ended.
var errSubscriptionEnded = errors.New("watermill: subscription ended before the message was acked")

// errNacked is the handler's error for a nacked message.
var errNacked = errors.New("watermill: message nacked")

// NewSubscriber returns a Subscriber starting a consumer from open per Subscribe. init,
// when not nil, is SubscribeInitialize: it prepares a topic's consumer group (declares
// a queue, creates the group) so messages published before the first Subscribe are kept.
func NewSubscriber(open ConsumerOpener, init func(topic string) error) *Subscriber {
	return &Subscriber{open: open, init: init, closing: make(chan struct{})}
}

type subscription struct {
	c    hub.Consumer
	out  chan *message.Message
	mu   sync.RWMutex // held (read) by handlers while they may send on out
	done bool
	once sync.Once
	err  error // the consumer's Close error, kept for Subscriber.Close
	end  chan struct{}
}

// Subscribe starts a consumer of topic and returns its messages.
func (s *Subscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, hub.Errorf(hub.FailedPrecondition, "watermill: Subscribe after Close")
	}
	s.mu.Unlock()
	c, err := s.open(topic)
	if err != nil {
		return nil, err
	}
	sub := &subscription{c: c, out: make(chan *message.Message), end: make(chan struct{})}
	handler := func(hctx context.Context, ev *cloudevent.Event) error {
		sub.mu.RLock()
		defer sub.mu.RUnlock()
		if sub.done {
			return errSubscriptionEnded
		}
		msg, err := EventToMessage(ev)
		if err != nil {
			return err
		}
		mctx, cancel := context.WithCancel(ctx)
		defer cancel() // Watermill: a message's context ends once it is settled
		msg.SetContext(mctx)
		select {
		case sub.out <- msg:
		case <-sub.end:
			return errSubscriptionEnded
		case <-hctx.Done():
			return hctx.Err()
		}
		select {
		case <-msg.Acked():
			return nil
		case <-msg.Nacked():
			return errNacked
		case <-sub.end:
			return errSubscriptionEnded
		case <-hctx.Done():
			return hctx.Err()
		}
	}
	if err := c.Start(ctx, handler); err != nil {
		_ = c.Close()
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.Join(hub.Errorf(hub.FailedPrecondition, "watermill: Subscribe after Close"), sub.stop())
	}
	s.subs = append(s.subs, sub)
	s.mu.Unlock()
	go func() {
		select {
		case <-ctx.Done():
		case <-s.closing:
		}
		_ = sub.stop() // an error is kept: Subscriber.Close returns it
	}()
	return sub.out, nil
}

// stop ends the subscription: handlers stop waiting, the consumer closes (it drains),
// then the channel closes, once no handler can send on it.
func (sub *subscription) stop() error {
	sub.once.Do(func() {
		close(sub.end)
		sub.err = sub.c.Close()
		sub.mu.Lock()
		sub.done = true
		close(sub.out)
		sub.mu.Unlock()
	})
	return sub.err
}

// SubscribeInitialize prepares topic's consumer group (see NewSubscriber).
func (s *Subscriber) SubscribeInitialize(topic string) error {
	if s.init == nil {
		return nil
	}
	return s.init(topic)
}

// Close ends every subscription and waits for their consumers to close. Idempotent.
func (s *Subscriber) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.closing)
	subs := s.subs
	s.mu.Unlock()
	var errs []error
	for _, sub := range subs {
		if err := sub.stop(); err != nil && hub.Code(err) != hub.DeadlineExceeded {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

var (
	_ message.Subscriber           = (*Subscriber)(nil)
	_ message.SubscribeInitializer = (*Subscriber)(nil)
)
