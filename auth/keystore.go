package auth

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	"golang.org/x/time/rate"

	"github.com/koder/eventhub/hub"
)

// Defaults of KeyStoreConfig.
const (
	// DefaultKeyCacheTTL bounds how stale this process's view of a key may be: a key
	// created, revoked or rotated through another replica takes effect here within it
	// (at once through this one). 10 s keeps the database out of the per-event path (one
	// lookup per key per 10 s) while a leaked key stops working within seconds.
	DefaultKeyCacheTTL = 10 * time.Second
	// DefaultKeyCacheSize bounds the cache (entries, unknown ids included).
	DefaultKeyCacheSize = 10000
	// DefaultRotateGrace is how long the previous secret keeps working after a rotation,
	// so publishers can be redeployed with the new one.
	DefaultRotateGrace = 24 * time.Hour
	// DefaultKeyLookupRate and DefaultKeyLookupBurst bound database lookups caused by
	// cache misses (per second, per process). Ids are visible and the check characters
	// are not secret, so well-formed unknown keys can be forged at will; without a bound
	// each would cost a query. Beyond it, misses are refused as ResourceExhausted with
	// Retry-After 1 s, cached keys keep working.
	DefaultKeyLookupRate  = 500
	DefaultKeyLookupBurst = 1000
)

// KeyStoreConfig configures a KeyStore. The zero value takes every default.
type KeyStoreConfig struct {
	// CacheTTL: the staleness bound of the verification cache; negative disables the
	// cache (every Verify queries). Default DefaultKeyCacheTTL.
	CacheTTL time.Duration `yaml:"cache_ttl"`
	// CacheSize: most cached ids. Default DefaultKeyCacheSize.
	CacheSize int `yaml:"cache_size"`
	// RotateGrace: default life of a rotated-out secret. Default DefaultRotateGrace.
	RotateGrace time.Duration `yaml:"rotate_grace"`
	// LookupRate, LookupBurst: database lookups per second on cache misses. Defaults
	// DefaultKeyLookupRate, DefaultKeyLookupBurst.
	LookupRate  float64 `yaml:"lookup_rate"`
	LookupBurst int     `yaml:"lookup_burst"`
}

func (c *KeyStoreConfig) setDefaults() {
	if c.CacheTTL == 0 {
		c.CacheTTL = DefaultKeyCacheTTL
	}
	if c.CacheSize == 0 {
		c.CacheSize = DefaultKeyCacheSize
	}
	if c.RotateGrace == 0 {
		c.RotateGrace = DefaultRotateGrace
	}
	if c.LookupRate == 0 {
		c.LookupRate = DefaultKeyLookupRate
	}
	if c.LookupBurst == 0 {
		c.LookupBurst = DefaultKeyLookupBurst
	}
}

// Validate reports the first invalid field by name.
func (c *KeyStoreConfig) Validate() error {
	switch {
	case c.CacheSize < 0:
		return hub.Errorf(hub.InvalidArgument, "auth: KeyStoreConfig.CacheSize %d: must not be negative", c.CacheSize)
	case c.RotateGrace < 0:
		return hub.Errorf(hub.InvalidArgument, "auth: KeyStoreConfig.RotateGrace %s: must not be negative", c.RotateGrace)
	case c.LookupRate < 0 || c.LookupBurst < 0:
		return hub.Errorf(hub.InvalidArgument, "auth: KeyStoreConfig.LookupRate/LookupBurst: must not be negative")
	}
	return nil
}

// APIKey is a key's metadata: everything but the secret, safe to list and log.
type APIKey struct {
	ID     string   `json:"id"`
	Tenant string   `json:"tenant_id"`
	Name   string   `json:"name,omitempty"`
	Types  []string `json:"types,omitempty"` // hub patterns; empty: every type
	// Prefix is how the key starts ("ehk_<id>_"), to recognise it in a config file.
	Prefix    string    `json:"prefix"`
	CreatedAt time.Time `json:"created_at"`
	RotatedAt time.Time `json:"rotated_at,omitzero"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	RevokedAt time.Time `json:"revoked_at,omitzero"`
	// PreviousValidUntil: after a rotation, the previous secret works until then.
	PreviousValidUntil time.Time `json:"previous_valid_until,omitzero"`

	hash, prevHash string
	compiled       []hub.Pattern
}

// Revoked reports whether the key was revoked.
func (k *APIKey) Revoked() bool { return !k.RevokedAt.IsZero() }

// KeySpec describes a key to create.
type KeySpec struct {
	// Tenant is required: every key is bound to one tenant and may only publish its
	// events.
	Tenant string
	// Name is a label for people ("billing-service prod").
	Name string
	// Types optionally restricts the event types (hub pattern syntax, RabbitMQ topic
	// semantics: "billing.#"); empty allows every type.
	Types []string
	// ExpiresAt optionally ends the key.
	ExpiresAt time.Time
}

// KeyStore creates, lists, revokes and rotates API keys in SQL, and verifies presented
// keys through an in-process cache (see KeyStoreConfig.CacheTTL for the staleness
// bound). It is safe for concurrent use.
type KeyStore struct {
	db      *sql.DB
	cfg     KeyStoreConfig
	now     func() time.Time
	lookups *rate.Limiter

	mu    sync.RWMutex
	cache map[string]cacheEntry
	gen   uint64 // bumped by every local change; see store
	group singleflight.Group
}

// NewKeyStore creates the key table if needed (idempotent) and returns the store. db is
// the ledger's database (see the package doc).
func NewKeyStore(ctx context.Context, db *sql.DB, cfg KeyStoreConfig) (*KeyStore, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := migrate(ctx, db, "migrate api keys", keyDDL); err != nil {
		return nil, err
	}
	return &KeyStore{
		db: db, cfg: cfg, now: time.Now,
		lookups: rate.NewLimiter(rate.Limit(cfg.LookupRate), cfg.LookupBurst),
		cache:   map[string]cacheEntry{},
	}, nil
}

var keyDDL = []string{
	`CREATE TABLE IF NOT EXISTS auth_api_keys (
		id TEXT PRIMARY KEY,
		tenant_id TEXT NOT NULL,
		name TEXT NOT NULL DEFAULT '',
		types TEXT NOT NULL DEFAULT '[]',
		hash TEXT NOT NULL,
		prev_hash TEXT NOT NULL DEFAULT '',
		prev_until BIGINT NOT NULL DEFAULT 0,
		created_at BIGINT NOT NULL,
		rotated_at BIGINT NOT NULL DEFAULT 0,
		expires_at BIGINT NOT NULL DEFAULT 0,
		revoked_at BIGINT NOT NULL DEFAULT 0
	)`,
	`CREATE INDEX IF NOT EXISTS auth_api_keys_tenant ON auth_api_keys (tenant_id, created_at, id)`,
}

const keyCols = `id, tenant_id, name, types, hash, prev_hash, prev_until, created_at, rotated_at, expires_at, revoked_at`

func scanKey(r interface{ Scan(...any) error }) (*APIKey, error) {
	var (
		k                                     APIKey
		types                                 string
		prevUntil, created, rotated, exp, rev int64
	)
	if err := r.Scan(&k.ID, &k.Tenant, &k.Name, &types, &k.hash, &k.prevHash, &prevUntil, &created, &rotated, &exp, &rev); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(types), &k.Types); err != nil {
		return nil, hub.Errorf(hub.Internal, "auth: key %s: types: %w", k.ID, err)
	}
	var err error
	if k.compiled, err = compileTypes(k.Types); err != nil {
		return nil, hub.Errorf(hub.Internal, "auth: key %s: %w", k.ID, err)
	}
	k.Prefix = APIKeyPrefix + k.ID + "_"
	k.PreviousValidUntil = fromMicros(prevUntil)
	k.CreatedAt, k.RotatedAt, k.ExpiresAt, k.RevokedAt = fromMicros(created), fromMicros(rotated), fromMicros(exp), fromMicros(rev)
	return &k, nil
}

func compileTypes(types []string) ([]hub.Pattern, error) {
	if len(types) == 0 {
		return nil, nil
	}
	out := make([]hub.Pattern, 0, len(types))
	for _, t := range types {
		p, err := hub.CompilePattern(t)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

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
