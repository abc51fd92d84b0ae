package app_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/koder/eventhub/cmd/hub/internal/app"
	"github.com/koder/eventhub/cmd/hub/internal/config"
)

// TestDocsConfigExamplesLint lints every ```yaml block of the binary's, the security,
// the console docs and the scaling guide as `hub lint` would, so no documented config key or
// example drifts from the code.
func TestDocsConfigExamplesLint(t *testing.T) {
	t.Parallel()
	vars := env(map[string]string{
		"HUB_ADMIN_TOKEN":     "eha_docs_example_token_0123456789abcdef",
		"HUB_DATABASE_URL":    "postgres://hub@db.internal:5432/hub",
		"KODER_RESP_PASSWORD": "resp-docs-example-password",
	})
	total := 0
	for _, doc := range []string{"hub-binary.md", "security.md", "console.md", "scaling.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", doc))
		if err != nil {
			t.Fatal(err)
		}
		for i, block := range yamlBlocks(string(b)) {
			total++
			name := doc + " yaml block " + string(rune('1'+i))
			f, ps := config.Parse(name, t.TempDir(), []byte(block), vars)
			if len(ps) == 0 {
				_, ps = app.Build(f, vars, nil)
			}
			if len(ps) > 0 {
				t.Errorf("%s:\n%v\n%s", name, ps, block)
			}
		}
	}
	if total < 4 {
		t.Errorf("found %d yaml blocks in the docs; the examples are gone", total)
	}
}

// yamlBlocks returns the bodies of the ```yaml fences of a Markdown text.
func yamlBlocks(md string) []string {
	var out []string
	for {
		i := strings.Index(md, "```yaml\n")
		if i < 0 {
			return out
		}
		md = md[i+len("```yaml\n"):]
		j := strings.Index(md, "\n```")
		if j < 0 {
			return out
		}
		out = append(out, md[:j+1])
		md = md[j+4:]
	}
}
