package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	_ "github.com/koder/eventhub/cmd/hub/internal/modules"
)

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, vars map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""),
		Lookup: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }})
	return result{code, out.String(), errb.String()}
}

// TestExitCodes pins the exit codes scripts rely on.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("log:\n  levle: info\nroutes:\n  - pattern: a\n    to: nowhere\n"), 0o644); err != nil { //nolint:misspell // a misspelt key on purpose: lint must name it
		t.Fatal(err)
	}

	ingress := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "bad") {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"status":400}`))
			return
		}
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"accepted":1}`))
	}))
	t.Cleanup(ingress.Close)
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("Authorization") != "Bearer t":
			w.WriteHeader(http.StatusUnauthorized)
		case strings.HasPrefix(r.URL.Path, "/endpoints/missing"):
			w.WriteHeader(http.StatusNotFound)
		default:
			_, _ = w.Write([]byte(`[]`))
		}
	}))
	t.Cleanup(admin.Close)
	vars := map[string]string{"HUB_ADMIN_URL": admin.URL}

	cases := []struct {
		name string
		args []string
		want int
		out  string // in stdout or stderr
	}{
		{"LintEmbeddedDefaultClean", []string{"lint"}, ExitOK, ""},
		{"LintProblems", []string{"lint", bad}, ExitInvalid, bad + `:2:3: log.levle: unknown key "levle"`}, //nolint:misspell // the misspelt key of the file above
		{"LintMissingFile", []string{"lint", filepath.Join(dir, "none.yaml")}, ExitInvalid, "no such file"},
		{"LintTooManyArgs", []string{"lint", "a", "b"}, ExitUsage, "accepts at most 1 arg"},
		{"UnknownCommand", []string{"frobnicate"}, ExitUsage, "unknown command"},
		{"UnknownFlag", []string{"run", "--nope"}, ExitUsage, "unknown flag"},
		{"RunBadConfig", []string{"run", "-c", bad}, ExitInvalid, "log.levle"},
		{"PublishAccepted", []string{"publish", "--url", ingress.URL + "/events", "--type", "a.b", "--tenant", "t", "--data", `{}`}, ExitOK, `"accepted":1`},
		{"PublishRejected", []string{"publish", "--url", ingress.URL + "/bad", "--type", "a.b", "--data", `{}`}, ExitInvalid, "400"},
		{"PublishUnreachable", []string{"publish", "--url", "http://127.0.0.1:1/events", "--type", "a.b"}, ExitUnavailable, "unreachable"},
		{"PublishUsage", []string{"publish"}, ExitUsage, "give --type"},
		{"PublishBadJSON", []string{"publish", "--type", "a.b", "--data", "{"}, ExitUsage, "not valid JSON"},
		{"AdminOK", []string{"endpoints", "list", "--token", "t"}, ExitOK, "[]"},
		{"AdminDenied", []string{"endpoints", "list", "--token", "wrong"}, ExitDenied, "401"},
		{"AdminNotFound", []string{"endpoints", "get", "missing", "--token", "t"}, ExitNotFound, "404"},
		{"AdminUnreachable", []string{"dlq", "list", "redis", "--admin-url", "http://127.0.0.1:1"}, ExitUnavailable, "unreachable"},
		{"DLQReplayNeedsIDs", []string{"dlq", "replay", "redis", "--token", "t"}, ExitUsage, "give entry ids or --all"},
		{"SchemaCheckValid", []string{"schema", "check", "--type", "identity.user.erased", "--data", `{"erasure_id":"e1"}`}, ExitOK, "ok"},
		{"SchemaCheckInvalid", []string{"schema", "check", "--type", "identity.user.erased", "--data", `{"user_id":1}`}, ExitInvalid, "erasure_id"},
		{"Modules", []string{"modules"}, ExitOK, "transport.redisstream"},
		{"Version", []string{"version"}, ExitOK, "hub "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, vars, c.args...)
			if r.code != c.want {
				t.Errorf("hub %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(c.args, " "), r.code, c.want, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout+r.stderr, c.out) {
				t.Errorf("hub %s: output lacks %q\nstdout: %s\nstderr: %s", strings.Join(c.args, " "), c.out, r.stdout, r.stderr)
			}
		})
	}
}

func TestHelpHasExamples(t *testing.T) {
	t.Parallel()
	root := newRoot(&Env{})
	for _, c := range root.Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if c.Example == "" {
			t.Errorf("hub %s has no examples in --help", c.Name())
		}
		for _, sc := range c.Commands() {
			if sc.Example == "" {
				t.Errorf("hub %s %s has no examples in --help", c.Name(), sc.Name())
			}
		}
	}
}

// TestHelpExampleEventsAreValid checks the data of every event an example in --help
// publishes or checks (`hub publish --type T --data D`, `hub schema check …`) against
// the embedded schemas: an example a user copies must be accepted.
func TestHelpExampleEventsAreValid(t *testing.T) {
	t.Parallel()
	var found int
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, line := range strings.Split(strings.ReplaceAll(c.Example, "\\\n", " "), "\n") {
			args := shellWords(line)
			if len(args) < 2 || args[0] != "hub" {
				continue
			}
			flags := map[string]string{}
			for i := 1; i+1 < len(args); i++ {
				if strings.HasPrefix(args[i], "--") {
					flags[args[i]] = args[i+1]
				}
			}
			isEvent := args[1] == "publish" || (len(args) > 2 && args[1] == "schema" && args[2] == "check")
			if !isEvent || flags["--type"] == "" || flags["--data"] == "" {
				continue
			}
			found++
			check := []string{"schema", "check", "--type", flags["--type"], "--data", flags["--data"]}
			if r := run(t, nil, check...); r.code != ExitOK {
				t.Errorf("%s --help example %q: its data is invalid (exit %d)\n%s%s", c.CommandPath(), line, r.code, r.stdout, r.stderr)
			}
		}
		for _, sc := range c.Commands() {
			walk(sc)
		}
	}
	walk(newRoot(&Env{}))
	if found < 3 {
		t.Fatalf("found %d event examples in --help, want at least 3 (root, publish, schema)", found)
	}
}

// shellWords splits an example line as sh would for the quoting examples use (single
// and double quotes, no escapes), dropping a trailing # comment.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	in, quote, word := false, rune(0), false
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, word = r, true
		case r == ' ' || r == '\t':
			if word {
				words, word = append(words, cur.String()), false
				cur.Reset()
			}
		case r == '#' && !word:
			in = true
		default:
			cur.WriteRune(r)
			word = true
		}
		if in {
			break
		}
	}
	if word {
		words = append(words, cur.String())
	}
	return words
}
