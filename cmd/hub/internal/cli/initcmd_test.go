package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/koder/eventhub/cmd/hub/internal/app"
)

// TestInitWritesTheEmbeddedDefault: init writes the default byte for byte, the file
// lints clean, a second init refuses to replace it (exit 1) unless --force, and "-"
// prints it.
func TestInitWritesTheEmbeddedDefault(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hub.yaml")
	if r := run(t, nil, "init", path); r.code != ExitOK || !strings.Contains(r.stdout, "hub run -c "+path) {
		t.Fatalf("init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != string(app.DefaultConfig) {
		t.Fatalf("the file is not the embedded default (err %v)", err)
	}
	if r := run(t, nil, "lint", path); r.code != ExitOK {
		t.Fatalf("the written config does not lint clean: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := os.WriteFile(path, []byte("# edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, nil, "init", path); r.code != ExitInvalid || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("init over an existing file: exit %d, want %d with a hint\n%s", r.code, ExitInvalid, r.stderr)
	}
	if b, _ := os.ReadFile(path); string(b) != "# edited\n" {
		t.Fatal("init replaced an existing file without --force")
	}
	if r := run(t, nil, "init", "--force", path); r.code != ExitOK {
		t.Fatalf("init --force: exit %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(path); string(b) != string(app.DefaultConfig) {
		t.Fatal("init --force did not write the default")
	}
	if r := run(t, nil, "init", "-"); r.code != ExitOK || r.stdout != string(app.DefaultConfig) {
		t.Fatalf("init -: exit %d, stdout is not the default", r.code)
	}
}
