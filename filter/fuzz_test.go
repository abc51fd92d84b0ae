package filter_test

import (
	"testing"

	"github.com/koder/eventhub/filter"
)

// FuzzCompile: any text either compiles or fails with an error (never a panic), and a
// compiled filter evaluates on an event without panicking.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"tenantid = 'acme' AND data.plan = 'pro'", "EXISTS data.a.b.0", "type LIKE 'user.%'",
		"data.", "data..x", "'data.x' = data.x", "ABC(", "\"a\\\"b\" = 'x'", "data.a.", "data.a_b.c9 = 1",
		"INT(hop) < INT(ttl)", "x IN (1, 2, 3)", "--1 = 1", "\n\n  data.x = 1",
	} {
		f.Add(s)
	}
	ev := orderEvent(f, `{"a":{"b":[1]},"x":"y"}`)
	f.Fuzz(func(t *testing.T, expr string) {
		flt, err := filter.Compile(expr)
		if err != nil {
			if _, ok := err.(*filter.Error); !ok {
				t.Fatalf("Compile(%q): error of type %T", expr, err)
			}
			return
		}
		_ = flt.Match(ev)
	})
}
