package cloudevent

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestC1_HTTPRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		mode      HTTPMode
		dropTypes bool
		want      func(*Event) *Event
	}{
		{name: "BinaryLossless", mode: HTTPBinary, want: func(e *Event) *Event { return e }},
		{name: "StructuredLossless", mode: HTTPStructured, want: func(e *Event) *Event { return e }},
		{name: "BinaryWithoutTypeHeaderGivesStrings", mode: HTTPBinary, dropTypes: true, want: allStrings},
		{name: "StructuredWithoutTypeHeaderGivesJSONTypes", mode: HTTPStructured, dropTypes: true, want: stringTyped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rapid.Check(t, func(t *rapid.T) {
				ev := genEvent(t)
				h, body, err := ToHTTP(ev, tc.mode)
				if err != nil {
					t.Fatal(err)
				}
				if tc.dropTypes {
					h.Del(HeaderExtTypes)
				}
				// Through a real header round trip: what a server sees.
				req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
				for k, vs := range h {
					for _, v := range vs {
						if strings.ContainsAny(v, "\r\n") {
							t.Fatalf("header %s has a line break: %q", k, v)
						}
						req.Header.Add(k, v)
					}
				}
				evs, err := FromHTTPRequest(req, 0)
				if err != nil {
					t.Fatalf("FromHTTP: %v\nheaders %v", err, h)
				}
				if want := tc.want(ev); len(evs) != 1 || !reflect.DeepEqual(evs[0], want) {
					t.Fatalf("round trip changed the event\n got %#v\nwant %#v\nheaders %v", evs[0], want, h)
				}
			})
		})
	}
}

func TestC1_HeaderPercentEncoding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, out string }{
		{"Euro € 😀", "Euro%20%E2%82%AC%20%F0%9F%98%80"}, // HTTP binding §3.1.3.2 example
		{`a"b%c`, "a%22b%25c"},
		{"plain-ASCII_~!", "plain-ASCII_~!"},
		{"tab\there\x7f", "tab%09here%7F"},
	} {
		if got := encodeHeaderValue(tc.in); got != tc.out {
			t.Errorf("encode %q = %q, want %q", tc.in, got, tc.out)
		}
		if got, msg := decodeHeaderValue(tc.out); got != tc.in || msg != "" {
			t.Errorf("decode %q = %q (%s)", tc.out, got, msg)
		}
	}
	if got, _ := decodeHeaderValue(`"quoted%20value"`); got != "quoted value" {
		t.Errorf("quoted: %q", got)
	}
	for _, bad := range []string{"%", "%2", "%zz", "%FF"} {
		if _, msg := decodeHeaderValue(bad); msg == "" {
			t.Errorf("%q decoded", bad)
		}
	}
}

func TestC1_FromHTTP(t *testing.T) {
	t.Parallel()
	binary := func() http.Header {
		return http.Header{
			"Ce-Specversion": {"1.0"}, "Ce-Id": {"evt_1"}, "Ce-Source": {"urn:x"}, "Ce-Type": {"user.created"},
			"Ce-Tenantid": {"tenant-A"}, "Content-Type": {"application/json"},
		}
	}
	t.Run("Binary", func(t *testing.T) {
		t.Parallel()
		h := binary()
		h["ce-actor"] = []string{"user%3A42"} // a non-canonical key from a hand-built map
		evs, err := FromHTTP(h, []byte(`{"user_id":"u1"}`))
		if err != nil || evs[0].Actor() != "user:42" || string(evs[0].Data) != `{"user_id":"u1"}` {
			t.Fatalf("%#v %v", evs, err)
		}
	})
	t.Run("BinaryListsEveryProblem", func(t *testing.T) {
		t.Parallel()
		h := binary()
		h.Del("Ce-Id")
		h.Del("Ce-Tenantid")
		h.Set("Ce-Time", "noon")
		h.Set("Ce-Bad_Name", "x")
		_, err := FromHTTP(h, []byte(`{`))
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("err %v", err)
		}
		for _, f := range []string{"id", "tenantid", "time", "bad_name", "data"} {
			if !ve.Has(f) {
				t.Errorf("no problem for %s: %v", f, err)
			}
		}
	})
	t.Run("NoCloudEvent", func(t *testing.T) {
		t.Parallel()
		if _, err := FromHTTP(http.Header{"Content-Type": {"application/json"}}, []byte(`{}`)); err == nil {
			t.Fatal("plain JSON accepted")
		}
	})
	t.Run("Batch", func(t *testing.T) {
		t.Parallel()
		b, _ := MarshalBatch([]*Event{validEvent(), validEvent()})
		evs, err := FromHTTP(http.Header{"Content-Type": {"application/cloudevents-batch+json; charset=utf-8"}}, b)
		if err != nil || len(evs) != 2 {
			t.Fatalf("%v %v", evs, err)
		}
	})
	t.Run("UnsupportedFormat", func(t *testing.T) {
		t.Parallel()
		if _, err := FromHTTP(http.Header{"Content-Type": {"application/cloudevents+xml"}}, []byte(`<e/>`)); err == nil {
			t.Fatal("xml format accepted")
		}
	})
	t.Run("TooLarge", func(t *testing.T) {
		t.Parallel()
		h, body, _ := ToHTTP(validEvent(), HTTPStructured)
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.Header = h
		_, err := FromHTTPRequest(req, int64(len(body)-1))
		var tl *TooLargeError
		if !errors.Is(err, ErrTooLarge) || !errors.As(err, &tl) || tl.HubCode() != 3 {
			t.Fatalf("err %v", err)
		}
		req = httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.Header = h
		req.ContentLength = -1 // chunked: the limit applies while reading
		if _, err := FromHTTPRequest(req, int64(len(body)-1)); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("chunked: err %v", err)
		}
		req = httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.Header = h
		if evs, err := FromHTTPRequest(req, int64(len(body))); err != nil || len(evs) != 1 {
			t.Fatalf("at the limit: %v", err)
		}
	})
}
