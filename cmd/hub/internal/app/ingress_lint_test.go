package app_test

import (
	"strings"
	"testing"
)

// TestR5_LintIngressDedupeKeys pins where lint reports the ingress's dedupe and id keys.
func TestR5_LintIngressDedupeKeys(t *testing.T) {
	t.Parallel()
	ok := "sources:\n  in:\n    type: http\n    dedupe_window: 1h\n    dedupe_max_entries: 10\n    require_ulid_ids: true\n"
	if ps := lint(t, ok, nil); len(ps) != 0 {
		t.Fatalf("valid keys: %v", ps)
	}
	ps := lint(t, "sources:\n  in:\n    type: http\n    dedupe_window: -1s\n    dedupe_max_entries: -2\n    no_dedupe: maybe\n", nil)
	want := []string{`hub.yaml:6:16: sources.in.no_dedupe: cannot use "maybe" as a bool`}
	if len(ps) != len(want) || !strings.Contains(ps[0].String(), want[0]) {
		t.Fatalf("got %v, want %v", ps, want)
	}
	ps = lint(t, "sources:\n  in:\n    type: http\n    dedupe_window: -1s\n    dedupe_max_entries: -2\n", nil)
	want = []string{`hub.yaml:4:20: sources.in.dedupe_window: must not be negative`, `hub.yaml:5:25: sources.in.dedupe_max_entries: must not be negative`}
	if len(ps) != len(want) {
		t.Fatalf("got %v, want %v", ps, want)
	}
	for i, p := range ps {
		if !strings.Contains(p.String(), want[i]) {
			t.Errorf("problem %d = %s, want %s", i, p, want[i])
		}
	}
}
