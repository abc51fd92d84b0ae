package rabbitmq

import (
	"context"
	"log/slog"
	"maps"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/koder/eventhub/cloudevent"
)

// Dead-letter reasons, as in the event_dlq_total "reason" label and the
// eventhub-dlq-reason header.
const (
	reasonMaxDeliveries  = "max_deliveries"
	reasonMalformed      = "malformed"
	reasonUnknownVersion = "unknown_version"
)

// Headers the consumer adds to a dead-lettered message.
const (
	HeaderDLQReason     = "eventhub-dlq-reason"      // max_deliveries, malformed, unknown_version
	HeaderDLQError      = "eventhub-dlq-error"       // the final error's text
	HeaderDLQQueue      = "eventhub-dlq-queue"       // the group queue it came from
	HeaderDLQRoutingKey = "eventhub-dlq-routing-key" // the routing key it was published with
	HeaderDLQAt         = "eventhub-dlq-at"          // when, RFC 3339 with ms
	HeaderDLQRetries    = "eventhub-dlq-retries"     // delayed retries it had
)

// retryCount is how many times the broker moved the message from queue into the retry
// queue: the count of its x-death entry {queue: queue, reason: rejected}. x-death is an
// array of tables whose types other clients may vary; anything unexpected counts as 0.
func retryCount(h amqp.Table, queue string) int {
	deaths, _ := h["x-death"].([]any)
	for _, d := range deaths {
		t, ok := d.(amqp.Table)
		if !ok {
			continue
		}
		if q, _ := t["queue"].(string); q != queue {
			continue
		}
		if r, _ := t["reason"].(string); r != "rejected" {
			continue
		}
		switch n := t["count"].(type) {
		case int64:
			return int(n)
		case int32:
			return int(n)
		case int:
			return n
		}
	}
	return 0
}

// originalRoutingKey recovers the routing key the message was published with: dead-
// lettering through the retry queue replaces it, and x-death keeps the original.
func originalRoutingKey(d *amqp.Delivery) string {
	deaths, _ := d.Headers["x-death"].([]any)
	for i := len(deaths) - 1; i >= 0; i-- {
		t, _ := deaths[i].(amqp.Table)
		if keys, _ := t["routing-keys"].([]any); len(keys) > 0 {
			if k, ok := keys[0].(string); ok {
				return k
			}
		}
	}
	return d.RoutingKey
}

func publishedAt(d *amqp.Delivery) time.Time {
	if ms, ok := d.Headers[publishedHeader].(int64); ok {
		return time.UnixMilli(ms)
	}
	return d.Timestamp
}

// validate applies the CloudEvents checks to a decoded event (C1: incoming events are
// validated on parse).
func validate(ev *cloudevent.Event) error {
	return ev.Validate()
}

// deadLetter copies the delivery, unchanged but for the reason headers, into the DLQ,
// waits for the broker's confirm and only then acks the original: a crash in between
// duplicates the dead letter, never loses it. If the DLQ publish fails the delivery is
// nacked into the retry queue, so it comes back after the delay instead of looping hot.
func (c *Consumer) deadLetter(d *amqp.Delivery, dlq *confirmChannel, ev *cloudevent.Event, reason string, cause error) {
	h := maps.Clone(d.Headers)
	if h == nil {
		h = amqp.Table{}
	}
	h[HeaderDLQReason] = reason
	h[HeaderDLQError] = truncate(cause.Error(), 4096)
	h[HeaderDLQQueue] = c.cfg.Queue
	h[HeaderDLQRoutingKey] = originalRoutingKey(d)
	h[HeaderDLQAt] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00")
	h[HeaderDLQRetries] = int32(retryCount(d.Headers, c.cfg.Queue))
	pub := amqp.Publishing{
		Headers: h, ContentType: d.ContentType, ContentEncoding: d.ContentEncoding,
		DeliveryMode: amqp.Persistent, Priority: d.Priority, CorrelationId: d.CorrelationId,
		ReplyTo: d.ReplyTo, MessageId: d.MessageId, Timestamp: d.Timestamp, Type: d.Type,
		UserId: d.UserId, AppId: d.AppId, Body: d.Body,
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ConfirmTimeout)
	defer cancel()
	b := newBatchWait(1)
	dlq.publish(ctx, []outMsg{{exchange: "", key: DLQName(c.cfg.Queue), pub: pub}}, b, 0)
	select {
	case <-b.done:
	case <-ctx.Done():
		b.errs[0] = ctx.Err()
	}
	id, typ := d.MessageId, d.RoutingKey
	if ev != nil {
		id, typ = ev.ID, ev.Type
	}
	if err := b.errs[0]; err != nil {
		c.log.Warn("rabbitmq_dlq_publish_failed", "event_id", id, "error", err.Error())
		_ = d.Nack(false, false)
		return
	}
	if err := d.Ack(false); err != nil {
		c.log.Warn("rabbitmq_ack_failed", "event_id", id, "error", err.Error())
	}
	c.cfg.Metrics.DLQ.WithLabelValues(transportLabel, c.cfg.Queue, reason).Inc()
	c.log.LogAttrs(context.Background(), slog.LevelWarn, "event_dlq", slog.String("type", typ), slog.String("event_id", id),
		slog.String("final_error", cause.Error()), slog.String("reason", reason))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
