package ledger_test

import (
	"testing"
	"time"

	"github.com/koder/eventhub/ledger"
)

func TestTruncate(t *testing.T) {
	t.Parallel()
	loc := time.FixedZone("x", 3600)
	at := time.Date(2026, 12, 1, 10, 0, 0, 123_999_999, loc)
	got := ledger.Truncate(at)
	want := time.Date(2026, 12, 1, 9, 0, 0, 123_000_000, time.UTC)
	if !got.Equal(want) || got.Location() != time.UTC {
		t.Fatalf("Truncate(%s) = %s, want %s in UTC", at, got, want)
	}
	if !ledger.Truncate(time.Time{}).IsZero() {
		t.Fatal("Truncate(zero) is not zero")
	}
	now := time.Now()
	if tr := ledger.Truncate(now); !tr.Equal(ledger.Truncate(tr)) || tr.After(now) || now.Sub(tr) >= ledger.TimePrecision {
		t.Fatalf("Truncate(%s) = %s: not idempotent or not the millisecond below", now, tr)
	}
}
