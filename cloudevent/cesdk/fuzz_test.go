package cesdk_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/koder/eventhub/cloudevent/cesdk"

	ce "github.com/cloudevents/sdk-go/v2/event"

	"github.com/koder/eventhub/hub/transporttest"
)

// FuzzFromSDK feeds whatever the SDK's JSON decoder accepts to FromSDK: it must never
// panic, and an event it accepts must survive ToSDK and FromSDK unchanged.
func FuzzFromSDK(f *testing.F) {
	for _, ev := range []any{transporttest.FullEvent(), transporttest.BinaryEvent(), transporttest.MinimalEvent()} {
		b, _ := json.Marshal(ev)
		f.Add(b)
	}
	f.Add([]byte(baseJSON + `,"count":1.5}`))
	f.Add([]byte(baseJSON + `,"datacontenttype":"text/plain","data":"hi","n":7,"ok":true}`))
	f.Add([]byte(`{"specversion":"0.3","id":"1","source":"/s","type":"t"}`))
	f.Add([]byte(`{"specversion":"1.0","id":"1","source":"%zz","type":"t","tenantid":"x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var sdk ce.Event
		if json.Unmarshal(b, &sdk) != nil {
			return
		}
		ev, err := cesdk.FromSDK(sdk)
		if err != nil {
			return
		}
		conv, err := cesdk.ToSDK(ev)
		if err != nil {
			t.Fatalf("ToSDK of an accepted event: %v", err)
		}
		back, err := cesdk.FromSDK(conv)
		if err != nil {
			t.Fatalf("FromSDK after ToSDK: %v", err)
		}
		if !reflect.DeepEqual(ev, back) {
			t.Fatalf("changed:\n%s", transporttest.Diff(ev, back))
		}
	})
}
