package app_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// TestReadmeConfigExamplesLint keeps the README's config examples honest: every yaml
// block lints clean, and the examples of the NATS JetStream and Watermill Pub/Sub
// transports and sources are among them.
func TestReadmeConfigExamplesLint(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := yamlBlock.FindAllStringSubmatch(string(b), -1)
	seen := map[string]bool{}
	for i, m := range blocks {
		for _, typ := range []string{"nats", "watermill"} {
			if strings.Contains(m[1], "type: "+typ+"\n") {
				seen[typ] = true
			}
		}
		if ps := lint(t, m[1], nil); len(ps) > 0 {
			t.Errorf("README yaml block %d:\n%v\n%s", i, ps, m[1])
		}
	}
	for _, typ := range []string{"nats", "watermill"} {
		if !seen[typ] {
			t.Errorf("README has no config example of type %s", typ)
		}
	}
}
