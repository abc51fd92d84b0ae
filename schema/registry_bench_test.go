package schema

import (
	"encoding/json"
	"testing"
)

// BenchmarkValidate measures schema validation of a catalogue type against decoding the
// same payload with encoding/json, the least any consumer pays to look at the data.
func BenchmarkValidate(b *testing.B) {
	reg := Builtin()
	ev := event("authentication.login", "1.0.0",
		`{"user_id":"01J9Z3","session_id":"s-123","product_key":"console","ip":"192.0.2.10","device":"Mozilla/5.0"}`)
	b.Run("hub", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := reg.Validate(ev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("base_json_unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(ev.Data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
