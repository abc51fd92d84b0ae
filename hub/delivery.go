package hub

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/koder/eventhub/cloudevent"
)

// route is one Forward: a compiled pattern, a transport and, in direct mode, the queue
// its senders drain.
type route struct {
	hub           *Hub
	pattern       Pattern
	transport     Transport
	transportName string
	cfg           routeConfig
	// requiresSubject: the transport cannot carry an event without a subject
	// (SubjectRequirer), so Publish refuses those unless cfg.defaultSubject is set.
	requiresSubject bool
	queue           chan queued // direct mode only; closed by Hub.Close
	// space gets a token whenever a sender takes from queue, waking a publisher that
	// found it full (see Hub.enqueue).
	space chan struct{}
}

// queued is a direct-mode event and when Publish queued it: the acceptance time that
// travels to Send (WithAcceptedAt), so transports that pick recipients at delivery time
// (webhook, H6) do not count the time spent in the queue.
type queued struct {
	ev *cloudevent.Event
	at time.Time
}

// batchKey carries a delivery's batch and state in the Watermill message's context.
type batchKey struct{}

// delivery is what the middleware chain of one batch shares: the events and how many
// attempts were made so far.
type delivery struct {
	batch    []*cloudevent.Event
	attempts int
}

func deliveryFrom(ctx context.Context) *delivery {
	d, _ := ctx.Value(batchKey{}).(*delivery)
	return d
}

// startRoute adds the route's router handlers: one per unit of concurrency, each fed by
// its own subscription to the route's queue. The router is already running, so the
// handlers are started with RunHandlers.
//
// Why a queue and our own message.Subscriber rather than gochannel: direct delivery must
// not cost a round trip per event. A sender takes whatever is queued (up to the batch
// size) into one message, so one Send carries a batch, and it waits for that message's
// ack before taking the next: with one sender per route, order is kept. The router still
// gives what it is good at: the middleware chain, panic safety and a drained shutdown.
func (h *Hub) startRoute(r *route) error {
	r.queue = make(chan queued, r.cfg.queueSize)
	r.space = make(chan struct{}, 1)
	for i := range r.cfg.concurrency {
		name := r.cfg.name
		if r.cfg.concurrency > 1 {
			name = fmt.Sprintf("%s#%d", r.cfg.name, i)
		}
		h.drain.Add(1)
		sub := newRouteSubscriber(r)
		handler := h.router.AddConsumerHandler(name, r.cfg.name, sub, r.send)
		for _, m := range r.chain() {
			handler.AddMiddleware(m.fn)
		}
	}
	if err := h.router.RunHandlers(context.Background()); err != nil {
		return Wrap(Internal, err)
	}
	return nil
}

// send is the innermost handler: one Send of the batch.
func (r *route) send(msg *message.Message) error {
	return r.transport.Send(msg.Context(), deliveryFrom(msg.Context()).batch)
}

// next blocks for one queued event, then takes whatever else is queued up to the batch
// size, and returns the batch with its acceptance times (one time for the batch when
// all share it, the common case of one Publish call; else one per event id). It
// returns nil once the queue is closed and empty.
func (r *route) next() ([]*cloudevent.Event, accepted) {
	q, ok := <-r.queue
	if !ok {
		return nil, accepted{}
	}
	defer func() {
		select {
		case r.space <- struct{}{}:
		default:
		}
	}()
	batch := make([]*cloudevent.Event, 1, min(r.cfg.batchSize, 1+len(r.queue)))
	batch[0] = q.ev
	acc := accepted{all: q.at}
	add := func(q queued) {
		batch = append(batch, q.ev)
		if acc.byID == nil && q.at.Equal(acc.all) {
			return
		}
		if acc.byID == nil {
			acc.byID = make(map[string]time.Time, cap(batch))
			for _, ev := range batch[:len(batch)-1] {
				acc.byID[ev.ID] = acc.all
			}
		}
		// The same event queued twice keeps its later time: re-publishing an event
		// after an endpoint appeared reaches that endpoint (H6).
		if t, dup := acc.byID[q.ev.ID]; !dup || q.at.After(t) {
			acc.byID[q.ev.ID] = q.at
		}
	}
	for len(batch) < r.cfg.batchSize {
		select {
		case q, ok := <-r.queue:
			if !ok {
				return batch, acc
			}
			add(q)
		default:
			return batch, acc
		}
	}
	return batch, acc
}

// routeSubscriber is the message.Subscriber of one route sender. Watermill's contract:
// Close ends the subscription's channel (the router's subscriber decorator waits for it
// before it cancels the subscription's context).
type routeSubscriber struct {
	route     *route
	closing   chan struct{}
	closeOnce sync.Once
}

func newRouteSubscriber(r *route) *routeSubscriber {
	return &routeSubscriber{route: r, closing: make(chan struct{})}
}

func (s *routeSubscriber) Subscribe(ctx context.Context, _ string) (<-chan *message.Message, error) {
	out := make(chan *message.Message)
	go s.run(ctx, out)
	return out, nil
}

func (s *routeSubscriber) run(ctx context.Context, out chan<- *message.Message) {
	r := s.route
	h := r.hub
	defer close(out)
	drained := false
	defer func() {
		if !drained {
			h.drain.Done()
		}
	}()
	for {
		batch, acc := r.next()
		if batch == nil {
			// Report the route drained, but keep the subscription open until the router
			// closes it: a subscription ending on its own makes Watermill close the
			// router with an error log ("All handlers stopped").
			drained = true
			h.drain.Done()
			select {
			case <-ctx.Done():
			case <-s.closing:
			}
			return
		}
		if err := h.deliverCtx.Err(); err != nil {
			// Close timed out: what is still queued is recorded as failed, not sent.
			h.transportFailed(r, batch, Errorf(Canceled, "hub: closed before delivery"), 0, OutcomeDropped)
			continue
		}
		msg := message.NewMessage(batch[0].ID, nil)
		ctx := context.WithValue(h.deliverCtx, acceptedKey{}, acc)
		msg.SetContext(context.WithValue(ctx, batchKey{}, &delivery{batch: batch}))
		select {
		case out <- msg:
		case <-ctx.Done():
			h.transportFailed(r, batch, Errorf(Canceled, "hub: router stopped before delivery"), 0, OutcomeDropped)
			continue
		case <-s.closing:
			h.transportFailed(r, batch, Errorf(Canceled, "hub: router stopped before delivery"), 0, OutcomeDropped)
			continue
		}
		select {
		case <-msg.Acked():
		case <-msg.Nacked():
			// The chain turns every error into a failure event and acks; a nack means
			// the router recovered a panic outside it. The batch cannot be redelivered
			// from memory: record it.
			h.transportFailed(r, batch, Errorf(Internal, "hub: delivery aborted"), 0, OutcomeFailed)
		case <-ctx.Done():
			return
		case <-s.closing:
			return
		}
	}
}

func (s *routeSubscriber) Close() error {
	s.closeOnce.Do(func() { close(s.closing) })
	return nil
}

var _ message.Subscriber = (*routeSubscriber)(nil)
