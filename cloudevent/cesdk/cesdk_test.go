package cesdk_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	ce "github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"pgregory.net/rapid"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cloudevent/cesdk"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/hub/transporttest"
)

// TestCE_SDKConversionRoundTrip: hub event -> SDK event -> hub event is unchanged, over
// random events (every attribute, every extension type, JSON, text and binary data,
// unicode, padded strings, URIs net/url would re-escape), and the SDK accepts every
// event it is given.
func TestCE_SDKConversionRoundTrip(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		ev := genEvent(t)
		sdk, err := cesdk.ToSDK(ev)
		if err != nil {
			t.Fatalf("ToSDK: %v", err)
		}
		back, err := cesdk.FromSDK(sdk)
		if err != nil {
			t.Fatalf("FromSDK: %v", err)
		}
		if !reflect.DeepEqual(ev, back) {
			t.Fatalf("round trip changed the event:\n%s", transporttest.Diff(ev, back))
		}
		// The SDK trims before checking id, type and subject are non-empty; CloudEvents
		// only asks for non-empty strings, which " " is.
		if blank(ev.ID) || blank(ev.Type) || (ev.Subject != "" && blank(ev.Subject)) {
			return
		}
		if err := sdk.Validate(); err != nil {
			t.Fatalf("the SDK rejects the converted event: %v", err)
		}
	})
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

// TestCE_SDKConversionTypes pins the SDK-side type of every extension kind and of the
// attributes, on the suite's full event.
func TestCE_SDKConversionTypes(t *testing.T) {
	t.Parallel()
	ev := transporttest.FullEvent()
	sdk, err := cesdk.ToSDK(ev)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"tenantid": "string", "flag": "bool", "count": "int32", "blob": "[]uint8",
		"when": "types.Timestamp", "home": "types.URI", "rel": "types.URIRef",
	}
	exts := sdk.Extensions()
	for name, typ := range want {
		if got := reflect.TypeOf(exts[name]).String(); got != typ {
			t.Errorf("extension %s: SDK type %s, want %s", name, got, typ)
		}
	}
	if sdk.ID() != ev.ID || sdk.Source() != ev.Source || sdk.Type() != ev.Type || sdk.Subject() != ev.Subject ||
		sdk.DataSchema() != ev.DataSchema || !sdk.Time().Equal(ev.Time) || sdk.DataContentType() != ev.DataContentType ||
		string(sdk.Data()) != string(ev.Data) || sdk.SpecVersion() != ce.CloudEventsVersionV1 {
		t.Fatalf("attributes differ: %s", sdk.String())
	}
	// A URI net/url prints back unchanged is a parsed URL SDK code can take apart; one
	// it would re-escape is carried verbatim.
	if home := exts["home"].(types.URI); home.Host != "" || home.String() != string(ev.Extensions["home"].(cloudevent.URI)) {
		t.Fatalf("home: %#v, want the text verbatim", home)
	}
	ev.SetExtension("home", cloudevent.URI("https://example.com/x?q=1"))
	if sdk, err = cesdk.ToSDK(ev); err != nil {
		t.Fatal(err)
	}
	if home := sdk.Extensions()["home"].(types.URI); home.Host != "example.com" || home.RawQuery != "q=1" {
		t.Fatalf("home: %#v, want a parsed URL", home)
	}
}

// TestCE_SDKStructuredJSON: each side reads the other's structured JSON. JSON has no
// URI, Timestamp or Binary type, so those extensions arrive as their canonical strings
// (the documented limit of the format); everything else is unchanged.
func TestCE_SDKStructuredJSON(t *testing.T) {
	t.Parallel()
	t.Run("SDKReadsOurs", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			// The SDK's decoder re-escapes URIs and refuses JSON data of "+json" types.
			ev := gen{plain: true}.event(t)
			b, err := ev.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			var sdk ce.Event
			if err := json.Unmarshal(b, &sdk); err != nil {
				t.Fatalf("SDK cannot read %s: %v", b, err)
			}
			got, err := cesdk.FromSDK(sdk)
			if err != nil {
				t.Fatalf("FromSDK: %v", err)
			}
			if want := transporttest.JSONExtensions(ev); !reflect.DeepEqual(want, got) {
				t.Fatalf("SDK read of our JSON:\n%s\njson: %s", transporttest.Diff(want, got), b)
			}
		})
	})
	t.Run("WeReadTheSDKs", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			ev := gen{plain: true}.event(t)
			sdk, err := cesdk.ToSDK(ev)
			if err != nil {
				t.Fatal(err)
			}
			b, err := sdk.MarshalJSON() // json.Marshal would re-compact the data
			if err != nil {
				t.Fatalf("SDK marshal: %v", err)
			}
			got, err := cloudevent.ParseJSON(b)
			if err != nil {
				t.Fatalf("ParseJSON of the SDK's %s: %v", b, err)
			}
			if want := transporttest.JSONExtensions(ev); !reflect.DeepEqual(want, got) {
				t.Fatalf("our read of the SDK's JSON:\n%s\njson: %s", transporttest.Diff(want, got), b)
			}
		})
	})
}

func TestCE_SDKFromSDKRejects(t *testing.T) {
	t.Parallel()
	base := func() ce.Event {
		e := ce.New()
		e.SetID("evt_1")
		e.SetSource("/x")
		e.SetType("a.b")
		e.SetExtension(cloudevent.ExtTenantID, "t1")
		return e
	}
	cases := map[string]struct {
		ev    func() ce.Event
		field string
	}{
		"NoContext":     {func() ce.Event { return ce.Event{} }, ""},
		"OldSpec":       {func() ce.Event { e := ce.New(ce.CloudEventsVersionV03); e.SetID("1"); return e }, "specversion"},
		"NoTenant":      {func() ce.Event { e := base(); e.SetExtension(cloudevent.ExtTenantID, nil); return e }, cloudevent.ExtTenantID},
		"NotACEType":    {func() ce.Event { e := base(); e.Context.(*ce.EventContextV1).Extensions["bad"] = 1.5; return e }, "bad"},
		"LongExtension": {func() ce.Event { e := base(); e.SetExtension("abcdefghijklmnopqrstuvwxyz", "v"); return e }, "abcdefghijklmnopqrstuvwxyz"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := cesdk.FromSDK(c.ev())
			var ve *cloudevent.ValidationError
			if !errors.As(err, &ve) || hub.Code(err) != hub.InvalidArgument {
				t.Fatalf("err = %v (code %v), want a ValidationError (InvalidArgument)", err, hub.Code(err))
			}
			if !ve.Has(c.field) {
				t.Fatalf("problems %v do not name %q", ve.Problems, c.field)
			}
		})
	}
}

func TestCE_SDKToSDKValidates(t *testing.T) {
	t.Parallel()
	ev := transporttest.MinimalEvent()
	ev.SetExtension("when", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))
	if _, err := cesdk.ToSDK(ev); hub.Code(err) != hub.InvalidArgument {
		t.Fatalf("ToSDK of an invalid event: %v, want InvalidArgument", err)
	}
	if _, err := cesdk.ToSDK(nil); hub.Code(err) != hub.InvalidArgument {
		t.Fatalf("cesdk.ToSDK(nil): %v, want InvalidArgument", err)
	}
}
