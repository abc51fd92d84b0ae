// Package filter compiles CloudEvents SQL (CESQL) expressions once and evaluates them
// on the hub's events: the content filters of routes (hub.WithFilter), webhook
// endpoints and sources.
//
// The language and its evaluation are the CloudEvents project's own
// (github.com/cloudevents/sdk-go/sql/v2); this package adds what a filter in a
// configuration file needs around it:
//
//   - errors with a position: a bad expression fails Compile with the line and column
//     of the first problem (the SDK's parser reports only the message);
//   - `data.` paths: CESQL as the SDK implements it reaches context attributes and
//     extensions only, never the payload. Here an identifier `data.a.b` (outside string
//     literals) reads the JSON data at that path; see dataref.go for the types it has;
//   - one meaning of "matches": the expression's value is the Boolean true and its
//     evaluation raised no error. A missing attribute, a failed cast or a non-boolean
//     result (1, 'true') is no match, never a panic or a delivery.
//
// A nil *Filter matches every event, so callers keep one code path for "no filter".
package filter

import (
	"fmt"
	"strings"

	cesql "github.com/cloudevents/sdk-go/sql/v2"
	cesqlparser "github.com/cloudevents/sdk-go/sql/v2/parser"
	ce "github.com/cloudevents/sdk-go/v2/event"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cloudevent/cesdk"
)

// MaxLen bounds an expression's length: a filter is evaluated for every event, and a
// configuration or API body is no place for a program.
const MaxLen = 4096

// Filter is a compiled CESQL expression. It is immutable and safe for concurrent use.
type Filter struct {
	src  string
	expr cesql.Expression
	refs []dataRef
}

// Compile parses expr. An empty (or all-space) expression is no filter: nil, nil.
// A syntax error is an *Error carrying the line and column (1-based) of the first
// problem.
func Compile(expr string) (*Filter, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, nil
	}
	if len(expr) > MaxLen {
		return nil, &Error{Expr: expr, Line: 1, Col: MaxLen + 1, Msg: fmt.Sprintf("expression longer than %d bytes", MaxLen)}
	}
	rewritten, refs, err := rewriteData(expr)
	if err != nil {
		return nil, err
	}
	// Our own pass first: it finds syntax errors with their position, and keeps the
	// SDK's lexer from printing them to stderr (its parser leaves the lexer's console
	// listener installed).
	if err := checkSyntax(expr, rewritten); err != nil {
		return nil, err
	}
	e, err := cesqlparser.Parse(rewritten)
	if err != nil {
		// Errors the visitor finds after a clean parse (an integer literal out of range,
		// a LIKE pattern that is not a string) carry no position in the SDK.
		return nil, &Error{Expr: expr, Msg: strings.TrimPrefix(err.Error(), "parse error: ")}
	}
	return &Filter{src: expr, expr: e, refs: refs}, nil
}

// MustCompile is Compile for expressions known at build time; it panics on error.
func MustCompile(expr string) *Filter {
	f, err := Compile(expr)
	if err != nil {
		panic(err)
	}
	return f
}

// String returns the expression as written ("" for nil).
func (f *Filter) String() string {
	if f == nil {
		return ""
	}
	return f.src
}

// Match reports whether ev passes the filter (always, for a nil filter). An event that
// cannot be evaluated (invalid, or the expression raises an error on it) does not pass.
func (f *Filter) Match(ev *cloudevent.Event) bool {
	if f == nil {
		return true
	}
	v, err := f.Evaluate(ev)
	if err != nil {
		return false
	}
	return truthy(v)
}

// MatchSDK is Match for an event of the CloudEvents Go SDK.
func (f *Filter) MatchSDK(e ce.Event) bool {
	if f == nil {
		return true
	}
	v, err := f.evaluateSDK(e, nil)
	if err != nil {
		return false
	}
	return truthy(v)
}

// Evaluate returns the expression's value on ev (bool, int32 or string) and the first
// error its evaluation raised. As in CESQL, an error still comes with a value (a missing
// attribute evaluates to false); Match treats every error as no match.
func (f *Filter) Evaluate(ev *cloudevent.Event) (any, error) {
	if f == nil {
		return true, nil
	}
	e, err := cesdk.ToSDK(ev)
	if err != nil {
		return false, err
	}
	return f.evaluateSDK(e, ev)
}

// evaluateSDK evaluates on e; src, when set, is the same event in the hub's model,
// whose data the data paths read without a copy.
func (f *Filter) evaluateSDK(e ce.Event, src *cloudevent.Event) (any, error) {
	if len(f.refs) > 0 {
		ctx, ok := e.Context.(*ce.EventContextV1)
		if !ok {
			return false, fmt.Errorf("filter: CloudEvents %s: only 1.0 events have data paths", e.SpecVersion())
		}
		ct, data := e.DataContentType(), e.Data()
		if src != nil {
			ct, data = src.DataContentType, src.Data
		}
		// A copy of the context: the SDK event may be the caller's.
		c := *ctx
		c.Extensions = make(map[string]any, len(ctx.Extensions)+len(f.refs))
		for k, v := range ctx.Extensions {
			c.Extensions[k] = v
		}
		for _, r := range f.refs {
			if v, ok := r.lookup(ct, data); ok {
				c.Extensions[r.name] = v
			}
		}
		e.Context = &c
	}
	return f.expr.Evaluate(e)
}

// truthy is the filter's verdict on a value: only the Boolean true passes. No cast: an
// expression that yields 1 or 'true' is a mistake (a forgotten comparison) that would
// otherwise send every event.
func truthy(v any) bool {
	b, ok := v.(bool)
	return ok && b
}

// Error is a bad expression: where (Line and Col, 1-based; 0 when the parser gave no
// position) and what.
type Error struct {
	Expr      string
	Line, Col int
	Msg       string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return "filter: " + e.Msg
	}
	return fmt.Sprintf("filter: %d:%d: %s", e.Line, e.Col, e.Msg)
}
