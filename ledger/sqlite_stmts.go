package ledger

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"reflect"
	"sync"

	"modernc.org/sqlite"
)

// The ledger's SQLite connection keeps its prepared statements. River's SQLite driver
// sends every query as text, and modernc.org/sqlite prepares each text anew (parse and
// plan) and finalizes it after one use. River's completer marks finished jobs with one
// such query per job: profiled under end-to-end load, preparing those statements took
// over half of the hub's CPU on SQLite. River sends a small fixed set of query texts,
// so the connection here prepares each text once and runs the prepared statement
// again (SQLite resets it between uses), the way kdbstream's engine caches its own.
//
// A statement whose rows are still open when the same text comes again is not reused
// (SQLite steps one statement at a time): that call prepares a one-off statement. The
// cache is bounded; texts past the bound are prepared per call as before.

// stmtCacheDriverName is the database/sql driver the ledger opens SQLite with.
const stmtCacheDriverName = "eventhub-ledger-sqlite"

// maxCachedStmts bounds the statements one connection keeps (River uses a few dozen).
const maxCachedStmts = 256

func init() { sql.Register(stmtCacheDriverName, stmtCacheDriver{&sqlite.Driver{}}) }

type stmtCacheDriver struct{ inner driver.Driver }

func (d stmtCacheDriver) Open(name string) (driver.Conn, error) {
	c, err := d.inner.Open(name)
	if err != nil {
		return nil, err
	}
	return &stmtCacheConn{inner: c, stmts: map[string]*cachedStmt{}}, nil
}

// innerConn is what the ledger needs of modernc's connection.
type innerConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
}

type stmtCacheConn struct {
	inner driver.Conn
	mu    sync.Mutex
	stmts map[string]*cachedStmt
}

type cachedStmt struct {
	stmt  driver.Stmt
	inUse bool
}

func (c *stmtCacheConn) ic() innerConn { return c.inner.(innerConn) }

// take returns the cached statement of query, preparing it the first time; nil when it
// is in use or the cache is full (the caller then runs the text as is).
func (c *stmtCacheConn) take(ctx context.Context, query string) (*cachedStmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.stmts[query]; ok {
		if s.inUse {
			return nil, nil
		}
		s.inUse = true
		return s, nil
	}
	if len(c.stmts) >= maxCachedStmts {
		return nil, nil
	}
	st, err := c.ic().PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s := &cachedStmt{stmt: st, inUse: true}
	c.stmts[query] = s
	return s, nil
}

func (c *stmtCacheConn) release(s *cachedStmt) {
	c.mu.Lock()
	s.inUse = false
	c.mu.Unlock()
}

func (c *stmtCacheConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	s, err := c.take(ctx, query)
	if err != nil || s == nil {
		return c.ic().QueryContext(ctx, query, args)
	}
	rows, err := s.stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		c.release(s)
		return nil, err
	}
	return &cachedRows{Rows: rows, release: func() { c.release(s) }}, nil
}

func (c *stmtCacheConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	s, err := c.take(ctx, query)
	if err != nil || s == nil {
		return c.ic().ExecContext(ctx, query, args)
	}
	defer c.release(s)
	return s.stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *stmtCacheConn) Prepare(query string) (driver.Stmt, error) { return c.inner.Prepare(query) }

func (c *stmtCacheConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.ic().PrepareContext(ctx, query)
}

func (c *stmtCacheConn) Begin() (driver.Tx, error) {
	return c.ic().BeginTx(context.Background(), driver.TxOptions{})
}

func (c *stmtCacheConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.ic().BeginTx(ctx, opts)
}

func (c *stmtCacheConn) Ping(ctx context.Context) error {
	if p, ok := c.inner.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *stmtCacheConn) ResetSession(ctx context.Context) error {
	if r, ok := c.inner.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *stmtCacheConn) IsValid() bool {
	if v, ok := c.inner.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// Close finalizes the cached statements, then closes the connection.
func (c *stmtCacheConn) Close() error {
	c.mu.Lock()
	for q, s := range c.stmts {
		_ = s.stmt.Close()
		delete(c.stmts, q)
	}
	c.mu.Unlock()
	return c.inner.Close()
}

// cachedRows gives the statement back when the rows close (modernc resets it then).
type cachedRows struct {
	driver.Rows
	once    sync.Once
	release func()
}

func (r *cachedRows) Close() error {
	err := r.Rows.Close()
	r.once.Do(r.release)
	return err
}

// The column-type interfaces of modernc's rows, passed through.

func (r *cachedRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *cachedRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}

func (r *cachedRows) ColumnTypeNullable(i int) (nullable, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}

func (r *cachedRows) ColumnTypeLength(i int) (int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return t.ColumnTypeLength(i)
	}
	return 0, false
}

func (r *cachedRows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return t.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

var (
	_ innerConn                     = (*stmtCacheConn)(nil)
	_ driver.Pinger                 = (*stmtCacheConn)(nil)
	_ driver.SessionResetter        = (*stmtCacheConn)(nil)
	_ driver.Validator              = (*stmtCacheConn)(nil)
	_ driver.RowsColumnTypeScanType = (*cachedRows)(nil)
)
