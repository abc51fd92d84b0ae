package filter_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	sqlerrors "github.com/cloudevents/sdk-go/sql/v2/errors"
	"github.com/cloudevents/sdk-go/v2/binding/spec"
	ce "github.com/cloudevents/sdk-go/v2/event"
	cetest "github.com/cloudevents/sdk-go/v2/test"
	"go.yaml.in/yaml/v3"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cloudevent/cesdk"
	"github.com/koder/eventhub/filter"
)

// tckFile is one file of the CESQL test compatibility kit (testdata/tck, see NOTICE).
type tckFile struct {
	Name  string `yaml:"name"`
	Tests []struct {
		Name           string         `yaml:"name"`
		Expression     string         `yaml:"expression"`
		Result         any            `yaml:"result"`
		Error          string         `yaml:"error"`
		Event          map[string]any `yaml:"event"`
		EventOverrides map[string]any `yaml:"eventOverrides"`
	} `yaml:"tests"`
}

// TestDC_FilterSemanticsTCK runs every case of the CloudEvents SQL TCK (the spec's
// examples among them) through Compile and Evaluate on the hub's own event model, so
// the conversion to the SDK's event is under test too, and checks what Match makes of
// each result: a match only for a true value without error.
func TestDC_FilterSemanticsTCK(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/tck/*.yaml")
	if err != nil || len(files) < 18 {
		t.Fatalf("TCK files: %v (%d)", err, len(files))
	}
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f tckFile
		if err := yaml.Unmarshal(raw, &f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		t.Run(f.Name, func(t *testing.T) {
			for _, tc := range f.Tests {
				t.Run(tc.Name, func(t *testing.T) {
					flt, err := filter.Compile(tc.Expression)
					if tc.Error == "parse" {
						var fe *filter.Error
						if !asError(err, &fe) {
							t.Fatalf("Compile(%q) = %v, want a *filter.Error", tc.Expression, err)
						}
						return
					}
					if err != nil {
						t.Fatalf("Compile(%q): %v", tc.Expression, err)
					}
					ev := tckEvent(t, tc.Event, tc.EventOverrides)
					got, err := flt.Evaluate(ev)
					if tc.Error != "" {
						if err == nil || !errorKind(tc.Error, err) {
							t.Fatalf("Evaluate(%q) error = %v, want a %s error", tc.Expression, err, tc.Error)
						}
					} else if err != nil {
						t.Fatalf("Evaluate(%q): %v", tc.Expression, err)
					}
					if want, ok := tc.Result.(time.Time); ok {
						// The hub keeps times in UTC (cloudevent's normal form): the same
						// instant, printed in UTC.
						tc.Result = want.UTC().Format(time.RFC3339Nano)
					}
					if want := expected(tc.Result); !reflect.DeepEqual(got, want) {
						t.Fatalf("Evaluate(%q) = %#v, want %#v", tc.Expression, got, want)
					}
					wantMatch := tc.Error == "" && got == true
					if m := flt.Match(ev); m != wantMatch {
						t.Fatalf("Match(%q) = %v, want %v", tc.Expression, m, wantMatch)
					}
				})
			}
		})
	}
}

// tckEvent is the TCK's input event in the hub's model: the given event, or the SDK
// test suite's FullEvent, with the overrides set as attributes or extensions.
func tckEvent(t *testing.T, given map[string]any, overrides map[string]any) *cloudevent.Event {
	t.Helper()
	e := cetest.FullEvent()
	if given != nil {
		b, _ := json.Marshal(given)
		e = ce.New()
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatalf("TCK event: %v", err)
		}
	}
	e.SetSpecVersion(ce.CloudEventsVersionV1)
	e.SetExtension(cloudevent.ExtTenantID, "acme") // the hub's events all carry one (C1)
	for k, v := range overrides {
		if err := spec.V1.SetAttribute(e.Context, k, v); err != nil {
			t.Fatalf("override %s: %v", k, err)
		}
	}
	ev, err := cesdk.FromSDK(e)
	if err != nil {
		t.Fatalf("FromSDK: %v", err)
	}
	return ev
}

func expected(v any) any {
	switch x := v.(type) {
	case int:
		return int32(x)
	case float64:
		return int32(x)
	}
	return v
}

func errorKind(kind string, err error) bool {
	switch kind {
	case "math":
		return sqlerrors.IsMathError(err)
	case "cast":
		return sqlerrors.IsCastError(err)
	case "missingAttribute":
		return sqlerrors.IsMissingAttributeError(err)
	case "missingFunction":
		return sqlerrors.IsMissingFunctionError(err)
	case "functionEvaluation":
		return sqlerrors.IsFunctionEvaluationError(err)
	case "generic":
		return sqlerrors.IsGenericError(err)
	}
	return false
}

func asError(err error, target **filter.Error) bool {
	fe, ok := err.(*filter.Error)
	if ok {
		*target = fe
	}
	return ok
}
