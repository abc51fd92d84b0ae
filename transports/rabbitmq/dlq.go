package rabbitmq

import (
	"context"
	"errors"
	"maps"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// DeadLetter is one message in a consumer group's dead-letter queue.
type DeadLetter struct {
	ID         string            `json:"id"`          // event id (or the AMQP message id when malformed)
	Type       string            `json:"type"`        // event type (or "" when malformed)
	Reason     string            `json:"reason"`      // max_deliveries, malformed, unknown_version
	Error      string            `json:"error"`       // the final error
	Queue      string            `json:"queue"`       // the group queue it came from
	RoutingKey string            `json:"routing_key"` // the routing key it was published with
	At         time.Time         `json:"at"`          // when it was dead-lettered
	Retries    int               `json:"retries"`     // delayed retries it had
	Event      *cloudevent.Event `json:"event"`       // decoded event; nil when malformed
	Headers    amqp.Table        `json:"headers"`     // every header as received, x-death included
	Body       []byte            `json:"body"`
}

// DLQ lists, inspects, replays and purges a consumer group's dead-letter queue. It
// opens its own connection; it is for operators (admin API, CLI), not a hot path.
//
// AMQP 0-9-1 has no way to read a queue without taking messages off it, so List and
// Inspect get messages without acking them and then close the channel, which returns
// them to the queue in their original order (classic queues; quorum queues requeue at
// the back), and wait (up to returnWait) until the queue has them back. They see at
// most DefaultDLQScanLimit messages.
type DLQ struct {
	cfg  Config
	conn *amqp.Connection
}

// OpenDLQ connects for DLQ administration of cfg.Queue's group.
func OpenDLQ(ctx context.Context, cfg Config) (*DLQ, error) {
	defaulted := cfg.QueueType == ""
	cfg.setDefaults()
	if err := cfg.validateConsumer(); err != nil {
		return nil, err
	}
	c := &connection{cfg: &cfg, name: "dlq", onConnect: func(conn *amqp.Connection) error {
		ch, err := conn.Channel()
		if err != nil {
			return err
		}
		defer ch.Close()
		if err := settleQueueType(conn, &cfg, &defaulted); err != nil {
			return err
		}
		return declareConsumer(ch, &cfg)
	}}
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	return &DLQ{cfg: cfg, conn: conn}, nil
}

// Close closes the DLQ's connection.
func (d *DLQ) Close() error {
	if err := d.conn.Close(); err != nil && !errors.Is(err, amqp.ErrClosed) {
		return wrap(err)
	}
	return nil
}

// returnWait bounds how long a scan waits for the messages it returned to be ready
// again (see scan).
const returnWait = 2 * time.Second

// scan gets up to limit messages (without ack) and calls fn for each; fn returns true
// to ack (remove) the message. Unacked ones return to the queue when the channel closes.
//
// A quorum queue takes them back asynchronously, after the close has returned, so
// scan then waits (up to returnWait) until the queue holds as many ready messages as
// before it less those it removed: a List followed at once by a Replay or Inspect, as
// an operator or a script does, must not miss messages still on their way back.
func (d *DLQ) scan(ctx context.Context, limit int, fn func(*amqp.Channel, *amqp.Delivery, *DeadLetter) (bool, error)) error {
	ch, err := d.conn.Channel()
	if err != nil {
		return wrap(err)
	}
	q, err := ch.QueueDeclarePassive(DLQName(d.cfg.Queue), true, false, false, false, nil)
	if err != nil {
		ch.Close()
		return wrap(err)
	}
	removed, err := d.scanOn(ctx, ch, limit, fn)
	if cerr := ch.Close(); cerr != nil && err == nil && !errors.Is(cerr, amqp.ErrClosed) {
		err = wrap(cerr)
	}
	if err == nil {
		d.awaitReady(ctx, q.Messages-removed)
	}
	return err
}

// awaitReady waits, up to returnWait, until the DLQ holds at least want ready messages.
// Best effort: another operator's purge or replay can keep it below, and the scan's
// result stands either way.
func (d *DLQ) awaitReady(ctx context.Context, want int) {
	ch, err := d.conn.Channel()
	if err != nil {
		return
	}
	defer ch.Close()
	deadline := time.Now().Add(returnWait)
	for {
		q, err := ch.QueueDeclarePassive(DLQName(d.cfg.Queue), true, false, false, false, nil)
		if err != nil || q.Messages >= want || time.Now().After(deadline) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// scanOn is scan's loop on an open channel; it returns how many messages it acked.
func (d *DLQ) scanOn(ctx context.Context, ch *amqp.Channel, limit int, fn func(*amqp.Channel, *amqp.Delivery, *DeadLetter) (bool, error)) (acked int, err error) {
	if err := ch.Confirm(false); err != nil {
		return 0, wrap(err)
	}
	for range limit {
		if err := ctx.Err(); err != nil {
			return acked, err
		}
		m, ok, err := ch.Get(DLQName(d.cfg.Queue), false)
		if err != nil {
			return acked, wrap(err)
		}
		if !ok {
			return acked, nil
		}
		done, err := fn(ch, &m, toDeadLetter(&m))
		if err != nil {
			return acked, err
		}
		if done {
			if err := m.Ack(false); err != nil {
				return acked, wrap(err)
			}
			acked++
		}
	}
	return acked, nil
}

func toDeadLetter(m *amqp.Delivery) *DeadLetter {
	str := func(k string) string { s, _ := m.Headers[k].(string); return s }
	dl := &DeadLetter{ID: m.MessageId, Reason: str(HeaderDLQReason), Error: str(HeaderDLQError),
		Queue: str(HeaderDLQQueue), RoutingKey: str(HeaderDLQRoutingKey), Headers: m.Headers, Body: m.Body}
	dl.At, _ = time.Parse(time.RFC3339Nano, str(HeaderDLQAt))
	if n, ok := m.Headers[HeaderDLQRetries].(int32); ok {
		dl.Retries = int(n)
	}
	if ev, err := decode(m); err == nil {
		dl.Event, dl.ID, dl.Type = ev, ev.ID, ev.Type
	}
	return dl
}

// List returns up to limit dead letters (0: DefaultDLQScanLimit), oldest first.
func (d *DLQ) List(ctx context.Context, limit int) ([]DeadLetter, error) {
	if limit <= 0 {
		limit = DefaultDLQScanLimit
	}
	var out []DeadLetter
	err := d.scan(ctx, limit, func(_ *amqp.Channel, _ *amqp.Delivery, dl *DeadLetter) (bool, error) {
		out = append(out, *dl)
		return false, nil
	})
	return out, err
}

// Inspect returns the dead letter with event id, or NotFound.
func (d *DLQ) Inspect(ctx context.Context, id string) (*DeadLetter, error) {
	var found *DeadLetter
	err := d.scan(ctx, DefaultDLQScanLimit, func(_ *amqp.Channel, _ *amqp.Delivery, dl *DeadLetter) (bool, error) {
		if found == nil && dl.ID == id {
			found = dl
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, hub.Errorf(hub.NotFound, "rabbitmq: no dead letter with id %q in %s", id, DLQName(d.cfg.Queue))
	}
	return found, nil
}

// Replay moves the dead letters with the given event ids (none: all) back into the
// group's queue, with the dead-letter and x-death headers removed so they get a fresh
// set of retries. Each is removed from the DLQ only after the broker confirmed its copy.
// It returns how many were replayed.
func (d *DLQ) Replay(ctx context.Context, ids ...string) (int, error) {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	n := 0
	err := d.scan(ctx, DefaultDLQScanLimit, func(ch *amqp.Channel, m *amqp.Delivery, dl *DeadLetter) (bool, error) {
		if len(want) > 0 && !want[dl.ID] {
			return false, nil
		}
		h := maps.Clone(m.Headers)
		for k := range h {
			if strings.HasPrefix(k, "x-death") || strings.HasPrefix(k, "x-first-death") || strings.HasPrefix(k, "x-last-death") ||
				strings.HasPrefix(k, "eventhub-dlq-") || k == "x-delivery-count" {
				delete(h, k)
			}
		}
		conf, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", d.cfg.Queue, true, false, amqp.Publishing{
			Headers: h, ContentType: m.ContentType, ContentEncoding: m.ContentEncoding, DeliveryMode: amqp.Persistent,
			CorrelationId: m.CorrelationId, MessageId: m.MessageId, Timestamp: m.Timestamp, Type: m.Type, AppId: m.AppId, Body: m.Body,
		})
		if err != nil {
			return false, wrap(err)
		}
		// One confirm at a time is fine here: replay is an operator action, not a hot path.
		ok, err := conf.WaitContext(ctx)
		if err != nil {
			return false, err
		}
		if !ok {
			return false, hub.Wrap(hub.Unavailable, errNacked)
		}
		n++
		return true, nil
	})
	return n, err
}

// Purge deletes every dead letter and returns how many there were.
func (d *DLQ) Purge(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	ch, err := d.conn.Channel()
	if err != nil {
		return 0, wrap(err)
	}
	defer ch.Close()
	n, err := ch.QueuePurge(DLQName(d.cfg.Queue), false)
	return n, wrap(err)
}
