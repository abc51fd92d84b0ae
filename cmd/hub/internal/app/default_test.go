package app_test

import (
	"testing"

	"github.com/koder/eventhub/cmd/hub/internal/app"
)

func TestEmbeddedDefaultLintsClean(t *testing.T) {
	t.Parallel()
	f, ps := app.LoadConfig("", env(nil))
	if len(ps) == 0 {
		_, ps = app.Build(f, env(nil), nil)
	}
	if len(ps) > 0 {
		t.Fatalf("embedded default:\n%v", ps)
	}
}
