package config

import (
	"os"
	"testing"
)

// FuzzParse feeds arbitrary documents to the config loader that `hub lint` and `hub run`
// share: it never panics, and whatever it refuses comes with at least one located problem.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("../../testdata/hub.example.yaml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("store:\n  sqlite: ${DATA:-./data}/hub.db\nroutes:\n  - pattern: '#'\n    to: [events]\n"))
	f.Add([]byte("routes: [{pattern: 'a.*.#', to: [x], delivery: sideways}]\nunknown_key: 1\n"))
	f.Add([]byte("transports:\n  r: {type: redisstream, url: ${NOPE}}\n"))
	env := func(k string) (string, bool) {
		if k == "DATA" {
			return "/tmp", true
		}
		return "", false
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		file, problems := Parse("fuzz.yaml", "/tmp", doc, env)
		if len(problems) == 0 && file == nil {
			t.Fatalf("no config and no problem for %q", doc)
		}
	})
}
