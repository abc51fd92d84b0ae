package cli

import (
	"bytes"
	"context"
	"fmt"
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
		url := testenv.RedisURL(t)
		opts, err := redis.ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		rdb := redis.NewClient(opts)
		t.Cleanup(func() { _ = rdb.Close() })
		ctx := context.Background()
		stream := "mig." + testenv.Name(t)
		t.Cleanup(func() { rdb.Del(context.Background(), stream) })
		for i := range 25 {
			if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{"i", fmt.Sprint(i)}}).Err(); err != nil {
				t.Fatal(err)
			}
		}
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
