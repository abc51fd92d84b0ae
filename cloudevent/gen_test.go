package cloudevent

import (
	"bytes"
	"encoding/json"
	"maps"
	"time"

	"pgregory.net/rapid"
)

// Generators for the property tests: random valid events covering JSON and binary
// data, every extension type, unicode everywhere and empty optional attributes.

var contentTypes = []string{
	"", "application/json", "application/vnd.koder.user+json", "text/json; charset=utf-8",
	"text/plain", "text/plain; charset=utf-8", "application/xml", "application/octet-stream", "image/png",
}

func genText(t *rapid.T, label string) string {
	return rapid.StringN(1, 24, -1).Draw(t, label)
}

func genExtName(t *rapid.T, label string) string {
	return rapid.StringMatching(`[a-z0-9]{1,20}`).Filter(func(s string) bool {
		return !reservedName(s) && s != ExtTenantID && s != ExtActor
	}).Draw(t, label)
}

func genTime(t *rapid.T, label string) time.Time {
	sec := rapid.Int64Range(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()).Draw(t, label+"_s")
	ns := rapid.OneOf(rapid.Just(int64(0)), rapid.Int64Range(0, 999_999_999)).Draw(t, label+"_ns")
	return time.Unix(sec, ns).UTC()
}

func genExtValue(t *rapid.T, label string) any {
	switch rapid.IntRange(0, 6).Draw(t, label+"_kind") {
	case 0:
		return genText(t, label)
	case 1:
		return rapid.Bool().Draw(t, label)
	case 2:
		return rapid.Int32().Draw(t, label)
	case 3:
		return rapid.SliceOfN(rapid.Byte(), 1, 32).Draw(t, label)
	case 4:
		return genTime(t, label)
	case 5:
		return URI("https://example.com/" + rapid.StringMatching(`[a-z0-9/]{0,12}`).Draw(t, label))
	default:
		return URIRef(rapid.SampledFrom([]string{"/a/b", "../x?y=1", "urn:x:y", "#frag", "ü/ß"}).Draw(t, label))
	}
}

// genJSON returns a JSON document, sometimes indented, so byte-exactness is tested.
func genJSON(t *rapid.T) []byte {
	v := map[string]any{
		genText(t, "jk1"): genText(t, "jv1"),
		"n":               rapid.Int64().Draw(t, "jn"),
		"list":            []any{rapid.Bool().Draw(t, "jb"), nil, rapid.Float64().Draw(t, "jf"), genText(t, "jv2")},
		"html":            "<a href=\"x\">&amp;</a>",
	}
	var doc any = v
	switch rapid.IntRange(0, 3).Draw(t, "jshape") {
	case 1:
		doc = genText(t, "jstr")
	case 2:
		doc = []any{v, 1}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if rapid.Bool().Draw(t, "indent") {
		var buf bytes.Buffer
		_ = json.Indent(&buf, b, "", "  ")
		b = buf.Bytes()
	}
	return b
}

// genEvent draws a valid event. Times are UTC and empty data/extensions are nil: the
// codecs normalise to those forms (see the package documentation).
func genEvent(t *rapid.T) *Event {
	ev := &Event{
		ID:              rapid.OneOf(rapid.Just(NewID()), rapid.StringN(1, 30, -1)).Draw(t, "id"),
		Source:          rapid.SampledFrom([]string{"urn:hub:identity", "https://id.example/ü", "/tenants/a", "identity-platform"}).Draw(t, "source"),
		SpecVersion:     SpecVersion,
		Type:            genText(t, "type"),
		DataContentType: rapid.SampledFrom(contentTypes).Draw(t, "ct"),
		Extensions:      map[string]any{ExtTenantID: genText(t, "tenant")},
	}
	if rapid.Bool().Draw(t, "has_schema") {
		ev.DataSchema = "https://schemas.example/" + rapid.StringMatching(`[a-z]{1,8}`).Draw(t, "schema") + "/v1"
	}
	if rapid.Bool().Draw(t, "has_subject") {
		ev.Subject = genText(t, "subject")
	}
	if rapid.Bool().Draw(t, "has_time") {
		ev.Time = genTime(t, "time")
	}
	if rapid.Bool().Draw(t, "has_actor") {
		ev.Extensions[ExtActor] = genExtValue(t, "actor")
	}
	for i, n := 0, rapid.IntRange(0, 5).Draw(t, "n_ext"); i < n; i++ {
		ev.Extensions[genExtName(t, "ext_name")] = genExtValue(t, "ext")
	}
	if rapid.IntRange(0, 4).Draw(t, "has_data") > 0 {
		switch {
		case IsJSON(ev.DataContentType):
			ev.Data = genJSON(t)
		case isText(ev.DataContentType) && rapid.Bool().Draw(t, "valid_text"):
			ev.Data = []byte(rapid.StringN(1, 64, -1).Draw(t, "text"))
		default:
			ev.Data = rapid.SliceOfN(rapid.Byte(), 1, 64).Draw(t, "bytes")
		}
	}
	if err := ev.Validate(); err != nil {
		t.Fatalf("generator made an invalid event: %v", err)
	}
	return ev
}

// stringTyped returns ev with every extension of a type the JSON format cannot
// express (URI, URIRef, Timestamp, Binary) as its canonical string: what a
// structured-mode round trip gives back.
func stringTyped(ev *Event) *Event {
	c := ev.Clone()
	c.Extensions = maps.Clone(ev.Extensions)
	for k, v := range c.Extensions {
		switch v.(type) {
		case string, bool, int32:
		default:
			c.Extensions[k], _ = FormatValue(v)
		}
	}
	return c
}

// allStrings returns ev with every extension as its canonical string (HTTP binary
// mode without the type header).
func allStrings(ev *Event) *Event {
	c := ev.Clone()
	for k, v := range c.Extensions {
		c.Extensions[k], _ = FormatValue(v)
	}
	return c
}
