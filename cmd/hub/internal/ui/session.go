package ui

import (
	"context"
	"crypto/sha256"
	"net/http"
	"sync"
	"time"

	"github.com/koder/eventhub/auth"
)

// Operator sessions: a session id is 256 random bits in an HttpOnly, SameSite=Strict
// cookie; the server keeps the principal and the CSRF token under the id's hash. With
// a store (Config.Sessions: the ledger's auth_sessions table, what the hub binary
// uses) every replica sharing the ledger knows every session, so a load balancer needs
// no sticky sessions and signing out on one replica ends the session on all. Without
// one (a console built by library code with no ledger) they live in this process's
// memory and a restart ends them. Nothing signed can outlive a token that was removed
// from the config beyond the session's TTL, because the next sign-in checks it again.

// session is what the cookie stands for: the principal, the CSRF token, the expiry.
type session = auth.Session

// sessionBackend keeps sessions by cookie value.
type sessionBackend interface {
	put(ctx context.Context, id string, s *session) error
	get(ctx context.Context, id string) (*session, bool, error)
	del(ctx context.Context, id string) error
}

// sessions issues, finds and ends sessions. Its clock sets each session's expiry, and
// every expiry check and prune reads the same clock (a store's own Get checks against
// the store's, the wall clock in the binary).
type sessions struct {
	ttl time.Duration
	b   sessionBackend
	now func() time.Time
}

func newSessions(ttl time.Duration, store *auth.SessionStore) *sessions {
	return newSessionsAt(ttl, store, time.Now)
}

// newSessionsAt is newSessions on the clock now.
func newSessionsAt(ttl time.Duration, store *auth.SessionStore, now func() time.Time) *sessions {
	s := &sessions{ttl: ttl, now: now}
	if store != nil {
		s.b = storeSessions{st: store, now: now}
	} else {
		s.b = &memSessions{m: map[[32]byte]*session{}, now: now}
	}
	return s
}

func (s *sessions) create(w http.ResponseWriter, r *http.Request, p auth.Principal) (*session, error) {
	id := randomToken()
	ss := &session{Principal: p, CSRF: randomToken(), Expires: s.now().Add(s.ttl)}
	if err := s.b.put(r.Context(), id, ss); err != nil {
		return nil, err
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: Prefix, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int(s.ttl / time.Second)})
	return ss, nil
}

// get returns the request's session; an error means the store could not be read (the
// caller answers Unavailable rather than sending the operator to sign in again).
func (s *sessions) get(r *http.Request) (*session, bool, error) {
	if ck, err := r.Cookie(sessionCookie); err == nil && ck.Value != "" {
		return s.b.get(r.Context(), ck.Value)
	}
	return nil, false, nil // no cookie: not signed in
}

func (s *sessions) end(w http.ResponseWriter, r *http.Request) error {
	var err error
	if ck, cerr := r.Cookie(sessionCookie); cerr == nil {
		err = s.b.del(r.Context(), ck.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Path: Prefix, MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	return err
}

// storeSessions keeps sessions in an auth.SessionStore (shared by the replicas).
type storeSessions struct {
	st  *auth.SessionStore
	now func() time.Time
}

// put prunes the expired sessions first: sign-ins are rare (each needs a valid token),
// so the table stays small without a background job.
func (b storeSessions) put(ctx context.Context, id string, s *session) error {
	if _, err := b.st.Prune(ctx, b.now()); err != nil {
		return err
	}
	return b.st.Create(ctx, id, *s)
}

// get also checks the expiry on the console's clock, the one that set it.
func (b storeSessions) get(ctx context.Context, id string) (*session, bool, error) {
	ss, ok, err := b.st.Get(ctx, id)
	if !ok || err != nil || !b.now().Before(ss.Expires) {
		return nil, false, err
	}
	return &ss, true, nil
}

func (b storeSessions) del(ctx context.Context, id string) error { return b.st.Delete(ctx, id) }

// memSessions keeps sessions in this process's memory.
type memSessions struct {
	mu  sync.Mutex
	m   map[[32]byte]*session
	now func() time.Time
}

// maxSessions bounds the in-memory table (a sign-in flood cannot grow it without
// limit); the oldest session is dropped beyond it.
const maxSessions = 10_000

func (b *memSessions) put(_ context.Context, id string, s *session) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sweepLocked()
	b.m[sha256.Sum256([]byte(id))] = s
	return nil
}

func (b *memSessions) get(_ context.Context, id string) (*session, bool, error) {
	key := sha256.Sum256([]byte(id))
	b.mu.Lock()
	defer b.mu.Unlock()
	ss, ok := b.m[key]
	if !ok {
		return nil, false, nil
	}
	if !b.now().Before(ss.Expires) {
		delete(b.m, key)
		return nil, false, nil
	}
	return ss, true, nil
}

func (b *memSessions) del(_ context.Context, id string) error {
	b.mu.Lock()
	delete(b.m, sha256.Sum256([]byte(id)))
	b.mu.Unlock()
	return nil
}

// sweepLocked drops expired sessions, and the oldest when the table is full.
func (b *memSessions) sweepLocked() {
	now := b.now()
	var oldestKey [32]byte
	var oldest time.Time
	for k, v := range b.m {
		if !now.Before(v.Expires) {
			delete(b.m, k)
			continue
		}
		if oldest.IsZero() || v.Expires.Before(oldest) {
			oldest, oldestKey = v.Expires, k
		}
	}
	if len(b.m) >= maxSessions {
		delete(b.m, oldestKey)
	}
}
