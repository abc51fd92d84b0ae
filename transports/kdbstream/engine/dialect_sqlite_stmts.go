package engine

import (
	"context"
	"database/sql"
	"sync"
)

// Prepared statements. modernc's SQLite parses every statement text on every Exec (the
// parser was about a third of the consumer's CPU), and database/sql caches nothing by
// itself; so each distinct query text is prepared once on the engine's handle and
// bound to the transaction's connection (database/sql reuses the prepared handle on
// that connection). PostgreSQL needs none of this: pgx caches prepared statements per
// text itself.
//
// The single connection is busy during a transaction, so a statement first met inside
// one is prepared on the transaction (used once) and queued; the queue is prepared on
// the handle right after the transaction ends (flushPrepared, from end).
type stmtCache struct {
	mu   sync.Mutex
	m    map[string]*sql.Stmt
	want map[string]bool
}

// txStmt returns q as a statement of tx.
func (d *sqliteDialect) txStmt(ctx context.Context, tx *sql.Tx, q string) (*sql.Stmt, error) {
	d.stmts.mu.Lock()
	st, ok := d.stmts.m[q]
	if !ok {
		if d.stmts.want == nil {
			d.stmts.want = map[string]bool{}
		}
		d.stmts.want[q] = true
	}
	d.stmts.mu.Unlock()
	if ok {
		return tx.StmtContext(ctx, st), nil
	}
	return tx.PrepareContext(ctx, q)
}

// flushPrepared prepares the statements queued by transactions; called with the
// connection free (after a commit or rollback). The lock is never held across a
// database call: a goroutine waiting for the connection must not block one holding it.
func (d *sqliteDialect) flushPrepared(ctx context.Context) {
	d.stmts.mu.Lock()
	var qs []string
	for q := range d.stmts.want {
		qs = append(qs, q)
	}
	d.stmts.want = nil
	d.stmts.mu.Unlock()
	for _, q := range qs {
		_, _ = d.prepared(ctx, q)
	}
}

// prepared returns q prepared on the handle (outside transactions only).
func (d *sqliteDialect) prepared(ctx context.Context, q string) (*sql.Stmt, error) {
	d.stmts.mu.Lock()
	st, ok := d.stmts.m[q]
	d.stmts.mu.Unlock()
	if ok {
		return st, nil
	}
	st, err := d.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	d.stmts.mu.Lock()
	defer d.stmts.mu.Unlock()
	if old, ok := d.stmts.m[q]; ok {
		_ = st.Close()
		return old, nil
	}
	if d.stmts.m == nil {
		d.stmts.m = map[string]*sql.Stmt{}
	}
	d.stmts.m[q] = st
	return st, nil
}

func (d *sqliteDialect) closeStmts() {
	d.stmts.mu.Lock()
	defer d.stmts.mu.Unlock()
	for _, st := range d.stmts.m {
		_ = st.Close()
	}
	d.stmts.m = nil
}

func (d *sqliteDialect) stmt(ctx context.Context, tx *sql.Tx, q string) (stmt, error) {
	st, err := d.txStmt(ctx, tx, q)
	return stmt{prepared: st}, err
}

// stmtNoTx uses the statement prepared on the handle.
func (d *sqliteDialect) stmtNoTx(ctx context.Context, q string) (stmt, error) {
	st, err := d.prepared(ctx, q)
	return stmt{prepared: st}, err
}

// exec runs q in tx through the cache (the dialect's own statements).
func (d *sqliteDialect) exec(ctx context.Context, tx *sql.Tx, q string, args ...any) (sql.Result, error) {
	st, err := d.txStmt(ctx, tx, q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}
