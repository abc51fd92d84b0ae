package rabbitmq

import (
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub/transporttest"
)

// deliver turns a Publishing into the Delivery a consumer would see.
func deliver(p amqp.Publishing, extra amqp.Table) *amqp.Delivery {
	h := amqp.Table{}
	for k, v := range p.Headers {
		h[k] = v
	}
	for k, v := range extra {
		h[k] = v
	}
	return &amqp.Delivery{Headers: h, ContentType: p.ContentType, Body: p.Body, MessageId: p.MessageId, DeliveryMode: p.DeliveryMode}
}

func TestBinding(t *testing.T) {
	t.Parallel()
	events := map[string]*cloudevent.Event{
		"full": transporttest.FullEvent(), "binary": transporttest.BinaryEvent(), "minimal": transporttest.MinimalEvent(),
	}

	for _, mode := range []string{ModeBinary, ModeStructured} {
		for name, ev := range events {
			t.Run(mode+"/"+name, func(t *testing.T) {
				t.Parallel()
				p, err := encode(ev, mode, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				if p.DeliveryMode != amqp.Persistent {
					t.Errorf("delivery mode %d, want persistent", p.DeliveryMode)
				}
				got, err := decode(deliver(p, nil))
				if err != nil {
					t.Fatal(err)
				}
				if d := transporttest.Diff(ev, got); d != "" {
					t.Fatalf("round trip changed the event:\n%s", d)
				}
			})
		}
	}

	t.Run("BinaryWireFormat", func(t *testing.T) {
		t.Parallel()
		ev := transporttest.FullEvent()
		p, err := encode(ev, ModeBinary, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]any{
			"cloudEvents:specversion": "1.0", "cloudEvents:id": ev.ID, "cloudEvents:source": ev.Source,
			"cloudEvents:type": ev.Type, "cloudEvents:subject": ev.Subject, "cloudEvents:dataschema": ev.DataSchema,
			"cloudEvents:tenantid": ev.TenantID(), "cloudEvents:flag": true, "cloudEvents:count": int32(-7),
			"cloudEvents:home": "https://example.com/ü?q=1#f", "cloudEvents:rel": "../a/b?c=d",
			"cloudEvents:time": ev.Time.Format(time.RFC3339Nano),
		}
		for k, v := range want {
			if p.Headers[k] != v {
				t.Errorf("header %s = %#v (%T), want %#v (%T)", k, p.Headers[k], p.Headers[k], v, v)
			}
		}
		if string(p.Headers["cloudEvents:blob"].([]byte)) != string(ev.Extensions["blob"].([]byte)) {
			t.Errorf("binary extension not carried as AMQP bytes")
		}
		if p.ContentType != ev.DataContentType || string(p.Body) != string(ev.Data) {
			t.Errorf("content-type %q body %q, want datacontenttype and data", p.ContentType, p.Body)
		}
		if err := p.Headers.Validate(); err != nil {
			t.Errorf("headers are not a valid AMQP table: %v", err)
		}
	})

	t.Run("WholeSecondTimestampIsNative", func(t *testing.T) {
		t.Parallel()
		ev := transporttest.MinimalEvent()
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		ev.SetExtension("at", at)
		p, _ := encode(ev, ModeBinary, time.Now())
		if v, ok := p.Headers["cloudEvents:at"].(time.Time); !ok || !v.Equal(at) {
			t.Fatalf("header = %#v, want an AMQP timestamp", p.Headers["cloudEvents:at"])
		}
		got, err := decode(deliver(p, nil))
		if err != nil || !got.Extensions["at"].(time.Time).Equal(at) {
			t.Fatalf("decode: %v %#v", err, got)
		}
	})

	t.Run("BrokerHeadersNeverBreakDecoding", func(t *testing.T) {
		t.Parallel()
		ev := transporttest.FullEvent()
		p, _ := encode(ev, ModeBinary, time.Now())
		broker := amqp.Table{
			"x-death": []any{
				amqp.Table{"count": int64(2), "reason": "expired", "queue": "q.retry", "time": time.Unix(1700000000, 0),
					"exchange": "", "routing-keys": []any{"q.retry"}},
				amqp.Table{"count": int64(2), "reason": "rejected", "queue": "q", "time": time.Unix(1700000000, 0),
					"exchange": "ex", "routing-keys": []any{"identity.user.created"}},
			},
			"x-first-death-exchange": "ex", "x-first-death-queue": "q", "x-first-death-reason": "rejected",
			"x-delivery-count": int64(3), "x-custom-table": amqp.Table{"a": []any{int8(1), nil, 2.5}},
			"x-decimal": amqp.Decimal{Scale: 2, Value: 314},
		}
		got, err := decode(deliver(p, broker))
		if err != nil {
			t.Fatal(err)
		}
		if d := transporttest.Diff(ev, got); d != "" {
			t.Fatalf("decoding with broker headers changed the event:\n%s", d)
		}
		if n := retryCount(broker, "q"); n != 2 {
			t.Errorf("retryCount = %d, want 2", n)
		}
		if k := originalRoutingKey(&amqp.Delivery{Headers: broker, RoutingKey: "q"}); k != "identity.user.created" {
			t.Errorf("original routing key = %q", k)
		}
		if n := retryCount(amqp.Table{"x-death": "garbage"}, "q"); n != 0 {
			t.Errorf("retryCount of a malformed x-death = %d, want 0", n)
		}
	})

	t.Run("OtherClientsTypes", func(t *testing.T) {
		t.Parallel()
		got, err := decode(&amqp.Delivery{ContentType: "text/plain", Body: []byte("hi"), Headers: amqp.Table{
			"cloudEvents_specversion": "1.0", "cloudEvents_id": "x1", "cloudEvents_source": "/s", "cloudEvents_type": "t",
			"cloudEvents:n64": int64(42), "cloudEvents:big": int64(1 << 40), "cloudEvents:f": 1.5, "cloudEvents:time": time.Unix(1700000000, 0),
		}})
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != "x1" || got.Extensions["n64"] != int32(42) || got.Extensions["big"] != "1099511627776" || got.Extensions["f"] != "1.5" ||
			!got.Time.Equal(time.Unix(1700000000, 0)) || string(got.Data) != "hi" {
			t.Fatalf("decoded %+v", got)
		}
	})

	t.Run("MalformedListsEveryProblem", func(t *testing.T) {
		t.Parallel()
		_, err := decode(&amqp.Delivery{Headers: amqp.Table{"cloudEvents:specversion": "0.3", "cloudEvents:time": "yesterday"}})
		me, ok := err.(*MalformedError)
		if !ok || len(me.Problems) != 5 {
			t.Fatalf("err = %v, want a MalformedError with 5 problems (specversion, time, id, source, type)", err)
		}
	})
}
