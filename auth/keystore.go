package auth

import (
	"context"
	"database/sql"
	"encoding/json"
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
	if err := migrate(ctx, db, "migrate api keys", "auth.api_keys", keyDDL); err != nil {
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
