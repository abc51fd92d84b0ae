package auth

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/koder/eventhub/hub"
)

// SessionStore keeps the web console's operator sessions in the ledger's database
// (table auth_sessions), so every replica behind a load balancer knows a session that
// one of them opened, and signing out on one ends it on all. A row holds the SHA-256
// of the session id (the cookie's value never reaches the database, so a copy of the
// table opens no session), the principal the sign-in resolved, the session's CSRF
// token and its expiry. Prune removes expired rows.
type SessionStore struct {
	db  *sql.DB
	now func() time.Time
}

// Session is what a signed-in operator's cookie stands for.
type Session struct {
	Principal Principal
	// CSRF is the token the console's forms carry for this session.
	CSRF    string
	Expires time.Time
}

var sessionsDDL = []string{
	`CREATE TABLE IF NOT EXISTS auth_sessions (
		id_hash TEXT PRIMARY KEY,
		principal TEXT NOT NULL,
		csrf TEXT NOT NULL,
		expires_at BIGINT NOT NULL
	)`,
	`CREATE INDEX IF NOT EXISTS auth_sessions_expires ON auth_sessions (expires_at)`,
}

// NewSessionStore creates the table if needed (idempotent).
func NewSessionStore(ctx context.Context, db *sql.DB) (*SessionStore, error) {
	if err := migrate(ctx, db, "migrate sessions", "auth.sessions", sessionsDDL); err != nil {
		return nil, err
	}
	return &SessionStore{db: db, now: time.Now}, nil
}

// storedPrincipal is a Principal as a row holds it (patterns by their source).
type storedPrincipal struct {
	Kind   Kind     `json:"kind"`
	ID     string   `json:"id"`
	Tenant string   `json:"tenant,omitempty"`
	Types  []string `json:"types,omitempty"`
	All    bool     `json:"all_types,omitempty"` // Types nil: every type
	Scopes []Scope  `json:"scopes"`
}

func sessionKey(id string) string {
	h := sha256.Sum256([]byte(id))
	return hex.EncodeToString(h[:])
}

// Create records the session that id (the cookie's value) opens.
func (s *SessionStore) Create(ctx context.Context, id string, ss Session) error {
	sp := storedPrincipal{Kind: ss.Principal.Kind, ID: ss.Principal.ID, Tenant: ss.Principal.Tenant,
		Scopes: ss.Principal.Scopes, All: ss.Principal.Types == nil}
	for _, p := range ss.Principal.Types {
		sp.Types = append(sp.Types, p.String())
	}
	b, err := json.Marshal(sp)
	if err != nil {
		return hub.Errorf(hub.Internal, "auth: encode session: %w", err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO auth_sessions (id_hash, principal, csrf, expires_at) VALUES ($1, $2, $3, $4)`,
		sessionKey(id), string(b), ss.CSRF, micros(ss.Expires))
	return dbErr("create session", err)
}

// Get returns the session id opens; ok is false when there is none or it has expired.
func (s *SessionStore) Get(ctx context.Context, id string) (ss Session, ok bool, err error) {
	var raw string
	var exp int64
	err = s.db.QueryRowContext(ctx, `SELECT principal, csrf, expires_at FROM auth_sessions WHERE id_hash = $1`, sessionKey(id)).
		Scan(&raw, &ss.CSRF, &exp)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, false, nil
	}
	if err != nil {
		return Session{}, false, dbErr("look up session", err)
	}
	ss.Expires = fromMicros(exp)
	if !s.now().Before(ss.Expires) {
		return Session{}, false, nil
	}
	var sp storedPrincipal
	if err := json.Unmarshal([]byte(raw), &sp); err != nil {
		return Session{}, false, hub.Errorf(hub.Internal, "auth: session row: %w", err)
	}
	ss.Principal = Principal{Kind: sp.Kind, ID: sp.ID, Tenant: sp.Tenant, Scopes: sp.Scopes}
	if !sp.All {
		ss.Principal.Types = make([]hub.Pattern, 0, len(sp.Types))
		for _, t := range sp.Types {
			p, err := hub.CompilePattern(t)
			if err != nil {
				return Session{}, false, hub.Errorf(hub.Internal, "auth: session row: type pattern %q: %w", t, err)
			}
			ss.Principal.Types = append(ss.Principal.Types, p)
		}
	}
	return ss, true, nil
}

// Delete ends the session id opens (idempotent).
func (s *SessionStore) Delete(ctx context.Context, id string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM auth_sessions WHERE id_hash = $1`, sessionKey(id))
	return dbErr("end session", err)
}

// Prune deletes the sessions expired by now and returns how many.
func (s *SessionStore) Prune(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM auth_sessions WHERE expires_at <= $1`, micros(now))
	if err != nil {
		return 0, dbErr("prune sessions", err)
	}
	n, err := res.RowsAffected()
	return n, dbErr("prune sessions", err)
}
