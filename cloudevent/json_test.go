package cloudevent

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

func TestC1_JSONRoundTrip(t *testing.T) {
	t.Parallel()
	t.Run("LosslessWithinJSONTypes", func(t *testing.T) {
		t.Parallel()
		rapid.Check(t, func(t *rapid.T) {
			ev := genEvent(t)
			b, err := ev.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseJSON(b)
			if err != nil {
				t.Fatalf("parse %s: %v", b, err)
			}
			if want := stringTyped(ev); !reflect.DeepEqual(got, want) {
				t.Fatalf("round trip changed the event\n got %#v\nwant %#v\njson %s", got, want, b)
			}
		})
	})
	t.Run("BatchRoundTrip", func(t *testing.T) {
		t.Parallel()
		rapid.Check(t, func(t *rapid.T) {
			evs := []*Event{genEvent(t), genEvent(t)}
			b, err := MarshalBatch(evs)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseBatch(b)
			if err != nil {
				t.Fatalf("parse %s: %v", b, err)
			}
			for i := range evs {
				if want := stringTyped(evs[i]); !reflect.DeepEqual(got[i], want) {
					t.Fatalf("[%d] got %#v\nwant %#v", i, got[i], want)
				}
			}
		})
	})
	t.Run("EncodingJSONMarshalIsSemanticallyEqual", func(t *testing.T) {
		t.Parallel()
		ev := validEvent()
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var back Event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&back, ev) {
			t.Fatalf("got %#v want %#v", &back, ev)
		}
	})
}

func TestC1_ParseJSON(t *testing.T) {
	t.Parallel()
	t.Run("SpecExample", func(t *testing.T) {
		t.Parallel()
		ev, err := ParseJSON([]byte(`{
			"specversion" : "1.0", "type" : "com.example.someevent", "source" : "/mycontext",
			"id" : "A234-1234-1234", "time" : "2018-04-05T17:31:00Z", "tenantid": "t1",
			"comexampleextension1" : "value", "comexampleothervalue" : 5, "flag": true,
			"datacontenttype" : "text/xml", "data" : "<much wow=\"xml\"/>"}`))
		if err != nil {
			t.Fatal(err)
		}
		if string(ev.Data) != `<much wow="xml"/>` || ev.Extensions["comexampleothervalue"] != int32(5) || ev.Extensions["flag"] != true {
			t.Fatalf("%#v", ev)
		}
	})
	t.Run("DataBase64", func(t *testing.T) {
		t.Parallel()
		ev, err := ParseJSON([]byte(`{"specversion":"1.0","id":"1","source":"s","type":"t","tenantid":"x",
			"datacontenttype":"application/octet-stream","data_base64":"AAEC"}`))
		if err != nil || string(ev.Data) != "\x00\x01\x02" {
			t.Fatalf("%v %v", ev, err)
		}
	})
	t.Run("JSONStringDataIsNotParsedAgain", func(t *testing.T) {
		t.Parallel()
		ev, err := ParseJSON([]byte(`{"specversion":"1.0","id":"1","source":"s","type":"t","tenantid":"x","data":"{\"a\":1}"}`))
		if err != nil || string(ev.Data) != `"{\"a\":1}"` {
			t.Fatalf("%q %v", ev.Data, err)
		}
	})
	t.Run("NullMeansUnset", func(t *testing.T) {
		t.Parallel()
		ev, err := ParseJSON([]byte(`{"specversion":"1.0","id":"1","source":"s","type":"t","tenantid":"x","subject":null,"x":null}`))
		if err != nil || ev.Subject != "" || len(ev.Extensions) != 1 {
			t.Fatalf("%#v %v", ev, err)
		}
	})
	t.Run("EveryProblemListed", func(t *testing.T) {
		t.Parallel()
		_, err := ParseJSON([]byte(`{"specversion":"2.0","source":5,"type":"t","time":"yesterday",
			"big":3000000000,"frac":1.5,"obj":{"a":1},"Bad":"x","data":{},"data_base64":"AA=="}`))
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("err %v", err)
		}
		for _, f := range []string{"source", "time", "big", "frac", "obj", "data", "id", "specversion", "tenantid", "Bad"} {
			if !ve.Has(f) {
				t.Errorf("no problem for %q in %v", f, err)
			}
		}
	})
	t.Run("NotAnObject", func(t *testing.T) {
		t.Parallel()
		for _, in := range []string{``, `[]`, `"x"`, `{"a":}`, `{} {}`} {
			if _, err := ParseJSON([]byte(in)); err == nil {
				t.Errorf("%q parsed", in)
			}
		}
	})
	t.Run("IntegralFloatAccepted", func(t *testing.T) {
		t.Parallel()
		ev, err := ParseJSON([]byte(`{"specversion":"1.0","id":"1","source":"s","type":"t","tenantid":"x","n":2.0,"m":-1e3}`))
		if err != nil || ev.Extensions["n"] != int32(2) || ev.Extensions["m"] != int32(-1000) {
			t.Fatalf("%#v %v", ev, err)
		}
	})
	t.Run("EscapedKeys", func(t *testing.T) {
		t.Parallel()
		ev, err := ParseJSON([]byte(`{"specversion":"1.0","\u0069d":"1","source":"s","type":"t\"q","tenantid":"x"}`))
		if err != nil || ev.ID != "1" || ev.Type != `t"q` {
			t.Fatalf("%#v %v", ev, err)
		}
	})
}

func TestC1_ParseBatch(t *testing.T) {
	t.Parallel()
	t.Run("ProblemsCarryTheIndex", func(t *testing.T) {
		t.Parallel()
		_, err := ParseBatch([]byte(`[{"specversion":"1.0","id":"1","source":"s","type":"t","tenantid":"x"},{"specversion":"1.0","source":"s","type":"t"}]`))
		var ve *ValidationError
		if !errors.As(err, &ve) || !ve.Has("[1].id") || !ve.Has("[1].tenantid") || len(ve.Problems) != 2 {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("Empty", func(t *testing.T) {
		t.Parallel()
		evs, err := ParseBatch([]byte(`[]`))
		if err != nil || len(evs) != 0 {
			t.Fatalf("%v %v", evs, err)
		}
	})
	t.Run("NotAnArray", func(t *testing.T) {
		t.Parallel()
		if _, err := ParseBatch([]byte(`{}`)); err == nil {
			t.Fatal("object parsed as batch")
		}
	})
}
