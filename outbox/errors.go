package outbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"
	"modernc.org/sqlite"

	"github.com/koder/eventhub/hub"
)

// classify gives a storage error its hub code, so a caller of Enqueue/EnqueueTx (and
// the hub's PublishTx) can tell "database down, try later" from "misconfigured".
// Already coded errors (the ledger's) and context errors pass through.
func classify(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var he *hub.Error
	if errors.As(err, &he) {
		return err
	}
	return &hub.Error{Code: storageCode(err), Msg: fmt.Sprintf("%s: %v", op, err), Err: err}
}

// pgClassCodes maps PostgreSQL SQLSTATE classes (the first two characters), from
// the PostgreSQL manual's Appendix A "PostgreSQL Error Codes".
var pgClassCodes = map[string]hub.ErrorCode{
	"08": hub.Unavailable,        // connection exception
	"53": hub.ResourceExhausted,  // insufficient resources (disk full, out of memory, too many connections)
	"57": hub.Unavailable,        // operator intervention (admin_shutdown, cannot_connect_now, query_canceled)
	"58": hub.Unavailable,        // system error (I/O error)
	"40": hub.Unavailable,        // transaction rollback (serialization_failure, deadlock_detected): retry
	"25": hub.FailedPrecondition, // invalid transaction state (in_failed_sql_transaction, read_only)
	"3F": hub.FailedPrecondition, // invalid schema name
	"42": hub.FailedPrecondition, // syntax error or access rule violation: 42P01 undefined_table = not migrated
	"28": hub.PermissionDenied,   // invalid authorization specification
	"23": hub.AlreadyExists,      // integrity constraint violation
}

// pgCodes overrides pgClassCodes for single SQLSTATEs.
var pgCodes = map[string]hub.ErrorCode{
	"42501": hub.PermissionDenied, // insufficient_privilege
	"57014": hub.DeadlineExceeded, // query_canceled (statement_timeout)
}

// sqliteCodes maps SQLite primary result codes (sqlite.org/rescode.html; extended
// codes carry the primary one in their low byte).
var sqliteCodes = map[int]hub.ErrorCode{
	1:  hub.FailedPrecondition, // SQLITE_ERROR: SQL error, e.g. "no such table" (not migrated)
	3:  hub.PermissionDenied,   // SQLITE_PERM
	5:  hub.Unavailable,        // SQLITE_BUSY: another writer held the lock past busy_timeout
	6:  hub.Unavailable,        // SQLITE_LOCKED
	7:  hub.ResourceExhausted,  // SQLITE_NOMEM
	8:  hub.PermissionDenied,   // SQLITE_READONLY
	10: hub.Unavailable,        // SQLITE_IOERR
	11: hub.Internal,           // SQLITE_CORRUPT
	13: hub.ResourceExhausted,  // SQLITE_FULL
	14: hub.Unavailable,        // SQLITE_CANTOPEN
	19: hub.AlreadyExists,      // SQLITE_CONSTRAINT
}

func storageCode(err error) hub.ErrorCode {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		if c, ok := pgCodes[pgErr.Code]; ok {
			return c
		}
		if c, ok := pgClassCodes[pgErr.Code[:min(2, len(pgErr.Code))]]; ok {
			return c
		}
		return hub.Internal
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		if c, ok := sqliteCodes[sqErr.Code()&0xff]; ok {
			return c
		}
		return hub.Internal
	}
	var connErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.Is(err, sql.ErrTxDone), errors.Is(err, pgx.ErrTxClosed):
		return hub.FailedPrecondition // the caller's transaction is already over
	case errors.Is(err, sql.ErrConnDone), errors.As(err, &connErr), errors.As(err, &netErr),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), pgconn.SafeToRetry(err):
		return hub.Unavailable
	case errors.Is(err, puddle.ErrClosedPool):
		return hub.Unavailable // the ledger's pgxpool was closed: no database from here
	}
	return hub.Unknown
}
