package schema_test

import (
	"errors"
	"fmt"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/schema"
)

func ExampleBuiltin() {
	reg := schema.Builtin()
	ev := &cloudevent.Event{ID: cloudevent.NewID(), Source: "identity", SpecVersion: "1.0",
		Type: "user.deleted", DataContentType: "application/json", Data: []byte(`{"deleted_at":"soon"}`)}
	err := reg.Validate(ev)
	var ve *schema.ValidationError
	if errors.As(err, &ve) {
		for _, f := range ve.Fields {
			fmt.Println(ve.Code, f.Pointer, f.Message)
		}
	}
	// Output:
	// INVALID_EVENT_DATA /deleted_at 'soon' is not valid date-time: less than 20 characters long
	// INVALID_EVENT_DATA /user_id is required
}

func ExampleRegistry_Define() {
	reg := schema.NewRegistry()
	err := reg.Define("billing.invoice.paid", 1, []byte(`{
		"type": "object",
		"required": ["invoice_id", "amount_cents"],
		"properties": {"amount_cents": {"type": "integer", "minimum": 0}}
	}`))
	fmt.Println(err)
	latest, _ := reg.Latest("billing.invoice.paid")
	fmt.Println(latest)
	// Output:
	// <nil>
	// 1.0.0
}

func ExampleRegistry_CheckVersion() {
	reg := schema.Builtin()
	ev := &cloudevent.Event{Type: "user.deleted"}
	ev.SetExtension(cloudevent.ExtDataVersion, "2.0.0")
	err := reg.CheckVersion(ev)
	fmt.Println(errors.Is(err, schema.ErrUnknownMajor))
	// Output: true
}
