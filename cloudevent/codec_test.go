package cloudevent

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"
	"pgregory.net/rapid"
)

func TestC1_WatermillRoundTrip(t *testing.T) {
	t.Parallel()
	t.Run("Lossless", func(t *testing.T) {
		t.Parallel()
		rapid.Check(t, func(t *rapid.T) {
			ev := genEvent(t)
			msg, err := ToMessage(ev)
			if err != nil {
				t.Fatal(err)
			}
			if msg.UUID != ev.ID {
				t.Fatalf("UUID %q, id %q", msg.UUID, ev.ID)
			}
			// Copy as a Pub/Sub would, and add metadata of the kind middleware sets.
			c := msg.Copy()
			c.Metadata.Set("correlation_id", "x")
			got, err := FromMessage(c)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, ev) {
				t.Fatalf("round trip changed the event\n got %#v\nwant %#v", got, ev)
			}
		})
	})
	t.Run("InvalidMessage", func(t *testing.T) {
		t.Parallel()
		msg := message.NewMessage("", []byte("{"))
		msg.Metadata.Set(MetaPrefix+"time", "later")
		_, err := FromMessage(msg)
		var ve *ValidationError
		if !errors.As(err, &ve) || !ve.Has("id") || !ve.Has("time") || !ve.Has("data") || !ve.Has("tenantid") {
			t.Fatalf("err %v", err)
		}
	})
}

// seedEnvelope is seed 001's example envelope.
const seedEnvelope = `{
  "event_id": "uuid",
  "correlation_id": "uuid",
  "event_type": "user.created",
  "version": "1.0.0",
  "timestamp": "2024-01-15T10:30:00.000Z",
  "source": "identity-platform",
  "data": {
    "user_id": "uuid",
    "email": "user@acme.com"
  },
  "metadata": {
    "ip": "192.168.1.1",
    "user_agent": "Mozilla/5.0...",
    "request_id": "uuid"
  }
}`

func TestE1_Envelope(t *testing.T) {
	t.Parallel()
	t.Run("SeedExampleParses", func(t *testing.T) {
		t.Parallel()
		ev, err := FromEnvelope([]byte(seedEnvelope), WithEnvelopeTenant("tenant-A"))
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != "user.created" || ev.CorrelationID() != "uuid" || ev.DataVersion() != "1.0.0" ||
			ev.Extension("ip") != "192.168.1.1" || ev.Extension("useragent") != "Mozilla/5.0..." ||
			ev.Extension("requestid") != "uuid" || ev.TenantID() != "tenant-A" || ev.Time.UnixMilli() != 1705314600000 {
			t.Fatalf("%#v", ev)
		}
		var data map[string]string
		if err := ev.DataAs(&data); err != nil || data["email"] != "user@acme.com" {
			t.Fatalf("data %v %v", data, err)
		}
	})
	t.Run("WithoutTenantIsInvalid", func(t *testing.T) {
		t.Parallel()
		_, err := FromEnvelope([]byte(seedEnvelope))
		if ve, ok := err.(*ValidationError); !ok || !ve.Has(ExtTenantID) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("BadMetadataListed", func(t *testing.T) {
		t.Parallel()
		_, err := FromEnvelope([]byte(`{"event_id":"1","event_type":"t","source":"s","timestamp":"x",
			"metadata":{"tenant_id":"a","Weird.Key":"v","nested":{"a":1},"n":1.5}}`))
		var ve *ValidationError
		if !errors.As(err, &ve) || !ve.Has("timestamp") || !ve.Has("metadata.Weird.Key") || !ve.Has("metadata.nested") || !ve.Has("metadata.n") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("NonJSONDataRejected", func(t *testing.T) {
		t.Parallel()
		ev := validEvent()
		_ = ev.SetData("image/png", []byte{1})
		if _, err := ToEnvelope(ev); err == nil {
			t.Fatal("binary data accepted")
		}
	})
	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		rapid.Check(t, func(t *rapid.T) {
			ev := genEvent(t)
			if !IsJSON(ev.DataContentType) {
				ev.DataContentType = ContentTypeJSON
				ev.Data = genJSON(t)
			}
			b, err := ToEnvelope(ev)
			if err != nil {
				t.Fatal(err)
			}
			got, err := FromEnvelope(b)
			if err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			want := stringTyped(ev)
			if want.DataContentType == "" {
				want.DataContentType = ContentTypeJSON
			}
			if want.Data != nil {
				var buf bytes.Buffer
				_ = json.Compact(&buf, want.Data)
				want.Data = buf.Bytes()
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round trip changed the event\n got %#v\nwant %#v\nenvelope %s", got, want, b)
			}
		})
	})
}
