package auth

import (
	"context"
	"database/sql"
	"time"

	"github.com/koder/eventhub/hub"
)

// LinkRevocations is the list of link tokens revoked before their expiry (table
// auth_link_revocations in the ledger's database), so a link handed to the wrong
// person, or to a customer who has left, stops working at once on every replica
// instead of at its expiry. A row is kept until the longest life a link can have has
// passed since the revocation (MaxLinkTTL: the token's own expiry is not needed to
// revoke it by id), then Prune removes it.
type LinkRevocations struct {
	db  *sql.DB
	now func() time.Time
}

var linkRevocationsDDL = []string{
	`CREATE TABLE IF NOT EXISTS auth_link_revocations (
		id TEXT PRIMARY KEY,
		revoked_at BIGINT NOT NULL,
		keep_until BIGINT NOT NULL
	)`,
}

// NewLinkRevocations creates the table if needed (idempotent).
func NewLinkRevocations(ctx context.Context, db *sql.DB) (*LinkRevocations, error) {
	if err := migrate(ctx, db, "migrate link revocations", "auth.link_revocations", linkRevocationsDDL); err != nil {
		return nil, err
	}
	return &LinkRevocations{db: db, now: time.Now}, nil
}

// Revoke revokes the link with id (its jti, LinkClaims.ID). Idempotent; an unknown id
// is recorded too (the hub keeps no list of the links it issued).
func (r *LinkRevocations) Revoke(ctx context.Context, id string) error {
	if id == "" || len(id) > 64 {
		return hub.Errorf(hub.InvalidArgument, "auth: link id %q: want the id POST /links returned", limit(id, 80))
	}
	now := r.now()
	_, err := r.db.ExecContext(ctx, `INSERT INTO auth_link_revocations (id, revoked_at, keep_until) VALUES ($1, $2, $3)
		ON CONFLICT (id) DO NOTHING`, id, micros(now), micros(now.Add(MaxLinkTTL+linkSkew)))
	return dbErr("revoke link", err)
}

// Revoked reports whether the link with id was revoked.
func (r *LinkRevocations) Revoked(ctx context.Context, id string) (bool, error) {
	var n int
	err := r.db.QueryRowContext(ctx, `SELECT count(*) FROM auth_link_revocations WHERE id = $1`, id).Scan(&n)
	return n > 0, dbErr("look up link revocation", err)
}

// Prune deletes the rows whose links have all expired by now.
func (r *LinkRevocations) Prune(ctx context.Context, now time.Time) (int64, error) {
	res, err := r.db.ExecContext(ctx, `DELETE FROM auth_link_revocations WHERE keep_until < $1`, micros(now))
	if err != nil {
		return 0, dbErr("prune link revocations", err)
	}
	n, err := res.RowsAffected()
	return n, dbErr("prune link revocations", err)
}

// WithRevocations returns a signer that also refuses the links r lists; Verify then
// reads r once per token (fail closed: a failed look-up is Unavailable, never a pass).
func (s *LinkSigner) WithRevocations(r *LinkRevocations) *LinkSigner {
	c := *s
	c.revoked = r
	return &c
}
