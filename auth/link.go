package auth

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/koder/eventhub/hub"
)

// Link tokens are signed, expiring, tenant-scoped credentials the hub issues itself, for
// URLs handed to a tenant (the web console's tenant portal):
//
//	ehl_<kid>.<payload>.<mac>
//
// kid is 8 hex digits naming the signing key (the first 4 bytes of its SHA-256), payload
// the unpadded base64url of a JSON object {"v":1,"tid":tenant,"scp":"read write",
// "iat":unix,"exp":unix,"jti":nonce}, and mac the unpadded base64url HMAC-SHA256 of
// "ehl_<kid>.<payload>" under that key. HMAC is right here, unlike for JWTs from an
// identity provider: the hub both issues and verifies, so the key never leaves it. The
// signer holds several keys (the first signs, all verify), so the key rotates without
// cutting live links; removing a key revokes every link it signed, and one link is
// revoked by its id (LinkRevocations, DELETE /links/{id} in the binary).

// LinkPrefix starts every link token.
const LinkPrefix = "ehl_"

// Link token limits.
const (
	// DefaultLinkTTL is the life of a link issued with ttl 0.
	DefaultLinkTTL = 24 * time.Hour
	// MaxLinkTTL is the longest life Issue grants and Verify accepts.
	MaxLinkTTL = 30 * 24 * time.Hour
	// MinLinkKeyLen is the shortest signing key (256 bits).
	MinLinkKeyLen = 32
	// linkSkew tolerates clock differences between replicas sharing the key.
	linkSkew = 5 * time.Second

	maxLinkPayload = 1024
	linkKIDLen     = 8
	linkMACLen     = 43 // base64url of 32 bytes, unpadded
)

// LinkClaims is what a link token asserts.
type LinkClaims struct {
	Version  int    `json:"v"`
	Tenant   string `json:"tid"`
	Scopes   string `json:"scp"` // space-separated: read, write
	IssuedAt int64  `json:"iat"`
	Expires  int64  `json:"exp"`
	ID       string `json:"jti"`
}

type linkKey struct {
	kid string
	key []byte
}

// LinkSigner issues and verifies link tokens. Safe for concurrent use (immutable).
type LinkSigner struct {
	keys    []linkKey
	now     func() time.Time
	revoked *LinkRevocations // WithRevocations; nil: none
}

// NewLinkSigner returns a signer over keys: the first signs, every one verifies. Keys
// must be at least MinLinkKeyLen bytes of secret randomness (secrets.Keyring.DeriveKeys
// derives them from the hub's secret key).
func NewLinkSigner(keys ...[]byte) (*LinkSigner, error) {
	if len(keys) == 0 {
		return nil, hub.Errorf(hub.InvalidArgument, "auth: link signer: no key")
	}
	s := &LinkSigner{now: time.Now}
	for i, k := range keys {
		if len(k) < MinLinkKeyLen {
			return nil, hub.Errorf(hub.InvalidArgument, "auth: link signer: key %d is %d bytes, want at least %d", i+1, len(k), MinLinkKeyLen)
		}
		sum := sha256.Sum256(k)
		kid := hex.EncodeToString(sum[:4])
		for _, o := range s.keys {
			if o.kid == kid {
				return nil, hub.Errorf(hub.InvalidArgument, "auth: link signer: key %d repeats key id %s", i+1, kid)
			}
		}
		s.keys = append(s.keys, linkKey{kid: kid, key: bytes.Clone(k)})
	}
	return s, nil
}

// LooksLikeLink reports whether s has the link token prefix.
func LooksLikeLink(s string) bool { return strings.HasPrefix(s, LinkPrefix) }

// Issue signs a link for tenant with the given scopes (default read) valid for ttl
// (0: DefaultLinkTTL; at most MaxLinkTTL).
func (s *LinkSigner) Issue(tenant string, scopes []Scope, ttl time.Duration) (string, LinkClaims, error) {
	if err := checkTenant("link tenant", tenant); err != nil {
		return "", LinkClaims{}, err
	}
	if ttl == 0 {
		ttl = DefaultLinkTTL
	}
	if ttl < 0 || ttl > MaxLinkTTL {
		return "", LinkClaims{}, hub.Errorf(hub.InvalidArgument, "auth: link ttl %s: between 1s and %s", ttl, MaxLinkTTL)
	}
	if len(scopes) == 0 {
		scopes = []Scope{ScopeRead}
	}
	names := make([]string, 0, len(scopes))
	for _, sc := range scopes {
		if sc != ScopeRead && sc != ScopeWrite {
			return "", LinkClaims{}, hub.Errorf(hub.InvalidArgument, "auth: link scope %q: links grant read or write only", sc)
		}
		names = append(names, string(sc))
	}
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	now := s.now()
	c := LinkClaims{Version: 1, Tenant: tenant, Scopes: strings.Join(names, " "), IssuedAt: now.Unix(),
		Expires: now.Add(ttl).Unix(), ID: b32.EncodeToString(nonce[:])}
	body, _ := json.Marshal(c)
	k := s.keys[0]
	signed := LinkPrefix + k.kid + "." + base64.RawURLEncoding.EncodeToString(body)
	return signed + "." + base64.RawURLEncoding.EncodeToString(linkMAC(k.key, signed)), c, nil
}

func linkMAC(key []byte, signed string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signed))
	return m.Sum(nil)
}

// Verify resolves a link token to its tenant-scoped principal (ID is the link's jti).
func (s *LinkSigner) Verify(ctx context.Context, token string) (Principal, error) {
	c, err := s.Parse(token)
	if err != nil {
		return Principal{}, err
	}
	if s.revoked != nil {
		gone, err := s.revoked.Revoked(ctx, c.ID)
		if err != nil {
			return Principal{}, err
		}
		if gone {
			return Principal{}, badLink("revoked")
		}
	}
	var scopes []Scope
	for _, sc := range strings.Fields(c.Scopes) {
		scopes = append(scopes, Scope(sc))
	}
	return Principal{Kind: KindLink, ID: c.ID, Tenant: c.Tenant, Scopes: scopes}, nil
}

// Parse checks a link token's format, signature (constant time, before the payload is
// decoded), version, expiry and claims, and returns the claims.
func (s *LinkSigner) Parse(token string) (LinkClaims, error) {
	rest, ok := strings.CutPrefix(token, LinkPrefix)
	if !ok || len(token) > len(LinkPrefix)+linkKIDLen+2+maxLinkPayload+linkMACLen {
		return LinkClaims{}, badLink("malformed")
	}
	kid, rest, ok := strings.Cut(rest, ".")
	if !ok || len(kid) != linkKIDLen {
		return LinkClaims{}, badLink("malformed key id")
	}
	payload, mac, ok := strings.Cut(rest, ".")
	if !ok || payload == "" || len(payload) > maxLinkPayload || len(mac) != linkMACLen || !isBase64URL(payload) || !isBase64URL(mac) {
		return LinkClaims{}, badLink("malformed")
	}
	var key []byte
	for _, k := range s.keys {
		if k.kid == kid {
			key = k.key
		}
	}
	if key == nil {
		return LinkClaims{}, badLink("signed by an unknown or retired key")
	}
	got, err := base64.RawURLEncoding.Strict().DecodeString(mac)
	if err != nil || !hmac.Equal(got, linkMAC(key, token[:len(token)-len(mac)-1])) {
		return LinkClaims{}, badLink("bad signature")
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(payload)
	if err != nil {
		return LinkClaims{}, badLink("malformed payload")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var c LinkClaims
	if err := dec.Decode(&c); err != nil || dec.More() {
		return LinkClaims{}, badLink("malformed payload")
	}
	now := s.now()
	switch {
	case c.Version != 1:
		return LinkClaims{}, badLink("unknown version")
	case checkTenant("tenant", c.Tenant) != nil:
		return LinkClaims{}, badLink("no tenant")
	case c.ID == "":
		return LinkClaims{}, badLink("no id")
	case c.Expires-c.IssuedAt > int64(MaxLinkTTL/time.Second) || c.Expires <= c.IssuedAt:
		return LinkClaims{}, badLink("lifetime out of bounds")
	case now.Add(-linkSkew).Unix() >= c.Expires:
		return LinkClaims{}, badLink("expired")
	case now.Add(linkSkew).Unix() < c.IssuedAt:
		return LinkClaims{}, badLink("issued in the future")
	}
	for _, sc := range strings.Fields(c.Scopes) {
		if Scope(sc) != ScopeRead && Scope(sc) != ScopeWrite {
			return LinkClaims{}, badLink("unknown scope")
		}
	}
	return c, nil
}

func badLink(why string) error {
	return unauthenticated("link-tokens", "auth: invalid link token: "+why, nil)
}
