package hub_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/koder/eventhub/hub"
)

// TestCloseLogsNoError: a clean Close is quiet (no router error records).
func TestCloseLogsNoError(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	b := setup(t, hub.WithLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	if err := b.hub.Forward("#", b.mem); err != nil {
		t.Fatal(err)
	}
	if err := b.hub.Publish(context.Background(), event("a")); err != nil {
		t.Fatal(err)
	}
	if err := b.hub.Close(); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.Contains(line, "level=ERROR") {
			t.Errorf("error logged by a clean Close: %s", line)
		}
	}
}
