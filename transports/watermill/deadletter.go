package watermill

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/koder/eventhub/cloudevent"
)

// Reasons a message is dead-lettered (MetaDLQReason), the same words as the stream
// transports' DLQs.
const (
	ReasonMaxDeliveries  = "max_deliveries"
	ReasonMalformed      = "malformed"
	ReasonUnknownVersion = "unknown_version"
)

// Metadata a dead letter carries besides the original message's.
const (
	MetaDLQReason     = "eventhub_dlq_reason"     // ReasonXxx
	MetaDLQError      = "eventhub_dlq_error"      // the final error's text (at most 1 KiB)
	MetaDLQTopic      = "eventhub_dlq_topic"      // the topic it was consumed from
	MetaDLQDeliveries = "eventhub_dlq_deliveries" // deliveries it had (0: not counted)
	MetaDLQAt         = "eventhub_dlq_at"         // when, RFC 3339 with milliseconds, UTC
)

// maxErrorText bounds the error text a dead letter carries: header-based brokers limit
// header sizes.
const maxErrorText = 1024

// deadLetter publishes a copy of msg with the reason to the dead-letter topic and acks
// msg; if that publish fails the message is nacked, so it stays with the broker. ev is
// nil for a malformed message.
func (c *Consumer) deadLetter(msg *message.Message, ev *cloudevent.Event, reason string, cause error, deliveries int) {
	id, typ := msg.UUID, ""
	if ev != nil {
		id, typ = ev.ID, ev.Type
	}
	if c.cfg.DeadLetter == nil {
		// Only with NeverDeadLetter, and only for what no retry can fix.
		c.cfg.Logger.Error("event_dlq: no dead-letter publisher; the message is dropped", "event_id", id, "type", typ,
			"reason", reason, "final_error", cause.Error())
		msg.Ack()
		c.counts.forget(msg)
		return
	}
	dl := msg.Copy()
	text := cause.Error()
	if len(text) > maxErrorText {
		text = text[:maxErrorText]
	}
	dl.Metadata.Set(MetaDLQReason, reason)
	dl.Metadata.Set(MetaDLQError, text)
	dl.Metadata.Set(MetaDLQTopic, c.cfg.Topic)
	dl.Metadata.Set(MetaDLQDeliveries, strconv.Itoa(deliveries))
	dl.Metadata.Set(MetaDLQAt, time.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dl.SetContext(ctx)
	if err := c.cfg.DeadLetter.Publish(c.cfg.DeadLetterTopic, dl); err != nil {
		c.cfg.Logger.Warn("dead-letter publish failed; the message stays with the broker", "event_id", id,
			"topic", c.cfg.DeadLetterTopic, "error", err.Error())
		msg.Nack()
		return
	}
	msg.Ack()
	c.counts.forget(msg)
	c.dlq.WithLabelValues(c.cfg.Name, c.cfg.Topic, reason).Inc()
	c.cfg.Logger.LogAttrs(context.Background(), slog.LevelWarn, "event_dlq", slog.String("type", typ), slog.String("event_id", id),
		slog.String("final_error", text), slog.String("reason", reason))
}
