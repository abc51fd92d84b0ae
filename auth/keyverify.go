package auth

import (
	"context"
	"crypto/subtle"
	"time"

	"github.com/koder/eventhub/internal/flight"
)

// cacheEntry is one id's cached row: key nil means "no such key" (cached too, so a
// flood of forged ids does not become a flood of queries).
type cacheEntry struct {
	key    *APIKey
	loaded time.Time
}

// Verify resolves a presented API key to its principal: the key's tenant, its type
// patterns and the publish scope. A missing, malformed, unknown, revoked or expired key,
// or a wrong secret, is Unauthenticated; too many cache misses at once is
// ResourceExhausted. The key's row comes from the cache when it is younger than
// CacheTTL, so a change made through another replica is seen within that bound.
func (s *KeyStore) Verify(ctx context.Context, key string) (Principal, error) {
	tok, err := ParseAPIKey(key)
	if err != nil {
		return Principal{}, err
	}
	k, err := s.cached(ctx, tok.ID)
	if err != nil {
		return Principal{}, err
	}
	if k == nil {
		return Principal{}, unauthenticated("api-keys", "auth: unknown API key "+tok.ID, nil)
	}
	now := s.now()
	switch {
	case k.Revoked():
		return Principal{}, unauthenticated("api-keys", "auth: API key "+k.ID+" is revoked", nil)
	case !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt):
		return Principal{}, unauthenticated("api-keys", "auth: API key "+k.ID+" has expired", nil)
	}
	h := tok.Hash()
	// Both comparisons always run, so timing says nothing about which secret matched.
	cur := subtle.ConstantTimeCompare([]byte(h), []byte(k.hash))
	prev := subtle.ConstantTimeCompare([]byte(h), []byte(k.prevHash))
	if prev == 1 && !now.Before(k.PreviousValidUntil) {
		prev = 0
	}
	if cur|prev != 1 {
		return Principal{}, unauthenticated("api-keys", "auth: wrong secret for API key "+k.ID, nil)
	}
	return Principal{Kind: KindAPIKey, ID: k.ID, Tenant: k.Tenant, Types: k.compiled, Scopes: publishScopes}, nil
}

var publishScopes = []Scope{ScopePublish}

// cached returns the key row of id from the cache or the database (nil: no such key).
// Concurrent misses of one id share one query.
func (s *KeyStore) cached(ctx context.Context, id string) (*APIKey, error) {
	if s.cfg.CacheTTL > 0 {
		s.mu.RLock()
		e, ok := s.cache[id]
		s.mu.RUnlock()
		if ok && s.now().Sub(e.loaded) < s.cfg.CacheTTL {
			return e.key, nil
		}
	}
	// A caller whose context ends stops waiting; the query goes on for the others, for
	// at most 5 s (flight.Do).
	return flight.Do(ctx, &s.group, id, 5*time.Second, func(qctx context.Context) (*APIKey, error) {
		// One token per query, not per caller: concurrent misses of an id share both.
		if !s.lookups.Allow() {
			return nil, &RateLimitError{Msg: "auth: too many API key lookups; retry shortly", RetryAfter: time.Second}
		}
		loaded := s.now()
		s.mu.RLock()
		gen := s.gen
		s.mu.RUnlock()
		k, err := s.load(qctx, id)
		if err != nil {
			return nil, err
		}
		s.store(id, gen, cacheEntry{key: k, loaded: loaded})
		return k, nil
	})
}

// store caches e unless a change made here invalidated the cache since the row was
// read (gen moved on): a row read before a Revoke must not outlive it.
func (s *KeyStore) store(id string, gen uint64, e cacheEntry) {
	if s.cfg.CacheTTL <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if gen != s.gen {
		return
	}
	if _, ok := s.cache[id]; !ok && len(s.cache) >= s.cfg.CacheSize {
		// Full: drop expired entries, and if none were, an arbitrary tenth. Map order
		// is random enough that a forged-id flood cannot pin real keys out.
		now := s.now()
		for k, v := range s.cache {
			if now.Sub(v.loaded) >= s.cfg.CacheTTL {
				delete(s.cache, k)
			}
		}
		for k := range s.cache {
			if len(s.cache) < s.cfg.CacheSize-s.cfg.CacheSize/10 {
				break
			}
			delete(s.cache, k)
		}
	}
	s.cache[id] = e
}

// invalidate drops id from this process's cache after a change made here.
func (s *KeyStore) invalidate(id string) {
	s.mu.Lock()
	delete(s.cache, id)
	s.gen++
	s.mu.Unlock()
	s.group.Forget(id)
}
