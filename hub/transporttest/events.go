package transporttest

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/koder/eventhub/cloudevent"
)

// EventType is the type of the events the suite sends.
const EventType = "transporttest.event"

// NewEvent returns a small valid event carrying seq in its data and in the "seq"
// extension (a string, which every wire format keeps).
func NewEvent(seq int) *cloudevent.Event {
	return &cloudevent.Event{
		ID:              cloudevent.NewID(),
		Source:          "/eventhub/transporttest",
		SpecVersion:     cloudevent.SpecVersion,
		Type:            EventType,
		DataContentType: "application/json",
		Subject:         fmt.Sprintf("subject-%d", seq),
		Time:            time.Now().UTC().Truncate(time.Millisecond),
		Data:            fmt.Appendf(nil, `{"seq":%d}`, seq),
		Extensions: map[string]any{
			cloudevent.ExtTenantID: "tenant-transporttest",
			cloudevent.ExtActor:    "system",
			"seq":                  fmt.Sprint(seq),
		},
	}
}

// NewEvents returns n events with seq 0..n-1.
func NewEvents(n int) []*cloudevent.Event {
	evs := make([]*cloudevent.Event, n)
	for i := range evs {
		evs[i] = NewEvent(i)
	}
	return evs
}

// FullEvent returns an event using every attribute and every extension type, with
// unicode in the strings and the data. Times have microsecond precision
// (cloudevent.TimePrecision), what SQL-backed transports keep.
func FullEvent() *cloudevent.Event {
	return &cloudevent.Event{
		ID:              cloudevent.NewID(),
		Source:          "https://example.com/eventhub/tëst?x=1",
		SpecVersion:     cloudevent.SpecVersion,
		Type:            "identity.user.created",
		DataContentType: "application/json",
		DataSchema:      "https://example.com/schemas/identity.user.created/1.json",
		Subject:         "usr_Zoë-日本-🚀",
		Time:            time.Date(2026, 11, 30, 9, 58, 1, 123456000, time.UTC),
		Data:            []byte(`{"user_id":"usr_1","name":"Zoë Ünïcödé 日本語 🚀","email":"z@example.com","n":12.5,"ok":true,"tags":["a","b"],"nested":{"x":null}}`),
		Extensions: map[string]any{
			cloudevent.ExtTenantID:      "tenant-ü-1",
			cloudevent.ExtActor:         "user:42",
			cloudevent.ExtCorrelationID: "corr-01J9Z",
			cloudevent.ExtDataVersion:   "1.2.3",
			cloudevent.ExtTraceParent:   "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
			cloudevent.ExtTraceState:    "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
			"flag":                      true,
			"count":                     int32(-7),
			"big":                       int32(2147483647),
			"blob":                      []byte{0x00, 0x01, 0xfe, 0xff, 0xc3, 0x28},
			"when":                      time.Date(2025, 1, 2, 3, 4, 5, 600000000, time.UTC),
			"home":                      cloudevent.URI("https://example.com/ü?q=1#f"),
			"rel":                       cloudevent.URIRef("../a/b?c=d"),
			"note":                      "multi\nline \"quoted\" ,=; ✓",
		},
	}
}

// BinaryEvent returns an event whose data is opaque, non-UTF-8 bytes.
func BinaryEvent() *cloudevent.Event {
	return &cloudevent.Event{
		ID:              cloudevent.NewID(),
		Source:          "/eventhub/transporttest",
		SpecVersion:     cloudevent.SpecVersion,
		Type:            "transporttest.binary",
		DataContentType: "application/octet-stream",
		Time:            time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Data:            []byte{0x00, 0xff, 0xfe, 0x80, 0x81, 0xc3, 0x28, 0x0a, 0x0d, 0x00},
		Extensions:      map[string]any{cloudevent.ExtTenantID: "t1"},
	}
}

// MinimalEvent returns an event with only the required attributes (the CloudEvents ones
// and C1's tenantid): every optional one is empty and must come back empty.
func MinimalEvent() *cloudevent.Event {
	return &cloudevent.Event{
		ID:          cloudevent.NewID(),
		Source:      "/eventhub/transporttest",
		SpecVersion: cloudevent.SpecVersion,
		Type:        "transporttest.minimal",
		Extensions:  map[string]any{cloudevent.ExtTenantID: "t1"},
	}
}

// HeaderSafeEvent is FullEvent with attribute values that go into HTTP headers as they
// are (no character that needs percent-encoding): what binary mode is tested with
// against a peer that does not decode percent-encoding (the CloudEvents Go SDK).
func HeaderSafeEvent() *cloudevent.Event {
	ev := FullEvent()
	ev.Source = "https://example.com/eventhub/test?x=1"
	ev.Subject = "usr_42"
	ev.Extensions[cloudevent.ExtTenantID] = "tenant-1"
	ev.Extensions["note"] = "plain,text;ok"
	ev.Extensions["home"] = cloudevent.URI("https://example.com/a?q=1#f")
	return ev
}

// StringExtensions is ev with every extension as its canonical string: what a peer
// that reads no type information keeps (binary mode without Eventhub-Ext-Types).
func StringExtensions(ev *cloudevent.Event) *cloudevent.Event {
	c := ev.Clone()
	for k, v := range c.Extensions {
		c.Extensions[k], _ = cloudevent.FormatValue(v)
	}
	return c
}

// JSONExtensions is ev as the structured JSON format keeps it without type
// information: strings, booleans and integers as they are, URI, URI-reference,
// Timestamp and Binary extensions as their canonical strings.
func JSONExtensions(ev *cloudevent.Event) *cloudevent.Event {
	c := ev.Clone()
	for k, v := range c.Extensions {
		switch v.(type) {
		case string, bool, int32:
		default:
			c.Extensions[k], _ = cloudevent.FormatValue(v)
		}
	}
	return c
}

// Diff describes how got differs from want, attribute by attribute ("" when equal).
// Times compare as instants; extension values compare with their CloudEvents type, so
// an int32 that came back as a string is a difference.
func Diff(want, got *cloudevent.Event) string {
	if want == nil || got == nil {
		if want == got {
			return ""
		}
		return fmt.Sprintf("want %v, got %v", want, got)
	}
	var d []string
	str := func(name, w, g string) {
		if w != g {
			d = append(d, fmt.Sprintf("%s: want %q, got %q", name, w, g))
		}
	}
	str("id", want.ID, got.ID)
	str("source", want.Source, got.Source)
	str("specversion", want.SpecVersion, got.SpecVersion)
	str("type", want.Type, got.Type)
	str("datacontenttype", want.DataContentType, got.DataContentType)
	str("dataschema", want.DataSchema, got.DataSchema)
	str("subject", want.Subject, got.Subject)
	if !want.Time.Equal(got.Time) {
		d = append(d, fmt.Sprintf("time: want %s, got %s", want.Time.Format(time.RFC3339Nano), got.Time.Format(time.RFC3339Nano)))
	}
	if !bytes.Equal(want.Data, got.Data) {
		d = append(d, fmt.Sprintf("data: want %q, got %q", want.Data, got.Data))
	}
	keys := map[string]bool{}
	for k := range want.Extensions {
		keys[k] = true
	}
	for k := range got.Extensions {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		w, wok := want.Extensions[k]
		g, gok := got.Extensions[k]
		switch {
		case !gok:
			d = append(d, fmt.Sprintf("extension %s: missing (want %T %v)", k, w, w))
		case !wok:
			d = append(d, fmt.Sprintf("extension %s: unexpected %T %v", k, g, g))
		case !extEqual(w, g):
			d = append(d, fmt.Sprintf("extension %s: want %T %#v, got %T %#v", k, w, w, g, g))
		}
	}
	return strings.Join(d, "\n")
}

func extEqual(w, g any) bool {
	switch wv := w.(type) {
	case time.Time:
		gv, ok := g.(time.Time)
		return ok && wv.Equal(gv)
	case []byte:
		gv, ok := g.([]byte)
		return ok && bytes.Equal(wv, gv)
	}
	return w == g
}
