package cloudevent

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// hasReplacement reports whether b holds U+FFFD itself, raw or escaped: then a decoded
// U+FFFD may be the producer's, and the fuzz targets below cannot tell a rewrite.
func hasReplacement(b []byte) bool {
	return bytes.Contains(b, []byte("\uFFFD")) || bytes.Contains(bytes.ToLower(b), []byte(`\ufffd`))
}

// FuzzValidJSONText checks validJSONText against encoding/json: on a valid document
// without U+FFFD of its own, it is true exactly when decoding rewrites nothing to
// U+FFFD (no invalid byte, no unpaired surrogate escape in any string or key).
func FuzzValidJSONText(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `"\ud83d\ude00"`, `"\ud800"`, `"\udc00"`, `["\\ud800"]`, `{"\ud800":1}`,
		`"\ud800\u0041"`, `"\ud800\ud800"`, "\"\xff\"", `"\\\ud800"`, `"\u00e9\uD83D\uDE00"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) || hasReplacement(b) {
			return
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("json.Valid but Unmarshal: %v", err)
		}
		rewritten := !utf8.Valid(b) || containsReplacement(v)
		if got := validJSONText(b); got == rewritten {
			t.Fatalf("validJSONText(%q) = %v, but encoding/json rewrites: %v", b, got, rewritten)
		}
	})
}

func containsReplacement(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.ContainsRune(x, utf8.RuneError)
	case []any:
		for _, e := range x {
			if containsReplacement(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range x {
			if strings.ContainsRune(k, utf8.RuneError) || containsReplacement(e) {
				return true
			}
		}
	}
	return false
}

// FuzzParseJSONNoRewrite: whatever ParseJSON accepts, it did not rewrite: no attribute
// or string extension holds a U+FFFD the input did not, and JSON data is UTF-8 text.
func FuzzParseJSONNoRewrite(f *testing.F) {
	f.Add([]byte(`{"specversion":"1.0","id":"evt_1","source":"/s","type":"t","tenantid":"a\ud83d\ude00","subject":"\u00e9","data":{"k":"\ud83d\ude00"}}`))
	f.Add([]byte(`{"specversion":"1.0","id":"evt_1","source":"/s","type":"t","tenantid":"a\ud800","data":{}}`))
	f.Add([]byte("{\"specversion\":\"1.0\",\"id\":\"evt_1\",\"source\":\"/s\",\"type\":\"t\",\"tenantid\":\"a\xffb\"}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := ParseJSON(b)
		if err != nil || hasReplacement(b) {
			return
		}
		for name, s := range map[string]string{"id": ev.ID, "source": ev.Source, "type": ev.Type, "subject": ev.Subject,
			"datacontenttype": ev.DataContentType, "dataschema": ev.DataSchema} {
			if strings.ContainsRune(s, utf8.RuneError) || !utf8.ValidString(s) {
				t.Fatalf("%s %q rewritten or invalid", name, s)
			}
		}
		for name, v := range ev.Extensions {
			if s, ok := v.(string); ok && (strings.ContainsRune(s, utf8.RuneError) || !utf8.ValidString(s)) {
				t.Fatalf("extension %s %q rewritten or invalid", name, s)
			}
		}
		if IsJSON(ev.DataContentType) && len(ev.Data) > 0 && !validJSONText(ev.Data) {
			t.Fatalf("JSON data %q accepted but not UTF-8 text", ev.Data)
		}
	})
}
