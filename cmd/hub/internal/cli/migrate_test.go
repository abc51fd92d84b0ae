package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/transports/kdbstream"
)

// TestR9_MigrateProgress pins how `hub migrate redis-to-kdb` shows progress on stderr:
// plain lines when stderr is not a terminal (a log, a CI job), a bar on a terminal.
func TestR9_MigrateProgress(t *testing.T) {
	t.Parallel()

	t.Run("PlainLinesOffTerminal", func(t *testing.T) {
		t.Parallel()
		url, stream := redisStream(t, 25)
		res := run(t, nil, "migrate", "redis-to-kdb", "--redis", url, "--stream", stream,
			"--kdb", filepath.Join(t.TempDir(), "hub.db"), "--batch", "5")
		if res.code != ExitOK {
			t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
		}
		if strings.Contains(res.stderr, "\r") {
			t.Fatalf("stderr is not a terminal but got a bar: %q", res.stderr)
		}
		lines := strings.Split(strings.TrimSuffix(res.stderr, "\n"), "\n")
		want := "migrating " + stream + ": 25 of 25 entries and pending entries (100%)"
		if len(lines) != 5 || lines[len(lines)-1] != want {
			t.Fatalf("progress lines %q; want 5 pages' lines ending in %q", lines, want)
		}
	})

	t.Run("OneLinePerTenth", func(t *testing.T) {
		t.Parallel()
		var b bytes.Buffer
		report := progressLines(&b)
		for done := int64(1); done <= 100; done++ {
			report(kdbstream.Progress{Stream: "s", Done: done, Total: 100})
		}
		report(kdbstream.Progress{Stream: "s", Done: 101, Total: 100}) // appended during the copy
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if len(lines) != 11 || lines[0] != "migrating s: 1 of 100 entries and pending entries (1%)" ||
			lines[10] != "migrating s: 100 of 100 entries and pending entries (100%)" {
			t.Fatalf("lines %q; want 1%%, every tenth, then nothing past 100%%", lines)
		}
	})

	t.Run("BarOnTerminal", func(t *testing.T) {
		t.Parallel()
		var b bytes.Buffer
		draw := progressBar(&b)
		draw(kdbstream.Progress{Stream: "s", Done: 50, Total: 100})
		draw(kdbstream.Progress{Stream: "s", Done: 100, Total: 100})
		out := b.String()
		if !strings.Contains(out, "\r") || !strings.Contains(out, "migrating") || !strings.Contains(out, "100/100") ||
			!strings.HasSuffix(out, "\n") {
			t.Fatalf("bar output %q", out)
		}
		if isTerminal(&b) {
			t.Fatal("a buffer counted as a terminal")
		}
	})
}

// TestR9_MigrateTargetThatDoesNotExist: a dry run against a SQLite target that does not
// exist reports every entry as to be copied and creates nothing; the migration itself
// creates the file and its directory; tail refuses a missing database instead of
// creating an empty one.
func TestR9_MigrateTargetThatDoesNotExist(t *testing.T) {
	t.Parallel()
	url, stream := redisStream(t, 7)
	dir := filepath.Join(t.TempDir(), "fresh", "data")
	db := filepath.Join(dir, "hub.db")

	res := run(t, nil, "migrate", "redis-to-kdb", "--redis", url, "--stream", stream, "--kdb", db, "--dry-run", "--json")
	if res.code != ExitOK || !strings.Contains(res.stdout, `"source_length":7`) {
		t.Fatalf("dry run: exit %d\nstdout %s\nstderr %s", res.code, res.stdout, res.stderr)
	}
	if _, err := os.Stat(filepath.Dir(dir)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the dry run created %s (err %v)", filepath.Dir(dir), err)
	}
	if res := run(t, nil, "tail", "--kdb", db, "--stream", stream, "--no-follow"); res.code != ExitUnavailable ||
		!strings.Contains(res.stderr, "no kdbstream database") {
		t.Fatalf("tail of a missing database: exit %d, stderr %q", res.code, res.stderr)
	}
	if _, err := os.Stat(db); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("tail created the database it was asked to read")
	}
	if res := run(t, nil, "migrate", "redis-to-kdb", "--redis", url, "--stream", stream, "--kdb", db); res.code != ExitOK {
		t.Fatalf("migrate into a new directory: exit %d, stderr %s", res.code, res.stderr)
	}
	if res := run(t, nil, "tail", "--kdb", db, "--stream", stream, "--from", "0", "--no-follow"); res.code != ExitOK ||
		strings.Count(res.stdout, "\n") != 7 {
		t.Fatalf("tail after the migration: exit %d, %d lines, stderr %q", res.code, strings.Count(res.stdout, "\n"), res.stderr)
	}
}

// redisStream fills a stream of the test's own on the machine's Redis with n entries
// (deleted at cleanup) and returns Redis's URL and the stream's name.
func redisStream(t *testing.T, n int) (url, stream string) {
	t.Helper()
	url = testenv.RedisURL(t)
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	stream = "mig." + testenv.Name(t)
	t.Cleanup(func() { rdb.Del(context.Background(), stream) })
	for i := range n {
		if err := rdb.XAdd(context.Background(), &redis.XAddArgs{Stream: stream, Values: []string{"i", fmt.Sprint(i)}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	return url, stream
}

// `hub migrate schema` refuses what it cannot do, before touching any database: --force
// with --check, --check on a SQLite store (no record to check; it would create the
// file), --postgres on a store that is not PostgreSQL.
func TestMigrateSchemaUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	vars := map[string]string{"HUB_DATA_DIR": dir}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"migrate", "schema", "--check", "--force"}, "choose one"},
		{[]string{"migrate", "schema", "--check"}, "the store is SQLite"},
		{[]string{"migrate", "schema", "--postgres", "postgres://owner@db/hub"}, "not on PostgreSQL"},
	} {
		r := run(t, vars, c.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, r.code, r.stderr, ExitUsage, c.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the refused runs left %d files in the data directory; want none", len(entries))
	}
}
