package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/koder/eventhub/hub"
)

// Admin tokens are the operator's (and optionally tenants') bearer tokens for the admin
// API. Several may be live at once, so a token can be rotated without downtime: add the
// new one, move clients, remove the old one.
//
// The token file holds one token per line; blank lines and lines starting with # are
// ignored. A token may be followed by attributes:
//
//	# operator, every scope
//	eha_k2jd...
//	# tenant-scoped: sees and manages tenant acme's objects only
//	eha_9fq3... tenant=acme
//	# read-only monitoring
//	eha_x1p0... scopes=read
//
// Tokens must be token68 (so they fit a Bearer header) and must not look like an API
// key (ehk_), a link token (ehl_) or a JWT, whose shapes route a credential elsewhere.

// AdminTokenPrefix starts tokens made by GenerateAdminToken (any token68 string works).
const AdminTokenPrefix = "eha_"

// MinAdminTokenLen is the shortest token that is not reported by Short: 128 bits of
// base32 are 26 characters; anything much shorter was probably typed by hand.
const MinAdminTokenLen = 24

// AdminToken is one configured token, without its value.
type AdminToken struct {
	// ID is the first 8 hex digits of the token's SHA-256: it names the token in logs
	// and the audit trail without revealing it.
	ID     string
	Tenant string
	Scopes []Scope
	short  bool
	hash   [32]byte
}

// AdminTokens is a set of admin tokens. The zero value holds none. Safe for concurrent
// use (it is immutable).
type AdminTokens struct{ tokens []AdminToken }

// GenerateAdminToken returns a new random token (256 bits).
func GenerateAdminToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return AdminTokenPrefix + b32.EncodeToString(b[:])
}

// AdminTokenID returns the id a token is known by.
func AdminTokenID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:4])
}

// LoadAdminTokens builds the set from an environment value (tokens separated by commas
// or whitespace, each an operator token) and a token file (see above; "" for none).
// Errors name the file and line, never the token.
func LoadAdminTokens(env, file string) (*AdminTokens, error) {
	var set AdminTokens
	for i, tok := range strings.FieldsFunc(env, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		if err := set.add(tok, "", AllScopes, "token "+strconv.Itoa(i+1)+" of the environment"); err != nil {
			return nil, err
		}
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, hub.Errorf(hub.InvalidArgument, "auth: admin token file: %w", err)
		}
		if err := set.parse(string(b), file); err != nil {
			return nil, err
		}
	}
	return &set, nil
}

// ParseAdminTokens parses token file text; name labels errors.
func ParseAdminTokens(text, name string) (*AdminTokens, error) {
	var set AdminTokens
	if err := set.parse(text, name); err != nil {
		return nil, err
	}
	return &set, nil
}

func (s *AdminTokens) parse(text, name string) error {
	for n, line := range strings.Split(text, "\n") {
		where := name + ":" + strconv.Itoa(n+1)
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		tenant, scopes := "", AllScopes
		for _, attr := range f[1:] {
			k, v, _ := strings.Cut(attr, "=")
			switch k {
			case "tenant":
				if err := checkTenant(where+": tenant", v); err != nil {
					return err
				}
				tenant = v
			case "scopes":
				scopes = nil
				for _, sc := range strings.Split(v, ",") {
					switch Scope(sc) {
					case ScopeRead, ScopeWrite, ScopePublish:
						scopes = append(scopes, Scope(sc))
					default:
						return hub.Errorf(hub.InvalidArgument, "auth: %s: unknown scope %q (read, write, publish)", where, sc)
					}
				}
			default:
				return hub.Errorf(hub.InvalidArgument, "auth: %s: unknown attribute %q (tenant=, scopes=)", where, limit(k, 20))
			}
		}
		if err := s.add(f[0], tenant, scopes, where); err != nil {
			return err
		}
	}
	return nil
}

func (s *AdminTokens) add(tok, tenant string, scopes []Scope, where string) error {
	switch {
	case len(tok) > MaxCredentialLen || !isToken68(tok):
		return hub.Errorf(hub.InvalidArgument, "auth: %s: admin token must be token68 characters (letters, digits, -._~+/) and at most %d bytes", where, MaxCredentialLen)
	case LooksLikeAPIKey(tok) || LooksLikeLink(tok) || LooksLikeJWT(tok):
		return hub.Errorf(hub.InvalidArgument, "auth: %s: admin token must not look like an API key (ehk_), a link token (ehl_) or a JWT", where)
	}
	t := AdminToken{ID: AdminTokenID(tok), Tenant: tenant, Scopes: scopes, short: len(tok) < MinAdminTokenLen, hash: sha256.Sum256([]byte(tok))}
	for _, o := range s.tokens {
		if o.hash == t.hash {
			return hub.Errorf(hub.InvalidArgument, "auth: %s: duplicate admin token (id %s)", where, t.ID)
		}
		if o.ID == t.ID {
			return hub.Errorf(hub.InvalidArgument, "auth: %s: two admin tokens share the id %s; generate another", where, t.ID)
		}
	}
	s.tokens = append(s.tokens, t)
	return nil
}

// Len is the number of tokens.
func (s *AdminTokens) Len() int {
	if s == nil {
		return 0
	}
	return len(s.tokens)
}

// Tokens lists the tokens (ids, tenants and scopes; never values).
func (s *AdminTokens) Tokens() []AdminToken {
	if s == nil {
		return nil
	}
	return slices.Clone(s.tokens)
}

// Short returns the ids of tokens shorter than MinAdminTokenLen, for a startup warning.
func (s *AdminTokens) Short() []string {
	var ids []string
	for _, t := range s.Tokens() {
		if t.short {
			ids = append(ids, t.ID)
		}
	}
	return ids
}

// Verify resolves a presented token. The presented token is hashed and compared with
// every configured hash in constant time, without stopping at a match, so neither the
// position of the match nor a length difference shows in the timing.
func (s *AdminTokens) Verify(_ context.Context, token string) (Principal, error) {
	if s == nil {
		return Principal{}, unauthenticated("admin-tokens", "auth: unknown admin token", nil)
	}
	sum := sha256.Sum256([]byte(token))
	found := -1
	for i := range s.tokens {
		if subtle.ConstantTimeCompare(sum[:], s.tokens[i].hash[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Principal{}, unauthenticated("admin-tokens", "auth: unknown admin token", nil)
	}
	t := s.tokens[found]
	return Principal{Kind: KindAdminToken, ID: t.ID, Tenant: t.Tenant, Scopes: t.Scopes}, nil
}
