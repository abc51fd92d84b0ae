package rabbitmq

import (
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// fuzzHeaders reads "name\x00<kind><value>\x00..." into an AMQP table, where kind picks
// the AMQP type of the value (s string, i int32, l int64, b bool, t timestamp, x bytes,
// n a nested table, a an array of tables like x-death), so the fuzzer mixes well-formed
// CloudEvents headers with broker bookkeeping of every shape.
func fuzzHeaders(b []byte) amqp.Table {
	parts := strings.Split(string(b), "\x00")
	t := amqp.Table{}
	for i := 0; i+1 < len(parts); i += 2 {
		name, raw := parts[i], parts[i+1]
		if raw == "" {
			t[name] = ""
			continue
		}
		kind, v := raw[0], raw[1:]
		n := int64(0)
		if len(v) >= 8 {
			n = int64(binary.LittleEndian.Uint64([]byte(v[:8])))
		}
		switch kind {
		case 'i':
			t[name] = int32(n)
		case 'l':
			t[name] = n
		case 'b':
			t[name] = len(v)%2 == 1
		case 't':
			t[name] = time.Unix(n%1e11, 0)
		case 'x':
			t[name] = []byte(v)
		case 'n':
			t[name] = amqp.Table{"reason": v, "count": n}
		case 'a':
			t[name] = []any{amqp.Table{"queue": v, "count": n, "time": time.Unix(0, 0)}}
		default:
			t[name] = raw
		}
	}
	return t
}

// FuzzDecode gives the consumer's decoder arbitrary headers, content types and bodies:
// it never panics, refuses with a *MalformedError, and an event it accepts and that is
// valid survives encode and decode unchanged.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("cloudEvents:specversion\x00s1.0\x00cloudEvents:id\x00sevt_1\x00cloudEvents:source\x00surn:x\x00cloudEvents:type\x00suser.deleted\x00cloudEvents:tenantid\x00sacme\x00x-death\x00aq.retry"),
		"application/json", []byte(`{"user_id":"u1"}`))
	f.Add([]byte("cloudEvents:time\x00t12345678\x00cloudEvents:count\x00i00000000\x00eventhub-ce-types\x00scount:integer"), "", []byte{})
	f.Add([]byte(""), "application/cloudevents+json", []byte(`{"specversion":"1.0","id":"e","source":"s","type":"t","tenantid":"a"}`))
	f.Fuzz(func(t *testing.T, headers []byte, contentType string, body []byte) {
		ev, err := decode(&amqp.Delivery{Headers: fuzzHeaders(headers), ContentType: contentType, Body: body})
		if err != nil {
			var me *MalformedError
			if !errors.As(err, &me) {
				t.Fatalf("error %v (%T) is not a *MalformedError", err, err)
			}
			return
		}
		if ev.Validate() != nil {
			return
		}
		p, err := encode(ev, ModeBinary, time.Unix(0, 0))
		if err != nil {
			t.Fatalf("a decoded valid event does not encode: %v", err)
		}
		again, err := decode(&amqp.Delivery{Headers: p.Headers, ContentType: p.ContentType, Body: p.Body})
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !reflect.DeepEqual(again, ev) {
			t.Fatalf("second trip changed the event\n got %#v\nwant %#v", again, ev)
		}
	})
}
