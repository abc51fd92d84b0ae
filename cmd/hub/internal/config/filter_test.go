package config

import (
	"strings"
	"testing"
)

// TestDC_LintFilters: a bad CESQL filter on a route or a source is reported at its key
// with the expression's own line:col; a filter on a transport is refused; good ones pass.
func TestDC_LintFilters(t *testing.T) {
	t.Parallel()
	const good = "transports:\n  r: {type: redisstream}\nsources:\n  in:\n    type: http\n    filter: \"type LIKE 'billing.%'\"\nroutes:\n  - pattern: '#'\n    to: r\n    filter: tenantid = 'acme' AND data.plan = 'pro'\n"
	if _, ps := Parse("good.yaml", "", []byte(good), envMap(nil)); len(ps) != 0 {
		t.Fatalf("good filters: %v", ps)
	}
	bad := "transports:\n  r: {type: redisstream, filter: \"x = 1\"}\nsources:\n  in:\n    type: http\n    filter: \"type LIKE\"\nroutes:\n  - pattern: '#'\n    to: r\n    filter: data.plan = = 'pro'\n"
	_, ps := Parse("bad.yaml", "", []byte(bad), envMap(nil))
	want := []string{
		`2:6: transports.r.filter: filters apply to sources and routes`,
		`sources.in.filter: CESQL 1:10:`,
		`10:13: routes[0].filter: CESQL 1:13:`,
	}
	if len(ps) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(ps), len(want), ps)
	}
	for i, p := range ps {
		if !strings.Contains(p.String(), want[i]) {
			t.Errorf("problem %d = %q, want it to contain %q", i, p.String(), want[i])
		}
	}
}
