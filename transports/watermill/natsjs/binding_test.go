package natsjs

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	"pgregory.net/rapid"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub/transporttest"
	wm "github.com/koder/eventhub/transports/watermill"
)

// headerSafe reports whether v can be a raw NATS header value: no control character and
// no leading or trailing blank (the parser trims those).
func headerSafe(v string) bool {
	if v != strings.TrimLeft(v, " \t") || v != strings.TrimRight(v, " \t") {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// TestWM_NATSBindingRoundTrip: event -> Watermill message -> NATS message -> Watermill
// message -> event is unchanged in both modes, and every header value is safe on the
// wire.
func TestWM_NATSBindingRoundTrip(t *testing.T) {
	t.Parallel()
	for _, mode := range []wm.Mode{wm.ModeBinary, wm.ModeStructured} {
		for _, ev := range []*cloudevent.Event{transporttest.FullEvent(), transporttest.BinaryEvent(), transporttest.MinimalEvent()} {
			msg, err := wm.Encode(ev, mode)
			if err != nil {
				t.Fatal(err)
			}
			nm, err := Marshaler{}.Marshal("s", msg)
			if err != nil {
				t.Fatal(err)
			}
			for k, vs := range nm.Header {
				if !headerSafe(vs[0]) {
					t.Errorf("%s: header %s = %q is not wire-safe", mode, k, vs[0])
				}
			}
			back, err := Marshaler{}.Unmarshal(nm)
			if err != nil {
				t.Fatal(err)
			}
			got, err := wm.Decode(back)
			if err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
			want := ev
			if mode == wm.ModeStructured {
				want = transporttest.JSONExtensions(ev)
			}
			if !reflect.DeepEqual(want, got) {
				t.Errorf("%s:\n%s", mode, transporttest.Diff(want, got))
			}
		}
	}
}

// TestWM_NATSHeaderEncoding: values that can travel raw do (so other readers of the
// binding see them unchanged); the others are percent-encoded, wire-safe, and decode
// back.
func TestWM_NATSHeaderEncoding(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"plain", "50%", "Zoë 日本 🚀", "a,b;c=d", `"q"`} {
		if got, enc := encodeValue(v); enc || got != v {
			t.Errorf("%q encoded as %q", v, got)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		v := rapid.String().Draw(t, "v")
		if rapid.Bool().Draw(t, "bytes") {
			v = string(rapid.SliceOf(rapid.Byte()).Draw(t, "b"))
		}
		enc, _ := encodeValue(v)
		if !headerSafe(enc) {
			t.Fatalf("%q encoded as unsafe %q", v, enc)
		}
		if _, was := encodeValue(v); was {
			dec, err := decodeValue(enc)
			if err != nil || dec != v {
				t.Fatalf("%q -> %q -> %q, %v", v, enc, dec, err)
			}
		}
	})
}

// TestWM_NATSBindingForeignProducers reads binding messages other producers write:
// header names in any case, content-type as datacontenttype, no hub extras.
func TestWM_NATSBindingForeignProducers(t *testing.T) {
	t.Parallel()
	nm := &nats.Msg{Subject: "s", Data: []byte(`{"a":1}`), Header: nats.Header{
		"Ce-Specversion": {"1.0"}, "Ce-Id": {"e1"}, "Ce-Source": {"/s"}, "Ce-Type": {"a.b"},
		"Ce-Tenantid": {"t1"}, "Content-Type": {"application/json"}, "X-Other": {"kept"},
	}}
	msg, err := Marshaler{}.Unmarshal(nm)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := wm.Decode(msg)
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != "e1" || ev.Type != "a.b" || ev.DataContentType != "application/json" || ev.TenantID() != "t1" || string(ev.Data) != `{"a":1}` {
		t.Fatalf("%+v", ev)
	}
	if msg.Metadata.Get("X-Other") != "kept" {
		t.Fatalf("metadata %v", msg.Metadata)
	}
	if _, err := (Marshaler{}).Marshal("s", message.NewMessage("x", nil)); err != nil {
		t.Fatalf("a plain Watermill message: %v", err)
	}
	bad := message.NewMessage("x", nil)
	bad.Metadata.Set("has space", "v")
	if _, err := (Marshaler{}).Marshal("s", bad); err == nil {
		t.Fatal("a metadata key that is no header name was accepted")
	}
}

// FuzzUnmarshal feeds arbitrary headers to the binding reader: it never panics, and
// what it reads survives a write and a second read unchanged.
func FuzzUnmarshal(f *testing.F) {
	f.Add("ce-specversion", "1.0", "ce-note", "a%0Ab", HeaderEncoded, "ce-note", []byte("data"))
	f.Add("Ce-Id", "x", "content-type", "text/plain", "Nats-Msg-Id", "y", []byte{0xff})
	f.Add(HeaderEncoded, "k", "k", "%zz", "ce-a", "", []byte(nil))
	f.Add(HeaderExtTypes, "n:integer", "ce-n", "7", "ce-specversion", "1.0", []byte("{}"))
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string, data []byte) {
		h := nats.Header{}
		for _, kv := range [][2]string{{k1, v1}, {k2, v2}, {k3, v3}} {
			if kv[0] != "" && !strings.ContainsAny(kv[0], ": \t\r\n") {
				h[kv[0]] = []string{kv[1]}
			}
		}
		msg, err := Marshaler{}.Unmarshal(&nats.Msg{Subject: "s", Header: h, Data: data})
		if err != nil {
			return
		}
		nm, err := Marshaler{}.Marshal("s", msg)
		if err != nil {
			return // metadata keys only a foreign producer could write
		}
		again, err := Marshaler{}.Unmarshal(nm)
		if err != nil {
			t.Fatalf("re-read of our own write: %v", err)
		}
		if again.UUID != msg.UUID || !reflect.DeepEqual(again.Metadata, msg.Metadata) || string(again.Payload) != string(msg.Payload) {
			t.Fatalf("changed: %q %v -> %q %v", msg.UUID, msg.Metadata, again.UUID, again.Metadata)
		}
	})
}
