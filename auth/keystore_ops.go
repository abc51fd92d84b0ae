package auth

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/koder/eventhub/hub"
)

// Create makes a key and returns its metadata and the key itself, which is shown this
// once: only its hash is stored.
func (s *KeyStore) Create(ctx context.Context, spec KeySpec) (*APIKey, string, error) {
	if err := checkTenant("KeySpec.Tenant", spec.Tenant); err != nil {
		return nil, "", err
	}
	if err := checkText("KeySpec.Name", spec.Name, 200); err != nil {
		return nil, "", err
	}
	compiled, err := compileTypes(spec.Types)
	if err != nil {
		return nil, "", hub.Errorf(hub.InvalidArgument, "auth: KeySpec.Types: %w", err)
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	if !spec.ExpiresAt.IsZero() && !spec.ExpiresAt.After(now) {
		return nil, "", hub.Errorf(hub.InvalidArgument, "auth: KeySpec.ExpiresAt %s is not in the future", spec.ExpiresAt.Format(time.RFC3339))
	}
	tok := newAPIKey(newKeyID())
	k := &APIKey{ID: tok.ID, Tenant: spec.Tenant, Name: spec.Name, Types: append([]string(nil), spec.Types...),
		Prefix: APIKeyPrefix + tok.ID + "_", CreatedAt: now, ExpiresAt: spec.ExpiresAt.UTC().Truncate(time.Microsecond),
		hash: tok.Hash(), compiled: compiled}
	types, _ := json.Marshal(k.Types)
	if k.Types == nil {
		types = []byte("[]")
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO auth_api_keys (`+keyCols+`)
		VALUES ($1, $2, $3, $4, $5, '', 0, $6, 0, $7, 0)`,
		k.ID, k.Tenant, k.Name, string(types), k.hash, micros(now), micros(k.ExpiresAt)); err != nil {
		return nil, "", dbErr("create key", err)
	}
	s.invalidate(k.ID)
	return k, tok.String(), nil
}

// KeyRef names one key; a non-empty Tenant scopes the operation to that tenant's keys
// (another tenant's key is NotFound, as an absent one).
type KeyRef struct {
	ID     string
	Tenant string
}

// Get returns a key's metadata.
func (s *KeyStore) Get(ctx context.Context, ref KeyRef) (*APIKey, error) {
	if !validKeyID(ref.ID) {
		return nil, hub.Errorf(hub.NotFound, "auth: API key %q not found", ref.ID)
	}
	k, err := s.load(ctx, ref.ID)
	if err != nil {
		return nil, err
	}
	if k == nil || (ref.Tenant != "" && k.Tenant != ref.Tenant) {
		return nil, hub.Errorf(hub.NotFound, "auth: API key %s not found", ref.ID)
	}
	return k, nil
}

// load reads one key; nil when absent.
func (s *KeyStore) load(ctx context.Context, id string) (*APIKey, error) {
	k, err := scanKey(s.db.QueryRowContext(ctx, `SELECT `+keyCols+` FROM auth_api_keys WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, dbErr("get key", err)
	}
	return k, nil
}

// ListKeysParams filters and pages List.
type ListKeysParams struct {
	// Tenant: only this tenant's keys ("" = all, for operators).
	Tenant string
	// IncludeRevoked lists revoked keys too.
	IncludeRevoked bool
	// Limit: page size, default 100, at most 1000.
	Limit int
	// After: the cursor returned by the previous page ("" = first page).
	After string
}

// ScopedTo returns p limited to what pr may see (see AuditQuery.ScopedTo).
func (p ListKeysParams) ScopedTo(pr Principal) ListKeysParams {
	if !pr.Operator() {
		p.Tenant = pr.Tenant
	}
	return p
}

// ScopedTo returns r limited to pr's tenant: another tenant's key is then NotFound.
func (r KeyRef) ScopedTo(pr Principal) KeyRef {
	if !pr.Operator() {
		r.Tenant = pr.Tenant
	}
	return r
}

// List returns keys in creation order and the cursor of the next page ("" after the
// last).
func (s *KeyStore) List(ctx context.Context, p ListKeysParams) ([]*APIKey, string, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	q := `SELECT ` + keyCols + ` FROM auth_api_keys WHERE ($1 = '' OR tenant_id = $1) AND ($2 = 1 OR revoked_at = 0)`
	args := []any{p.Tenant, boolInt(p.IncludeRevoked)}
	if p.After != "" {
		at, id, ok := parseCursor(p.After)
		if !ok {
			return nil, "", hub.Errorf(hub.InvalidArgument, "auth: ListKeysParams.After: bad cursor")
		}
		q += ` AND (created_at > $3 OR (created_at = $3 AND id > $4))`
		args = append(args, at, id)
	}
	q += ` ORDER BY created_at, id LIMIT ` + strconv.Itoa(limit+1)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, "", dbErr("list keys", err)
	}
	defer rows.Close()
	var out []*APIKey
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, "", dbErr("list keys", err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, "", dbErr("list keys", err)
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		next = cursor(micros(last.CreatedAt), last.ID)
	}
	return out, next, nil
}

// Revoke ends a key at once on this process and within CacheTTL on the others. Revoking
// a revoked key returns it unchanged.
func (s *KeyStore) Revoke(ctx context.Context, ref KeyRef) (*APIKey, error) {
	k, err := s.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	if k.Revoked() {
		return k, nil
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	if _, err := s.db.ExecContext(ctx, `UPDATE auth_api_keys SET revoked_at = $2, prev_hash = '', prev_until = 0
		WHERE id = $1 AND revoked_at = 0`, k.ID, micros(now)); err != nil {
		return nil, dbErr("revoke key", err)
	}
	s.invalidate(k.ID)
	return s.Get(ctx, ref)
}

// RotateParams names the key to rotate. Grace is how long the current secret keeps
// working: 0 takes KeyStoreConfig.RotateGrace, a negative value ends it at once.
type RotateParams struct {
	KeyRef
	Grace time.Duration
}

// Rotate gives a key a new secret, returned once, keeping its id, tenant and types. The
// current secret stays valid for the grace period; a secret rotated out earlier and
// still in its grace period stops at once (a key has at most two live secrets).
func (s *KeyStore) Rotate(ctx context.Context, p RotateParams) (*APIKey, string, error) {
	k, err := s.Get(ctx, p.KeyRef)
	if err != nil {
		return nil, "", err
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	switch {
	case k.Revoked():
		return nil, "", hub.Errorf(hub.FailedPrecondition, "auth: API key %s is revoked", k.ID)
	case !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt):
		return nil, "", hub.Errorf(hub.FailedPrecondition, "auth: API key %s has expired", k.ID)
	}
	grace := p.Grace
	if grace == 0 {
		grace = s.cfg.RotateGrace
	}
	prevHash, prevUntil := k.hash, now.Add(grace)
	if grace < 0 {
		prevHash, prevUntil = "", time.Time{}
	}
	tok := newAPIKey(k.ID)
	// The old hash in the WHERE clause makes a concurrent rotation lose cleanly instead
	// of leaving a secret nobody was shown.
	res, err := s.db.ExecContext(ctx, `UPDATE auth_api_keys SET hash = $2, prev_hash = $3, prev_until = $4, rotated_at = $5
		WHERE id = $1 AND hash = $6 AND revoked_at = 0`,
		k.ID, tok.Hash(), prevHash, micros(prevUntil), micros(now), k.hash)
	if err != nil {
		return nil, "", dbErr("rotate key", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return nil, "", hub.Errorf(hub.FailedPrecondition, "auth: API key %s changed during the rotation; try again", k.ID)
	}
	s.invalidate(k.ID)
	k, err = s.Get(ctx, p.KeyRef)
	if err != nil {
		return nil, "", err
	}
	return k, tok.String(), nil
}

func cursor(at int64, id string) string { return strconv.FormatInt(at, 10) + "." + id }

func parseCursor(c string) (int64, string, bool) {
	a, id, ok := strings.Cut(c, ".")
	if !ok || id == "" || len(id) > 100 {
		return 0, "", false
	}
	at, err := strconv.ParseInt(a, 10, 64)
	return at, id, err == nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
