package outbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"github.com/koder/eventhub/hub"
)

// TestErrorCode pins the storage error table.
func TestErrorCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want hub.ErrorCode
	}{
		{&pgconn.PgError{Code: "42P01"}, hub.FailedPrecondition}, // undefined_table: not migrated
		{&pgconn.PgError{Code: "3F000"}, hub.FailedPrecondition}, // invalid_schema_name
		{&pgconn.PgError{Code: "25P02"}, hub.FailedPrecondition}, // in_failed_sql_transaction
		{&pgconn.PgError{Code: "57P01"}, hub.Unavailable},        // admin_shutdown
		{&pgconn.PgError{Code: "08006"}, hub.Unavailable},        // connection_failure
		{&pgconn.PgError{Code: "40001"}, hub.Unavailable},        // serialization_failure
		{&pgconn.PgError{Code: "53100"}, hub.ResourceExhausted},  // disk_full
		{&pgconn.PgError{Code: "42501"}, hub.PermissionDenied},   // insufficient_privilege
		{&pgconn.PgError{Code: "57014"}, hub.DeadlineExceeded},   // query_canceled
		{&pgconn.PgError{Code: "23505"}, hub.AlreadyExists},      // unique_violation
		{&pgconn.PgError{Code: "XX000"}, hub.Internal},           // internal_error
		{sql.ErrTxDone, hub.FailedPrecondition},
		{pgx.ErrTxClosed, hub.FailedPrecondition},
		{sql.ErrConnDone, hub.Unavailable},
		{io.ErrUnexpectedEOF, hub.Unavailable},
		{puddle.ErrClosedPool, hub.Unavailable},
		{fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: "42P01"}), hub.FailedPrecondition},
		{hub.Errorf(hub.InvalidArgument, "already coded"), hub.InvalidArgument},
		{errors.New("something else"), hub.Unknown},
	} {
		if got := hub.Code(classify("op", tc.err)); got != tc.want {
			t.Errorf("classify(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
	if classify("op", nil) != nil {
		t.Error("classify(nil) != nil")
	}
	if err := classify("op", context.Canceled); err != context.Canceled {
		t.Errorf("context error wrapped: %v", err)
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()

	t.Run("BackoffDoublesUpToMax", func(t *testing.T) {
		t.Parallel()
		c := Config{BackoffBase: 100, BackoffMax: 1000, Jitter: -1}
		c.setDefaults()
		for attempt, want := range map[int]int64{1: 100, 2: 200, 3: 400, 4: 800, 5: 1000, 100: 1000} {
			if got := c.Backoff(attempt); int64(got) != want {
				t.Errorf("Backoff(%d) = %d, want %d", attempt, got, want)
			}
		}
	})

	t.Run("JitterStaysInBounds", func(t *testing.T) {
		t.Parallel()
		c := Config{BackoffBase: 1000, BackoffMax: 1000, Jitter: 0.2}
		c.setDefaults()
		for range 1000 {
			if d := c.Backoff(1); d < 800 || d > 1200 {
				t.Fatalf("Backoff = %d, outside ±20%% of 1000", d)
			}
		}
	})

	t.Run("ScheduleReplacesDoubling", func(t *testing.T) {
		t.Parallel()
		c := Config{Schedule: []time.Duration{5, 7}, Jitter: -1}
		c.setDefaults()
		for attempt, want := range map[int]int64{1: 5, 2: 7, 9: 7} {
			if got := c.Backoff(attempt); int64(got) != want {
				t.Errorf("Backoff(%d) = %d, want %d", attempt, got, want)
			}
		}
	})

	t.Run("ValidateNamesTheField", func(t *testing.T) {
		t.Parallel()
		for field, c := range map[string]Config{
			"Workers":     {Workers: -1},
			"MaxAttempts": {MaxAttempts: -1},
			"BackoffMax":  {BackoffBase: 10, BackoffMax: 5},
			"Jitter":      {Jitter: 2},
			"Schedule":    {Schedule: []time.Duration{0}},
		} {
			c.setDefaults()
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), field) {
				t.Errorf("%s: Validate() = %v", field, err)
			}
		}
	})
}
