package engine

import (
	"context"
	"database/sql"
	"sync"
)

// Prepared statements. modernc's SQLite parses every statement text on every Exec (the
// parser was about a third of the consumer's CPU), and database/sql caches nothing by
// itself; so on SQLite each distinct query text is prepared once on the engine and
// bound to the transaction's connection (database/sql reuses the prepared handle on
// that connection). On PostgreSQL pgx already caches prepared statements per text.
//
// The engine's single SQLite connection is busy during a transaction, so a statement
// first met inside one is prepared on the transaction (used once) and queued; the queue
// is prepared on the engine right after the transaction ends (flushPrepared).
type stmtCache struct {
	mu   sync.Mutex
	m    map[string]*sql.Stmt
	want map[string]bool
}

// txStmt returns q as a statement of tx.
func (e *Engine) txStmt(ctx context.Context, tx *sql.Tx, q string) (*sql.Stmt, error) {
	e.stmts.mu.Lock()
	st, ok := e.stmts.m[q]
	if !ok {
		if e.stmts.want == nil {
			e.stmts.want = map[string]bool{}
		}
		e.stmts.want[q] = true
	}
	e.stmts.mu.Unlock()
	if ok {
		return tx.StmtContext(ctx, st), nil
	}
	return tx.PrepareContext(ctx, q)
}

// flushPrepared prepares the statements queued by transactions; called with the
// connection free (after a commit or rollback). The lock is never held across a
// database call: a goroutine waiting for the connection must not block one holding it.
func (e *Engine) flushPrepared(ctx context.Context) {
	e.stmts.mu.Lock()
	var qs []string
	for q := range e.stmts.want {
		qs = append(qs, q)
	}
	e.stmts.want = nil
	e.stmts.mu.Unlock()
	for _, q := range qs {
		_, _ = e.prepared(ctx, q)
	}
}

// prepared returns q prepared on the engine (outside transactions only).
func (e *Engine) prepared(ctx context.Context, q string) (*sql.Stmt, error) {
	e.stmts.mu.Lock()
	st, ok := e.stmts.m[q]
	e.stmts.mu.Unlock()
	if ok {
		return st, nil
	}
	st, err := e.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	e.stmts.mu.Lock()
	defer e.stmts.mu.Unlock()
	if old, ok := e.stmts.m[q]; ok {
		_ = st.Close()
		return old, nil
	}
	if e.stmts.m == nil {
		e.stmts.m = map[string]*sql.Stmt{}
	}
	e.stmts.m[q] = st
	return st, nil
}

func (e *Engine) closeStmts() {
	e.stmts.mu.Lock()
	defer e.stmts.mu.Unlock()
	for _, st := range e.stmts.m {
		_ = st.Close()
	}
	e.stmts.m = nil
}

func (e *Engine) exec(ctx context.Context, tx *sql.Tx, q string, args ...any) (sql.Result, error) {
	if e.pg {
		return tx.ExecContext(ctx, e.q(q), args...)
	}
	st, err := e.txStmt(ctx, tx, q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (e *Engine) query(ctx context.Context, tx *sql.Tx, q string, args ...any) (*sql.Rows, error) {
	if e.pg {
		return tx.QueryContext(ctx, e.q(q), args...)
	}
	st, err := e.txStmt(ctx, tx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// row is QueryRow with the prepare error folded into Scan, like *sql.Row.
type row struct {
	r   *sql.Row
	err error
}

func (r row) Scan(dst ...any) error {
	if r.err != nil {
		return r.err
	}
	return r.r.Scan(dst...)
}

func (e *Engine) queryRow(ctx context.Context, tx *sql.Tx, q string, args ...any) row {
	if e.pg {
		return row{r: tx.QueryRowContext(ctx, e.q(q), args...)}
	}
	st, err := e.txStmt(ctx, tx, q)
	if err != nil {
		return row{err: err}
	}
	return row{r: st.QueryRowContext(ctx, args...)}
}
