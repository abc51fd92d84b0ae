package streams

import (
	"errors"
	"testing"
)

// TestR4_ValidateReportsEveryField: every invalid field is one *ConfigError in the
// joined error, naming the field, so the hub's lint places each at its key.
func TestR4_ValidateReportsEveryField(t *testing.T) {
	t.Parallel()
	c := ConsumerConfig{Group: "g", Count: -1, Concurrency: -2, ClaimMinIdle: -1}
	err := c.Validate()
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *ConfigError
		if !errors.As(e, &ce) {
			t.Fatalf("%v is not a *ConfigError", e)
		}
		got = append(got, ce.Field)
	}
	want := []string{"Stream", "Consumer", "Count", "ClaimMinIdle", "Concurrency"}
	if len(got) != len(want) {
		t.Fatalf("fields %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("fields %v, want %v", got, want)
			break
		}
	}
	if (&ConsumerConfig{Stream: "s", Group: "g", Consumer: "c"}).Validate() != nil {
		t.Error("a valid config is refused")
	}
}
