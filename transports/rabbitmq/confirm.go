package rabbitmq

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/koder/eventhub/hub"
)

// confirmChannel is one AMQP channel in confirm mode whose confirms are tracked
// asynchronously: each publish registers its delivery tag in a map before it is sent,
// and one goroutine resolves tags as basic.ack/basic.nack arrive, so hundreds of
// messages are in flight per channel and each sender still learns its own outcome.
//
// Written here rather than taken from a library because neither option fits:
// watermill-amqp's ConfirmDelivery waits for each confirm in turn (one round trip per
// message, RabbitMQ's slowest strategy), and amqp091-go's DeferredConfirmation does not
// tie a basic.return to its publish. A mandatory message that no queue is bound for is
// returned and then acked, so an ack alone would report it delivered. RabbitMQ sends the
// return before the ack on the same channel and amqp091-go hands both to listeners in
// that order, so draining the returns channel before resolving each ack attributes
// every return to its publish (matched on message id and routing key).
type confirmChannel struct {
	ch        *amqp.Channel
	gen       uint64
	mandatory bool
	window    chan struct{} // in-flight slots (Config.MaxInFlight)

	pubMu sync.Mutex // orders GetNextPublishSeqNo + Publish + register

	mu       sync.Mutex
	pending  map[uint64]waiter
	returned map[string][]amqp.Return
	closeErr error

	done chan struct{} // closed once the channel is gone and every waiter failed
}

// waiter is one message of a batch waiting for its confirm.
type waiter struct {
	batch *batchWait
	idx   int
	key   string // message id + routing key, to match a basic.return
}

// batchWait collects the outcomes of one Send's messages.
type batchWait struct {
	errs      []error
	remaining atomic.Int64
	done      chan struct{}
}

func newBatchWait(n int) *batchWait {
	b := &batchWait{errs: make([]error, n), done: make(chan struct{})}
	b.remaining.Store(int64(n))
	if n == 0 {
		close(b.done)
	}
	return b
}

func (b *batchWait) resolve(i int, err error) {
	b.errs[i] = err
	if b.remaining.Add(-1) == 0 {
		close(b.done)
	}
}

func openConfirmChannel(conn *amqp.Connection, gen uint64, mandatory bool, window int) (*confirmChannel, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, wrap(err)
	}
	if err := ch.Confirm(false); err != nil {
		_ = ch.Close()
		return nil, wrap(err)
	}
	c := &confirmChannel{
		ch: ch, gen: gen, mandatory: mandatory, window: make(chan struct{}, window),
		pending: make(map[uint64]waiter, window), returned: map[string][]amqp.Return{},
		done: make(chan struct{}),
	}
	// Buffers as large as the window keep amqp091-go's reader from ever blocking on us.
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, window))
	returns := ch.NotifyReturn(make(chan amqp.Return, window))
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	go c.track(confirms, returns, closed)
	return c, nil
}

func returnKey(messageID, routingKey string) string { return messageID + "\x00" + routingKey }

func (c *confirmChannel) track(confirms <-chan amqp.Confirmation, returns <-chan amqp.Return, closed <-chan *amqp.Error) {
	for {
		select {
		case r, ok := <-returns:
			if !ok {
				returns = nil
				continue
			}
			c.addReturn(r)
		case conf, ok := <-confirms:
			if !ok {
				c.fail(<-closed)
				return
			}
			// Returns sent before this ack are already buffered: take them first.
			for drained := false; !drained && returns != nil; {
				select {
				case r, ok := <-returns:
					if !ok {
						returns = nil
					} else {
						c.addReturn(r)
					}
				default:
					drained = true
				}
			}
			c.resolve(conf)
		}
	}
}

func (c *confirmChannel) addReturn(r amqp.Return) {
	k := returnKey(r.MessageId, r.RoutingKey)
	c.mu.Lock()
	c.returned[k] = append(c.returned[k], r)
	c.mu.Unlock()
}

func (c *confirmChannel) resolve(conf amqp.Confirmation) {
	c.mu.Lock()
	w, ok := c.pending[conf.DeliveryTag]
	delete(c.pending, conf.DeliveryTag)
	var ret *amqp.Return
	if ok {
		if rs := c.returned[w.key]; len(rs) > 0 {
			ret = &rs[0]
			if len(rs) == 1 {
				delete(c.returned, w.key)
			} else {
				c.returned[w.key] = rs[1:]
			}
		}
	}
	c.mu.Unlock()
	if !ok {
		return
	}
	<-c.window
	switch {
	case !conf.Ack:
		w.batch.resolve(w.idx, hub.Wrap(hub.Unavailable, errNacked))
	case ret != nil:
		err := &amqp.Error{Code: int(ret.ReplyCode), Reason: ret.ReplyText}
		w.batch.resolve(w.idx, hub.Errorf(classify(err), "rabbitmq: message returned as unroutable (%d %s): no queue is bound for routing key %q on exchange %q",
			ret.ReplyCode, ret.ReplyText, ret.RoutingKey, ret.Exchange))
	default:
		w.batch.resolve(w.idx, nil)
	}
}

// fail resolves every waiter once the channel is gone. Their messages may or may not
// have reached a queue; without a confirm they must count as failed (at-least-once:
// the caller's retry may duplicate, never lose).
func (c *confirmChannel) fail(reason *amqp.Error) {
	var cause error = amqp.ErrClosed
	if reason != nil {
		cause = reason
	}
	err := hub.Errorf(classify(cause), "rabbitmq: channel closed before the broker confirmed the message (outcome unknown): %w", cause)
	c.mu.Lock()
	c.closeErr = err
	pending := c.pending
	c.pending = map[uint64]waiter{}
	c.mu.Unlock()
	for _, w := range pending {
		<-c.window
		w.batch.resolve(w.idx, err)
	}
	close(c.done)
}

func (c *confirmChannel) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return !c.ch.IsClosed()
	}
}

// outMsg is one message to publish.
type outMsg struct {
	exchange, key string
	pub           amqp.Publishing
}

// publish sends msgs in order and registers each with b (index offset first). It
// returns once every message is handed to the socket; outcomes arrive on b. A message
// that cannot be handed over is resolved with its error at once.
func (c *confirmChannel) publish(ctx context.Context, msgs []outMsg, b *batchWait, first int) {
	c.pubMu.Lock()
	defer c.pubMu.Unlock()
	for i, m := range msgs {
		idx := first + i
		select {
		case c.window <- struct{}{}:
		case <-ctx.Done():
			b.resolve(idx, ctx.Err())
			continue
		case <-c.done:
			b.resolve(idx, c.err())
			continue
		}
		tag := c.ch.GetNextPublishSeqNo()
		c.mu.Lock()
		if c.closeErr != nil {
			err := c.closeErr
			c.mu.Unlock()
			<-c.window
			b.resolve(idx, err)
			continue
		}
		c.pending[tag] = waiter{batch: b, idx: idx, key: returnKey(m.pub.MessageId, m.key)}
		c.mu.Unlock()
		if err := c.ch.PublishWithContext(ctx, m.exchange, m.key, c.mandatory, false, m.pub); err != nil {
			c.mu.Lock()
			_, mine := c.pending[tag]
			delete(c.pending, tag)
			c.mu.Unlock()
			if mine { // else fail() already resolved it
				<-c.window
				b.resolve(idx, wrap(err))
			}
		}
	}
}

func (c *confirmChannel) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closeErr != nil {
		return c.closeErr
	}
	return hub.Errorf(hub.Unavailable, "rabbitmq: channel closed")
}

func (c *confirmChannel) close() {
	_ = c.ch.Close()
}

// firstError summarises a batch: nil when all were confirmed, else the first failure's
// code with the count, so the hub retries (or not) on the right code.
func (b *batchWait) firstError() error {
	failed, first := 0, -1
	for i, err := range b.errs {
		if err != nil {
			failed++
			if first < 0 {
				first = i
			}
		}
	}
	if failed == 0 {
		return nil
	}
	err := b.errs[first]
	if len(b.errs) == 1 {
		return err
	}
	code := hub.Code(err)
	if code == hub.Canceled || code == hub.DeadlineExceeded {
		return err
	}
	return &hub.Error{Code: code, Msg: fmt.Sprintf("rabbitmq: %d of %d events not confirmed; first (#%d): %v", failed, len(b.errs), first, err), Err: err}
}
