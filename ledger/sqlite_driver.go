package ledger

import (
	"database/sql"
	"sync"
	"sync/atomic"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riversqlite"
)

// sqliteDriver is riversqlite's driver as the ledger's working clients use it, with two
// changes, each where River's SQLite driver leaves a cost the embedded default pays per
// job:
//   - its listeners can be woken in process right after InTx commits an insert
//     (sqlite_wake.go), instead of at the next 50 ms poll of river_notification;
//   - its executor finishes completed jobs with one batched UPDATE instead of one
//     statement per job (sqlite_complete.go).
//
// Everything else is River's own driver.
type sqliteDriver struct {
	*riversqlite.Driver
	db *sql.DB

	mu        sync.Mutex
	listeners map[*wakeListener]struct{}
	woken     atomic.Int64 // wake-ups returned to River (tests)

	batched atomic.Int64 // jobs completed by the batched UPDATE (tests)
	fetches atomic.Int64 // JobGetAvailable calls of the working clients returned (tests)
}

func newSQLiteDriver(db *sql.DB, d *riversqlite.Driver) *sqliteDriver {
	return &sqliteDriver{Driver: d, db: db, listeners: map[*wakeListener]struct{}{}}
}

// GetExecutor is River's executor with JobSetStateIfRunningMany batched for completions.
func (d *sqliteDriver) GetExecutor() riverdriver.Executor {
	return &completingExecutor{Executor: d.Driver.GetExecutor(), d: d}
}
