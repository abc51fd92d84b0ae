package app_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/koder/eventhub/cmd/hub/internal/app"
	"github.com/koder/eventhub/cmd/hub/internal/config"
)

// TestDC_DocsControlsExamplesLint lints the ```yaml blocks of the webhook and hub docs
// (the delivery controls' config examples) as `hub lint` would.
func TestDC_DocsControlsExamplesLint(t *testing.T) {
	t.Parallel()
	total := 0
	for _, doc := range []string{"webhook.md", "hub.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", doc))
		if err != nil {
			t.Fatal(err)
		}
		for i, block := range yamlBlocks(string(b)) {
			total++
			name := doc + " yaml block " + string(rune('1'+i))
			f, ps := config.Parse(name, t.TempDir(), []byte(block), env(nil))
			if len(ps) == 0 {
				_, ps = app.Build(f, env(nil), nil)
			}
			if len(ps) > 0 {
				t.Errorf("%s:\n%v\n%s", name, ps, block)
			}
		}
	}
	if total < 2 {
		t.Errorf("found %d yaml blocks; the examples are gone", total)
	}
}
