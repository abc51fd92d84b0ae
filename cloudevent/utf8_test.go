package cloudevent

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// TestC1_InvalidUTF8IsRefusedNotRewritten pins that the parsers name every attribute,
// extension, member name or JSON data that is not valid UTF-8 (raw bytes, or a \u escape
// of an unpaired surrogate) instead of decoding it to U+FFFD, as encoding/json does: a
// tenantid must never change between the producer and the store.
func TestC1_InvalidUTF8IsRefusedNotRewritten(t *testing.T) {
	t.Parallel()
	const head = `{"specversion":"1.0","source":"/id","type":"identity.user.erased",`
	for _, tc := range []struct {
		name string
		doc  string
		want []Problem // exactly these problems
	}{
		{"TenantRawByte", head + `"id":"evt_1","tenantid":"ac` + "\xff" + `me","data":{}}`,
			[]Problem{{ExtTenantID, msgNotUTF8}}},
		{"TenantLoneSurrogateEscape", head + `"id":"evt_1","tenantid":"ac\ud800me","data":{}}`,
			[]Problem{{ExtTenantID, msgNotUTF8}}},
		{"TenantLoneLowSurrogate", head + `"id":"evt_1","tenantid":"\udc00","data":{}}`,
			[]Problem{{ExtTenantID, msgNotUTF8}}},
		{"TenantHighThenNonSurrogate", head + `"id":"evt_1","tenantid":"\ud800\u0041","data":{}}`,
			[]Problem{{ExtTenantID, msgNotUTF8}}},
		{"IDWithEscapedByte", head + `"id":"evt_\n` + "\xc3" + `","tenantid":"a","data":{}}`,
			[]Problem{{"id", msgNotUTF8}}},
		{"Subject", head + `"id":"evt_1","tenantid":"a","subject":"` + "\xed\xa0\x80" + `"}`,
			[]Problem{{"subject", msgNotUTF8}}},
		{"Time", head + `"id":"evt_1","tenantid":"a","time":"2026-01-01T00:00:00Z` + "\xff" + `"}`,
			[]Problem{{"time", msgNotUTF8}}},
		{"ExtensionValue", head + `"id":"evt_1","tenantid":"a","actor":"user:` + "\xfe" + `"}`,
			[]Problem{{"actor", msgNotUTF8}}},
		{"MemberName", head + `"id":"evt_1","tenantid":"a","x` + "\xff" + `":"v"}`,
			[]Problem{{"x\uFFFD", "member name " + msgNotUTF8}}},
		{"JSONDataRawByte", head + `"id":"evt_1","tenantid":"a","data":{"user_id":"u` + "\xff" + `"}}`,
			[]Problem{{"data", msgNotUTF8 + " (invalid bytes, or a \\u escape of an unpaired surrogate)"}}},
		{"JSONDataLoneSurrogate", head + `"id":"evt_1","tenantid":"a","data":{"user_id":"\udfff"}}`,
			[]Problem{{"data", msgNotUTF8 + " (invalid bytes, or a \\u escape of an unpaired surrogate)"}}},
		{"TextData", head + `"id":"evt_1","tenantid":"a","datacontenttype":"text/plain","data":"h` + "\xff" + `"}`,
			[]Problem{{"data", msgNotUTF8}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseJSON([]byte(tc.doc))
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("ParseJSON: %v, want a *ValidationError", err)
			}
			if !reflect.DeepEqual(ve.Problems, tc.want) {
				t.Errorf("problems %q, want %q", ve.Problems, tc.want)
			}
			// The batch and HTTP paths share the parser.
			_, err = ParseBatch([]byte("[" + tc.doc + "]"))
			if !errors.As(err, &ve) || len(ve.Problems) != len(tc.want) || ve.Problems[0].Field != "[0]."+tc.want[0].Field {
				t.Errorf("ParseBatch: %v", err)
			}
			_, err = FromHTTP(http.Header{"Content-Type": {ContentTypeStructured}}, []byte(tc.doc))
			if !errors.As(err, &ve) || !reflect.DeepEqual(ve.Problems, tc.want) {
				t.Errorf("FromHTTP: %v", err)
			}
		})
	}
	t.Run("PairedSurrogatesAndEscapesDecode", func(t *testing.T) {
		t.Parallel()
		ev, err := ParseJSON([]byte(head + `"id":"evt_1","tenantid":"t\ud83d\ude00\u00e9\\u","data":{"k":"\ud83d\ude00\\\udc00x"}}`))
		if err == nil && ev.TenantID() != "t😀é\\u" {
			t.Errorf("tenantid %q", ev.TenantID())
		}
		// `\\\udc00`: an escaped backslash, then a lone low surrogate.
		if err == nil || !strings.Contains(err.Error(), "data: "+msgNotUTF8) {
			t.Errorf("err %v, want the data's lone surrogate named", err)
		}
		ev, err = ParseJSON([]byte(head + `"id":"evt_1","tenantid":"t\ud83d\ude00","data":{"k":"\ud83d\ude00\\udc00"}}`))
		if err != nil || ev.TenantID() != "t😀" || string(ev.Data) != `{"k":"\ud83d\ude00\\udc00"}` {
			t.Errorf("valid escapes: %v %q %s", err, ev.TenantID(), ev.Data)
		}
	})
	t.Run("BinaryModeJSONBody", func(t *testing.T) {
		t.Parallel()
		h := http.Header{"Content-Type": {"application/json"}, "Ce-Specversion": {"1.0"}, "Ce-Id": {"evt_1"},
			"Ce-Source": {"/id"}, "Ce-Type": {"x.y"}, "Ce-Tenantid": {"a"}}
		_, err := FromHTTP(h, []byte(`{"k":"`+"\xff"+`"}`))
		var ve *ValidationError
		if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Field != "data" {
			t.Errorf("FromHTTP: %v", err)
		}
		h.Set("Content-Type", "application/octet-stream") // binary data may be any bytes
		if _, err := FromHTTP(h, []byte{0xff, 0xfe}); err != nil {
			t.Errorf("octet-stream: %v", err)
		}
	})
	t.Run("ValidateChecksJSONDataBuiltInCode", func(t *testing.T) {
		t.Parallel()
		ev := validEvent()
		ev.Data = []byte(`"` + "\xff" + `"`)
		var ve *ValidationError
		if err := ev.Validate(); !errors.As(err, &ve) || !ve.Has("data") {
			t.Errorf("Validate: %v", err)
		}
	})
}
