package cesdk_test

import (
	"fmt"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cloudevent/cesdk"
)

// A hub event handed to code written against the CloudEvents SDK, and back.
func ExampleToSDK() {
	ev := cloudevent.New("/identity", "identity.user.created").SetTenantID("acme").SetSubject("user-42")
	ev.SetExtension("attempt", int32(2))
	sdk, err := cesdk.ToSDK(ev)
	if err != nil {
		panic(err)
	}
	fmt.Println(sdk.Type(), sdk.Subject(), sdk.Extensions()["attempt"])

	back, err := cesdk.FromSDK(sdk)
	if err != nil {
		panic(err)
	}
	fmt.Println(back.TenantID(), back.Extensions["attempt"].(int32))
	// Output:
	// identity.user.created user-42 2
	// acme 2
}
