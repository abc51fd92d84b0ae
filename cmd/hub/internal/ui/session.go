package ui

import (
	"crypto/sha256"
	"net/http"
	"sync"
	"time"

	"github.com/koder/eventhub/auth"
)

// Operator sessions live in this process's memory: a session id is 256 random bits in
// an HttpOnly, SameSite=Strict cookie, and the server keeps the principal and the CSRF
// token under its hash. Signing out or a restart ends it; nothing signed can outlive a
// token that was removed from the config, because the next sign-in checks it again. The
// price: behind a load balancer, an operator's requests must reach the replica that
// signed them in (sticky sessions), or they sign in again.

type session struct {
	principal auth.Principal
	csrf      string
	expires   time.Time
}

type sessions struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[[32]byte]*session
	now func() time.Time
}

// maxSessions bounds the table (a sign-in flood cannot grow it without limit); the
// oldest session is dropped beyond it.
const maxSessions = 10_000

func newSessions(ttl time.Duration) *sessions {
	return &sessions{ttl: ttl, m: map[[32]byte]*session{}, now: time.Now}
}

func (s *sessions) create(w http.ResponseWriter, r *http.Request, p auth.Principal) *session {
	id := randomToken()
	ss := &session{principal: p, csrf: randomToken(), expires: s.now().Add(s.ttl)}
	s.mu.Lock()
	s.sweepLocked()
	s.m[sha256.Sum256([]byte(id))] = ss
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: Prefix, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int(s.ttl / time.Second)})
	return ss
}

func (s *sessions) get(r *http.Request) (*session, bool) {
	ck, err := r.Cookie(sessionCookie)
	if err != nil || ck.Value == "" {
		return nil, false
	}
	key := sha256.Sum256([]byte(ck.Value))
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.m[key]
	if !ok {
		return nil, false
	}
	if !s.now().Before(ss.expires) {
		delete(s.m, key)
		return nil, false
	}
	return ss, true
}

func (s *sessions) end(w http.ResponseWriter, r *http.Request) {
	if ck, err := r.Cookie(sessionCookie); err == nil {
		s.mu.Lock()
		delete(s.m, sha256.Sum256([]byte(ck.Value)))
		s.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Path: Prefix, MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}

// sweepLocked drops expired sessions, and the oldest when the table is full.
func (s *sessions) sweepLocked() {
	now := s.now()
	var oldestKey [32]byte
	var oldest time.Time
	for k, v := range s.m {
		if !now.Before(v.expires) {
			delete(s.m, k)
			continue
		}
		if oldest.IsZero() || v.expires.Before(oldest) {
			oldest, oldestKey = v.expires, k
		}
	}
	if len(s.m) >= maxSessions {
		delete(s.m, oldestKey)
	}
}
