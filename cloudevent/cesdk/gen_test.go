package cesdk_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/koder/eventhub/cloudevent"
)

// Generators for the property tests: random valid events with every attribute, every
// extension type, JSON, text and binary data, unicode, leading and trailing spaces, and
// URIs that net/url does not print back unchanged.

var contentTypes = []string{
	"", "application/json", "application/vnd.koder.user+json", "text/json; charset=utf-8",
	"text/plain", "text/plain; charset=utf-8", "application/xml", "application/octet-stream", "image/png",
}

// uriRefs and uris include forms url.URL.String re-escapes or rewrites (the last ones);
// the *Plain slices are the forms it prints back unchanged.
var (
	uriRefsPlain = []string{"/a/b", "../x?y=1", "urn:x:y", "#frag", "identity-platform"}
	urisPlain    = []string{"https://example.com/x", "urn:isbn:0451450523", "mailto:a@b.c"}
	uriRefs      = append(append([]string{}, uriRefsPlain...), "ü/ß", "/tenants/a b", "HTTP://Example.com/Ä")
	uris         = append(append([]string{}, urisPlain...), "https://example.com/ü?q=ä#f", "HTTPS://EXAMPLE.com/%7e")
)

// gen draws events; plain leaves out what the SDK's own codecs change (URIs net/url
// re-escapes, "+json" media types it does not know are JSON), for tests where the SDK
// reads or writes the wire form itself. Each left-out case has a TestCE_SDKDefect_ test.
type gen struct{ plain bool }

func (g gen) contentTypes() []string {
	if g.plain {
		return slices.DeleteFunc(slices.Clone(contentTypes), func(ct string) bool { return strings.HasSuffix(ct, "+json") })
	}
	return contentTypes
}

func (g gen) uriRefs() []string {
	if g.plain {
		return uriRefsPlain
	}
	return uriRefs
}

func (g gen) uris() []string {
	if g.plain {
		return urisPlain
	}
	return uris
}

func genText(t *rapid.T, label string) string {
	s := rapid.StringN(1, 24, -1).Draw(t, label)
	if rapid.IntRange(0, 5).Draw(t, label+"_pad") == 0 {
		s = " " + s + " " // the SDK's setters trim these; the conversion must not
	}
	return s
}

func reserved(name string) bool {
	switch name {
	case "id", "source", "specversion", "type", "datacontenttype", "dataschema", "subject", "time", "data",
		cloudevent.ExtTenantID, cloudevent.ExtActor:
		return true
	}
	return false
}

func genExtName(t *rapid.T, label string) string {
	return rapid.StringMatching(`[a-z0-9]{1,20}`).Filter(func(s string) bool { return !reserved(s) }).Draw(t, label)
}

func genTime(t *rapid.T, label string) time.Time {
	sec := rapid.Int64Range(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()).Draw(t, label+"_s")
	ns := rapid.OneOf(rapid.Just(int64(0)), rapid.Int64Range(0, 999_999_999)).Draw(t, label+"_ns")
	return time.Unix(sec, ns).UTC()
}

func (g gen) extValue(t *rapid.T, label string) any {
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
		return cloudevent.URI(rapid.SampledFrom(g.uris()).Draw(t, label))
	default:
		return cloudevent.URIRef(rapid.SampledFrom(g.uriRefs()).Draw(t, label))
	}
}

func genJSON(t *rapid.T) []byte {
	v := map[string]any{
		genText(t, "jk"): genText(t, "jv"),
		"n":              rapid.Int64().Draw(t, "jn"),
		"list":           []any{rapid.Bool().Draw(t, "jb"), nil, rapid.Float64().Draw(t, "jf")},
		"html":           "<a href=\"x\">&amp;</a>",
	}
	b, err := json.Marshal(v)
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

func isTextType(ct string) bool {
	return strings.HasPrefix(ct, "text/") || ct == "application/xml"
}

// genEvent draws any valid event in the codecs' normal form (UTC times, nil empty data).
func genEvent(t *rapid.T) *cloudevent.Event { return gen{}.event(t) }

// event draws a valid event in the codecs' normal form.
func (g gen) event(t *rapid.T) *cloudevent.Event {
	sources := []string{"urn:hub:identity", "/tenants/a"}
	if !g.plain {
		sources = append(sources, "https://id.example/ü")
	}
	ev := &cloudevent.Event{
		ID:              rapid.OneOf(rapid.Just(cloudevent.NewID()), rapid.StringN(1, 30, -1)).Draw(t, "id"),
		Source:          rapid.SampledFrom(append(sources, g.uriRefs()...)).Draw(t, "source"),
		SpecVersion:     cloudevent.SpecVersion,
		Type:            genText(t, "type"),
		DataContentType: rapid.SampledFrom(g.contentTypes()).Draw(t, "ct"),
		Extensions:      map[string]any{cloudevent.ExtTenantID: genText(t, "tenant")},
	}
	if rapid.Bool().Draw(t, "has_schema") {
		ev.DataSchema = rapid.SampledFrom(g.uris()).Draw(t, "schema")
	}
	if rapid.Bool().Draw(t, "has_subject") {
		ev.Subject = genText(t, "subject")
	}
	if rapid.Bool().Draw(t, "has_time") {
		ev.Time = genTime(t, "time")
	}
	if rapid.Bool().Draw(t, "has_actor") {
		ev.Extensions[cloudevent.ExtActor] = genText(t, "actor")
	}
	for i, n := 0, rapid.IntRange(0, 6).Draw(t, "n_ext"); i < n; i++ {
		ev.Extensions[genExtName(t, "ext_name")] = g.extValue(t, "ext")
	}
	if rapid.IntRange(0, 4).Draw(t, "has_data") > 0 {
		switch {
		case cloudevent.IsJSON(ev.DataContentType):
			ev.Data = genJSON(t)
		case isTextType(ev.DataContentType) && rapid.Bool().Draw(t, "valid_text"):
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
