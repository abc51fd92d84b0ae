package rabbitmq

import (
	"bytes"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/koder/eventhub/hub/transporttest"
)

// TestC1_InteropPlainAMQP reads what the publisher sends with plain amqp091-go, as any
// AMQP consumer would: none of this package's decoding code runs on the reading side.
// Every CloudEvents attribute must be a `cloudEvents:` header with its native AMQP type,
// datacontenttype the content-type property and the data the body, byte for byte.
func TestC1_InteropPlainAMQP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.config(t)
	tr := newTransport(t, cfg)

	// A queue declared by the foreign consumer itself, bound by type.
	q, err := b.admin.QueueDeclare("", false, true, true, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.admin.QueueBind(q.Name, "identity.user.*", b.exchange, false, nil); err != nil {
		t.Fatal(err)
	}
	deliveries, err := b.admin.Consume(q.Name, "", true, true, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := transporttest.FullEvent()
	mustSend(t, tr, ev)

	var d amqp.Delivery
	select {
	case d = <-deliveries:
	case <-time.After(30 * time.Second):
		t.Fatal("plain consumer received nothing")
	}
	want := map[string]any{
		"cloudEvents:specversion":   "1.0",
		"cloudEvents:id":            ev.ID,
		"cloudEvents:source":        ev.Source,
		"cloudEvents:type":          ev.Type,
		"cloudEvents:subject":       ev.Subject,
		"cloudEvents:dataschema":    ev.DataSchema,
		"cloudEvents:time":          ev.Time.Format(time.RFC3339Nano),
		"cloudEvents:tenantid":      ev.TenantID(),
		"cloudEvents:actor":         ev.Actor(),
		"cloudEvents:correlationid": ev.CorrelationID(),
		"cloudEvents:dataversion":   ev.DataVersion(),
		"cloudEvents:traceparent":   ev.Extension("traceparent"),
		"cloudEvents:tracestate":    ev.Extension("tracestate"),
		"cloudEvents:flag":          true,
		"cloudEvents:count":         int32(-7),
		"cloudEvents:big":           int32(2147483647),
		"cloudEvents:home":          "https://example.com/ü?q=1#f",
		"cloudEvents:rel":           "../a/b?c=d",
		"cloudEvents:when":          "2025-01-02T03:04:05.6Z",
		"cloudEvents:note":          ev.Extension("note"),
	}
	for k, v := range want {
		if got := d.Headers[k]; got != v {
			t.Errorf("header %s = %#v (%T), want %#v (%T)", k, got, got, v, v)
		}
	}
	if blob, _ := d.Headers["cloudEvents:blob"].([]byte); !bytes.Equal(blob, ev.Extensions["blob"].([]byte)) {
		t.Errorf("header cloudEvents:blob = %#v, want the raw bytes", d.Headers["cloudEvents:blob"])
	}
	if d.ContentType != ev.DataContentType {
		t.Errorf("content-type = %q, want %q", d.ContentType, ev.DataContentType)
	}
	if !bytes.Equal(d.Body, ev.Data) {
		t.Errorf("body = %q, want the data %q", d.Body, ev.Data)
	}
	if d.RoutingKey != ev.Type || d.DeliveryMode != amqp.Persistent || d.MessageId != ev.ID {
		t.Errorf("routing key %q, delivery mode %d, message id %q", d.RoutingKey, d.DeliveryMode, d.MessageId)
	}
}
