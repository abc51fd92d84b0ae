package engine

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/streams"
)

// TestErrorCode pins the table from database and command errors to hub codes.
func TestErrorCode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		err  error
		want hub.ErrorCode
	}{
		{"BusyGroup", errBusyGroup, hub.AlreadyExists},
		{"NoGroup", errNoGroup("s", "g", ""), hub.NotFound},
		{"NoSuchKey", errNoSuchKey, hub.NotFound},
		{"InvalidID", errInvalidID, hub.InvalidArgument},
		{"IDTooSmall", errIDTooSmall, hub.InvalidArgument},
		{"Closed", errClosed, hub.FailedPrecondition},
		{"PGConnectionException", classify(&pgconn.PgError{Code: "08006"}), hub.Unavailable},
		{"PGAdminShutdown", classify(&pgconn.PgError{Code: "57P01"}), hub.Unavailable},
		{"PGSerialization", classify(&pgconn.PgError{Code: "40001"}), hub.Unavailable},
		{"PGDeadlock", classify(&pgconn.PgError{Code: "40P01"}), hub.Unavailable},
		{"PGDiskFull", classify(&pgconn.PgError{Code: "53100"}), hub.ResourceExhausted},
		{"PGUndefinedTable", classify(&pgconn.PgError{Code: "42P01"}), hub.Internal},
		{"ConnDone", classify(sql.ErrConnDone), hub.Unavailable},
		{"Other", classify(errors.New("boom")), hub.Unknown},
		{"Canceled", classify(context.Canceled), hub.Canceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := hub.Code(c.err); got != c.want {
				t.Fatalf("code of %v = %v, want %v", c.err, got, c.want)
			}
		})
	}
	t.Run("NoGroupMatchesStreamsErrNoGroup", func(t *testing.T) {
		if !errors.Is(errNoGroup("s", "g", "XREADGROUP with GROUP option"), streams.ErrNoGroup) {
			t.Fatal("NOGROUP does not match streams.ErrNoGroup")
		}
	})
	t.Run("SQLiteNotADatabase", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "junk.db")
		if err := os.WriteFile(path, []byte("this is not a database file, not at all........................................................................."), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Open(context.Background(), Config{Driver: DriverSQLite, DSN: path})
		if got := hub.Code(err); got != hub.Internal {
			t.Fatalf("opening a non-database file: code %v (%v), want Internal", got, err)
		}
	})
	t.Run("SQLiteMissingDirectory", func(t *testing.T) {
		_, err := Open(context.Background(), Config{Driver: DriverSQLite, DSN: filepath.Join(t.TempDir(), "no", "such", "dir.db")})
		if got := hub.Code(err); got != hub.Unavailable {
			t.Fatalf("opening in a missing directory: code %v (%v), want Unavailable", got, err)
		}
	})
}
