package streams

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/koder/eventhub/hub"
)

// TestW3_ReplayAll: ids are collected across pages before any replay, a failing entry
// is reported while the others move, and a cancelled context stops the walk.
func TestW3_ReplayAll(t *testing.T) {
	t.Parallel()
	ids := make([]string, DLQPage+2)
	for i := range ids {
		ids[i] = fmt.Sprintf("1-%d", i)
	}
	list := func(_ context.Context, after string, n int64) ([]string, error) {
		start := 0
		for i, id := range ids {
			if id == after {
				start = i + 1
			}
		}
		return ids[start:min(len(ids), start+int(n))], nil
	}
	self := func(id string) string { return id }

	t.Run("EveryPageAndEachFailure", func(t *testing.T) {
		t.Parallel()
		var replayed []string
		n, err := ReplayAll(context.Background(), list, self, func(_ context.Context, id string) (string, error) {
			if id == "1-7" {
				return "", hub.Errorf(hub.FailedPrecondition, "no source stream")
			}
			replayed = append(replayed, id)
			return "2-" + id, nil
		})
		if n != len(ids)-1 || len(replayed) != n || hub.Code(err) != hub.FailedPrecondition {
			t.Fatalf("ReplayAll = %d, %v (replayed %d)", n, err, len(replayed))
		}
		if replayed[0] != "1-0" || replayed[len(replayed)-1] != ids[len(ids)-1] {
			t.Fatalf("not oldest first across pages: %s .. %s", replayed[0], replayed[len(replayed)-1])
		}
	})
	t.Run("CancelledStops", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		n, err := ReplayAll(ctx, list, self, func(context.Context, string) (string, error) { cancel(); return "", nil })
		if n != 1 || !errors.Is(err, context.Canceled) {
			t.Fatalf("ReplayAll after cancel = %d, %v", n, err)
		}
	})
}

func TestListRange(t *testing.T) {
	t.Parallel()
	if s, n := ListRange("", 0); s != "-" || n != DefaultDLQList {
		t.Errorf("ListRange(\"\", 0) = %q, %d", s, n)
	}
	if s, n := ListRange("5-1", 7); s != "(5-1" || n != 7 {
		t.Errorf("ListRange(5-1, 7) = %q, %d", s, n)
	}
}
