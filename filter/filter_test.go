package filter_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/filter"
)

func orderEvent(t testing.TB, data string) *cloudevent.Event {
	t.Helper()
	ev := cloudevent.New("/shop", "order.created").SetTenantID("acme").SetSubject("order-7")
	ev.DataContentType = "application/json"
	ev.Data = []byte(data)
	return ev
}

// TestDC_FilterDataPaths pins how `data.` paths read a JSON payload: the CESQL type of
// each JSON value, absence, nesting, arrays, and that string literals are left alone.
func TestDC_FilterDataPaths(t *testing.T) {
	t.Parallel()
	data := `{"plan":"pro","seats":12,"big":12345678901,"ratio":0.5,"trial":false,
		"customer":{"country":"PT","tags":["b2b","eu"]},"items":[{"sku":"A1"}],"nothing":null,"snake_case":1}`
	for _, tc := range []struct {
		expr string
		want bool
	}{
		{"tenantid = 'acme' AND data.plan = 'pro'", true},
		{"data.plan = 'free'", false},
		{"data.seats > 10", true},
		{"data.seats = '12'", true}, // CESQL casts the literal to the left side's type
		{"data.big = '12345678901'", true},
		{"data.ratio = '0.5'", true},
		{"data.trial = FALSE", true},
		{"NOT data.trial", true},
		{"data.customer.country IN ('PT', 'ES')", true},
		{"data.customer.tags.1 = 'eu'", true},
		{"data.items.0.sku LIKE 'A%'", true},
		{"data.snake_case = 1", true},
		{"EXISTS data.plan", true},
		{"EXISTS data.missing", false},
		{"EXISTS data.nothing", false},
		{"data.missing = 'x'", false},
		{"data.missing = 'x' OR data.plan = 'pro'", false}, // an error anywhere is no match
		{"DATA.plan = 'pro'", true},
		{"subject = 'data.plan'", false}, // inside a literal: text, not a path
		{"data.plan = \"pro\" AND data.plan <> 'x'", true},
		{"data.customer LIKE '%\"PT\"%'", true}, // an object is its JSON text
	} {
		f, err := filter.Compile(tc.expr)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tc.expr, err)
		}
		if got := f.Match(orderEvent(t, data)); got != tc.want {
			v, err := f.Evaluate(orderEvent(t, data))
			t.Errorf("Match(%q) = %v, want %v (value %#v, err %v)", tc.expr, got, tc.want, v, err)
		}
	}
}

func TestDC_FilterDataOfOtherContentTypes(t *testing.T) {
	t.Parallel()
	f := filter.MustCompile("EXISTS data.plan")
	ev := orderEvent(t, `{"plan":"pro"}`)
	ev.DataContentType = "text/plain"
	if f.Match(ev) {
		t.Fatal("a text payload has no data paths")
	}
	ev.DataContentType, ev.Data = "", nil
	if f.Match(ev) {
		t.Fatal("an event without data has no data paths")
	}
}

// TestDC_FilterErrorPositions pins the line:col of bad expressions: configuration and
// API errors point at the problem.
func TestDC_FilterErrorPositions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr      string
		line, col int
	}{
		{"type = ", 1, 8},
		{"type = 'a' AND", 1, 15},
		{"type == 'a'", 1, 7},
		{"type = 'a'\nAND (subject = 'b'", 2, 19},
		{"data. = 'x'", 1, 1},
		{"tenantid = 'acme' AND data.plan = = 'pro'", 1, 35},
		{"ABC(", 1, 5},
		{"'unterminated", 1, 1},
	} {
		_, err := filter.Compile(tc.expr)
		var fe *filter.Error
		if !errors.As(err, &fe) {
			t.Fatalf("Compile(%q) = %v, want *filter.Error", tc.expr, err)
		}
		if fe.Line != tc.line || fe.Col != tc.col {
			t.Errorf("Compile(%q): at %d:%d, want %d:%d (%v)", tc.expr, fe.Line, fe.Col, tc.line, tc.col, err)
		}
		if !strings.Contains(err.Error(), "filter: ") {
			t.Errorf("error %q: no prefix", err)
		}
	}
}

func TestDC_FilterEmptyAndNil(t *testing.T) {
	t.Parallel()
	f, err := filter.Compile("  ")
	if f != nil || err != nil {
		t.Fatalf("Compile(blank) = %v, %v; want no filter", f, err)
	}
	if !f.Match(orderEvent(t, `{}`)) || f.String() != "" {
		t.Fatal("a nil filter matches everything")
	}
	if _, err := filter.Compile(strings.Repeat("a", filter.MaxLen+1)); err == nil {
		t.Fatal("an over-long expression compiles")
	}
	if filter.MustCompile("1 = 1").Match(&cloudevent.Event{}) {
		t.Fatal("an invalid event matches")
	}
}

func TestDC_FilterNonBooleanIsNoMatch(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{"1", "'true'", "subject", "LENGTH(subject)"} {
		if filter.MustCompile(expr).Match(orderEvent(t, `{}`)) {
			t.Errorf("%q matches: only the Boolean true does", expr)
		}
	}
}
