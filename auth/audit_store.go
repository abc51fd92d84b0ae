package auth

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"

	"github.com/koder/eventhub/hub"
)

// AuditStore keeps audit records in SQL (the ledger's database, table auth_audit),
// listed newest first with keyset paging on the record id.
type AuditStore struct{ db *sql.DB }

var auditDDL = []string{
	`CREATE TABLE IF NOT EXISTS auth_audit (
		id TEXT PRIMARY KEY,
		at BIGINT NOT NULL,
		actor_kind TEXT NOT NULL,
		actor_id TEXT NOT NULL,
		tenant_id TEXT NOT NULL DEFAULT '',
		action TEXT NOT NULL,
		object TEXT NOT NULL DEFAULT '',
		outcome TEXT NOT NULL,
		detail TEXT NOT NULL DEFAULT ''
	)`,
	`CREATE INDEX IF NOT EXISTS auth_audit_tenant ON auth_audit (tenant_id, id)`,
	`CREATE INDEX IF NOT EXISTS auth_audit_actor ON auth_audit (actor_id, id)`,
	`CREATE INDEX IF NOT EXISTS auth_audit_object ON auth_audit (object, id)`,
}

// NewAuditStore creates the table if needed (idempotent).
func NewAuditStore(ctx context.Context, db *sql.DB) (*AuditStore, error) {
	if err := migrate(ctx, db, "migrate audit", "auth.audit", auditDDL); err != nil {
		return nil, err
	}
	return &AuditStore{db: db}, nil
}

// Insert stores rec as given (AuditLog.Record fills the id and time).
func (s *AuditStore) Insert(ctx context.Context, rec AuditRecord) error {
	if rec.ID == "" || rec.Action == "" {
		return hub.Errorf(hub.InvalidArgument, "auth: audit record needs an ID and an Action")
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO auth_audit (id, at, actor_kind, actor_id, tenant_id, action, object, outcome, detail)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		rec.ID, micros(rec.Time), string(rec.ActorKind), rec.ActorID, rec.Tenant, rec.Action, rec.Object, rec.Outcome, rec.Detail)
	return dbErr("insert audit record", err)
}

// AuditQuery filters and pages List. Empty fields do not filter.
type AuditQuery struct {
	// Tenant: only records concerning this tenant. A tenant-scoped caller must set it to
	// its own tenant (the admin API does so from the principal).
	Tenant  string
	ActorID string
	Object  string
	Action  string
	// Since and Until bound the record time (Until exclusive).
	Since, Until time.Time
	// Limit: page size, default 100, at most 1000.
	Limit int
	// Before: the cursor returned by the previous page ("" = newest first page).
	Before string
}

// ScopedTo returns q limited to what p may see: a tenant-scoped principal gets its own
// tenant's records whatever q asked for; an operator's query is unchanged.
func (q AuditQuery) ScopedTo(p Principal) AuditQuery {
	if !p.Operator() {
		q.Tenant = p.Tenant
	}
	return q
}

// List returns matching records newest first and the cursor of the next (older) page,
// "" after the last.
func (s *AuditStore) List(ctx context.Context, q AuditQuery) ([]AuditRecord, string, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	var where []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if q.Tenant != "" {
		add("tenant_id = ?", q.Tenant)
	}
	if q.ActorID != "" {
		add("actor_id = ?", q.ActorID)
	}
	if q.Object != "" {
		add("object = ?", q.Object)
	}
	if q.Action != "" {
		add("action = ?", q.Action)
	}
	if !q.Since.IsZero() {
		add("at >= ?", micros(q.Since))
	}
	if !q.Until.IsZero() {
		add("at < ?", micros(q.Until))
	}
	if q.Before != "" {
		if !strings.HasPrefix(q.Before, "aud_") || len(q.Before) > 40 {
			return nil, "", hub.Errorf(hub.InvalidArgument, "auth: AuditQuery.Before: bad cursor")
		}
		add("id < ?", q.Before)
	}
	stmt := `SELECT id, at, actor_kind, actor_id, tenant_id, action, object, outcome, detail FROM auth_audit`
	if len(where) > 0 {
		stmt += ` WHERE ` + strings.Join(where, " AND ")
	}
	stmt += ` ORDER BY id DESC LIMIT ` + strconv.Itoa(limit+1)
	rows, err := s.db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, "", dbErr("list audit", err)
	}
	defer rows.Close()
	var out []AuditRecord
	for rows.Next() {
		var r AuditRecord
		var at int64
		var kind string
		if err := rows.Scan(&r.ID, &at, &kind, &r.ActorID, &r.Tenant, &r.Action, &r.Object, &r.Outcome, &r.Detail); err != nil {
			return nil, "", dbErr("list audit", err)
		}
		r.Time, r.ActorKind = fromMicros(at), Kind(kind)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, "", dbErr("list audit", err)
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		next = out[limit-1].ID
	}
	return out, next, nil
}

// Prune deletes records older than before and reports how many went.
func (s *AuditStore) Prune(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM auth_audit WHERE at < $1`, micros(before))
	if err != nil {
		return 0, dbErr("prune audit", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
