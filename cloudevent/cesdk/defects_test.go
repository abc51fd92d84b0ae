package cesdk_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/koder/eventhub/cloudevent/cesdk"

	ce "github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub/transporttest"
)

// One test per SDK defect listed in docs/cloudevent.md ("Why not cloudevents/sdk-go"):
// each shows the SDK's behaviour and the hub's handling of the same input, so the list
// stays true as the SDK changes (a fixed defect fails its test).

const baseJSON = `{"specversion":"1.0","id":"evt_1","source":"/s","type":"a.b","tenantid":"t1"`

// TestCE_SDKDefect_IntegerExtensionTruncated: the SDK reads JSON extension numbers as
// float64 and converts them to int32 by truncation, so 1.5 silently becomes 1. The hub
// refuses a number that is not an int32 integer.
func TestCE_SDKDefect_IntegerExtensionTruncated(t *testing.T) {
	t.Parallel()
	in := []byte(baseJSON + `,"count":1.5}`)
	var sdk ce.Event
	if err := json.Unmarshal(in, &sdk); err != nil {
		t.Fatalf("SDK: %v", err)
	}
	if got := sdk.Extensions()["count"]; got != int32(1) {
		t.Fatalf("SDK defect gone? count = %#v, want the truncated int32(1)", got)
	}
	_, err := cloudevent.ParseJSON(in)
	if ve, ok := err.(*cloudevent.ValidationError); !ok || !ve.Has("count") {
		t.Fatalf("hub: ParseJSON = %v, want a problem on count", err)
	}
}

// TestCE_SDKDefect_ExtensionNameLength: the SDK accepts extension names of any length
// (its MaxExtensionNameLength is 0, unlimited); CloudEvents says they SHOULD NOT exceed
// 20 and the hub makes that a MUST, so every binding can carry every name.
func TestCE_SDKDefect_ExtensionNameLength(t *testing.T) {
	t.Parallel()
	long := "abcdefghijklmnopqrstuvwxyz"
	e := ce.New()
	e.SetExtension(long, "v")
	if e.Extensions()[long] != "v" {
		t.Fatalf("SDK defect gone? SetExtension(%d chars) refused", len(long))
	}
	ev := transporttest.MinimalEvent()
	ev.SetExtension(long, "v")
	if ve, ok := ev.Validate().(*cloudevent.ValidationError); !ok || !ve.Has(long) {
		t.Fatalf("hub: Validate = %v, want a problem on the long name", ev.Validate())
	}
}

// TestCE_SDKDefect_BytesDataForcedBase64: the SDK's SetData marks any []byte as base64,
// so JSON bytes leave as data_base64 even under application/json. The hub keeps JSON
// data as JSON, and ToSDK sets the SDK's flag the way the hub's codec would.
func TestCE_SDKDefect_BytesDataForcedBase64(t *testing.T) {
	t.Parallel()
	data := []byte(`{"a":1}`)
	e := ce.New()
	e.SetID("evt_1")
	e.SetSource("/s")
	e.SetType("a.b")
	if err := e.SetData("application/json", data); err != nil {
		t.Fatal(err)
	}
	b, err := e.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"data_base64"`) {
		t.Fatalf("SDK defect gone? %s", b)
	}
	ev := transporttest.MinimalEvent()
	if err := ev.SetData("application/json", data); err != nil {
		t.Fatal(err)
	}
	ours, _ := ev.MarshalJSON()
	sdk, err := cesdk.ToSDK(ev)
	if err != nil {
		t.Fatal(err)
	}
	viaSDK, _ := sdk.MarshalJSON()
	for _, out := range [][]byte{ours, viaSDK} {
		if !strings.Contains(string(out), `"data":{"a":1}`) {
			t.Fatalf("JSON data not kept as JSON: %s", out)
		}
	}
}

// TestCE_SDKDefect_HeaderValuesNotPercentEncoded: the SDK's HTTP binary mode writes
// attribute values into headers raw and reads them back raw, although the HTTP binding
// (3.1.3.2) asks for percent-encoding. A subject with a newline or non-ASCII text then
// makes an invalid request. The hub encodes and decodes them.
func TestCE_SDKDefect_HeaderValuesNotPercentEncoded(t *testing.T) {
	t.Parallel()
	ev := transporttest.MinimalEvent()
	ev.Subject = "multi\nline ✓"
	sdk, err := cesdk.ToSDK(ev)
	if err != nil {
		t.Fatal(err)
	}
	req, err := cehttp.NewHTTPRequestFromEvent(context.Background(), "http://127.0.0.1/", sdk)
	if err != nil {
		t.Fatal(err)
	}
	if got := req.Header.Get("Ce-Subject"); got != ev.Subject {
		t.Fatalf("SDK defect gone? its header is %q", got)
	}
	h, body, err := cloudevent.ToHTTP(ev, cloudevent.HTTPBinary)
	if err != nil {
		t.Fatal(err)
	}
	raw := h.Get("ce-subject")
	for i := 0; i < len(raw); i++ {
		if raw[i] < 0x21 || raw[i] > 0x7e {
			t.Fatalf("hub header %q has byte %#x", raw, raw[i])
		}
	}
	back, err := cloudevent.FromHTTP(h, body)
	if err != nil || back[0].Subject != ev.Subject {
		t.Fatalf("hub round trip: %v, %v", back, err)
	}
}

// TestCE_SDKDefect_URIReescaped: the SDK parses source, dataschema and URI extensions
// into net/url and prints them back re-escaped, so an event read by the SDK changes its
// source ("ü/ß" becomes "%C3%BC/%C3%9F"). The hub keeps the text, and so does ToSDK.
func TestCE_SDKDefect_URIReescaped(t *testing.T) {
	t.Parallel()
	in := []byte(`{"specversion":"1.0","id":"evt_1","source":"ü/ß","type":"a.b","tenantid":"t1"}`)
	var sdk ce.Event
	if err := json.Unmarshal(in, &sdk); err != nil {
		t.Fatal(err)
	}
	if sdk.Source() == "ü/ß" {
		t.Fatal("SDK defect gone? source kept")
	}
	ev, err := cloudevent.ParseJSON(in)
	if err != nil || ev.Source != "ü/ß" {
		t.Fatalf("hub: %v, %v", ev, err)
	}
	conv, err := cesdk.ToSDK(ev)
	if err != nil || conv.Source() != "ü/ß" {
		t.Fatalf("ToSDK source = %q, %v", conv.Source(), err)
	}
}

// TestCE_SDKDefect_PlusJSONData: the SDK treats only application/json and text/json as
// JSON, not "+json" types, which the JSON format (3.1) says carry JSON data: it refuses
// such an event with object data and writes such data as a string. The hub reads and
// writes it as JSON.
func TestCE_SDKDefect_PlusJSONData(t *testing.T) {
	t.Parallel()
	in := []byte(baseJSON + `,"datacontenttype":"application/vnd.koder.user+json","data":{"a":1}}`)
	var sdk ce.Event
	if err := json.Unmarshal(in, &sdk); err == nil {
		t.Fatal("SDK defect gone? it read +json object data")
	}
	ev, err := cloudevent.ParseJSON(in)
	if err != nil || string(ev.Data) != `{"a":1}` {
		t.Fatalf("hub: %v, %v", ev, err)
	}
	conv, err := cesdk.ToSDK(ev)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := conv.MarshalJSON()
	if !strings.Contains(string(out), `"data":"{\"a\":1}"`) {
		t.Fatalf("SDK defect gone? it wrote %s", out)
	}
	ours, _ := ev.MarshalJSON()
	if !strings.Contains(string(ours), `"data":{"a":1}`) {
		t.Fatalf("hub wrote %s", ours)
	}
}

// TestCE_SDKDefect_SettersTrim: the SDK's setters trim spaces from id, type and subject,
// so " x " becomes "x". CloudEvents strings are opaque; the hub keeps them, and ToSDK
// fills the SDK's fields without its setters.
func TestCE_SDKDefect_SettersTrim(t *testing.T) {
	t.Parallel()
	e := ce.New()
	e.SetSubject(" x ")
	if e.Subject() != "x" {
		t.Fatalf("SDK defect gone? subject %q", e.Subject())
	}
	ev := transporttest.MinimalEvent()
	ev.Subject = " x "
	conv, err := cesdk.ToSDK(ev)
	if err != nil {
		t.Fatal(err)
	}
	back, err := cesdk.FromSDK(conv)
	if err != nil || !reflect.DeepEqual(back, ev) {
		t.Fatalf("conversion changed the event: %v\n%s", err, transporttest.Diff(ev, back))
	}
}
