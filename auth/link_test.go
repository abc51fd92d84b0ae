package auth

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/hub"
)

func linkSigner(t testing.TB, c *clock, keys ...[]byte) *LinkSigner {
	t.Helper()
	s, err := NewLinkSigner(keys...)
	if err != nil {
		t.Fatal(err)
	}
	s.now = c.Now
	return s
}

func TestSEC_LinkTokens(t *testing.T) {
	t.Parallel()
	k1, k2 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	ctx := ctxT(t)

	t.Run("IssueAndVerify", func(t *testing.T) {
		t.Parallel()
		c := newClock()
		s := linkSigner(t, c, k1)
		tok, claims, err := s.Issue("acme", nil, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if !LooksLikeLink(tok) || claims.Scopes != "read" || claims.Expires != c.Now().Add(time.Hour).Unix() || claims.ID == "" {
			t.Fatalf("%q %+v", tok, claims)
		}
		p, err := s.Verify(ctx, tok)
		if err != nil {
			t.Fatal(err)
		}
		if p.Kind != KindLink || p.Tenant != "acme" || p.ID != claims.ID || !p.Can(ScopeRead) || p.Can(ScopeWrite) || p.Operator() {
			t.Fatalf("principal %+v", p)
		}
		tok2, _, _ := s.Issue("acme", nil, time.Hour)
		if tok2 == tok {
			t.Fatal("two links are identical: no nonce")
		}
	})

	t.Run("Expiry", func(t *testing.T) {
		t.Parallel()
		c := newClock()
		s := linkSigner(t, c, k1)
		tok, _, _ := s.Issue("acme", []Scope{ScopeRead, ScopeWrite}, time.Minute)
		c.Add(time.Minute + linkSkew)
		_, err := s.Verify(ctx, tok)
		wantCode(t, err, hub.Unauthenticated)
		if !strings.Contains(err.Error(), "expired") {
			t.Fatal(err)
		}
	})

	t.Run("KeyRotation", func(t *testing.T) {
		t.Parallel()
		c := newClock()
		old := linkSigner(t, c, k1)
		tok, _, _ := old.Issue("acme", nil, 0)
		rotated := linkSigner(t, c, k2, k1)
		if _, err := rotated.Verify(ctx, tok); err != nil {
			t.Fatalf("old key still verifies: %v", err)
		}
		fresh, _, _ := rotated.Issue("acme", nil, 0)
		if _, err := old.Verify(ctx, fresh); hub.Code(err) != hub.Unauthenticated {
			t.Fatalf("a signer without the new key: %v", err)
		}
		retired := linkSigner(t, c, k2)
		_, err := retired.Verify(ctx, tok)
		wantCode(t, err, hub.Unauthenticated)
		if !strings.Contains(err.Error(), "unknown or retired key") {
			t.Fatal(err)
		}
	})

	t.Run("Tampering", func(t *testing.T) {
		t.Parallel()
		c := newClock()
		s := linkSigner(t, c, k1)
		tok, _, _ := s.Issue("acme", nil, time.Hour)
		parts := strings.Split(strings.TrimPrefix(tok, LinkPrefix), ".")
		payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
		forged := base64.RawURLEncoding.EncodeToString(bytes.Replace(payload, []byte(`"acme"`), []byte(`"evil"`), 1))
		other := linkSigner(t, c, k2)
		otherTok, _, _ := other.Issue("acme", nil, time.Hour)
		for name, bad := range map[string]string{
			"Payload":      LinkPrefix + parts[0] + "." + forged + "." + parts[2],
			"MAC":          flip(tok, len(tok)-5),
			"KeyID":        LinkPrefix + "00000000." + parts[1] + "." + parts[2],
			"OtherKey":     LinkPrefix + parts[0] + "." + strings.Split(otherTok, ".")[1] + "." + strings.Split(otherTok, ".")[2],
			"Truncated":    tok[:len(tok)-1],
			"NoPrefix":     strings.TrimPrefix(tok, LinkPrefix),
			"ExtraSegment": tok + ".x",
			"Empty":        "",
		} {
			_, err := s.Verify(ctx, bad)
			if hub.Code(err) != hub.Unauthenticated {
				t.Errorf("%s: %v", name, err)
			}
		}
	})

	t.Run("IssueValidates", func(t *testing.T) {
		t.Parallel()
		s := linkSigner(t, newClock(), k1)
		for name, f := range map[string]func() error{
			"NoTenant":     func() error { _, _, err := s.Issue("", nil, 0); return err },
			"PublishScope": func() error { _, _, err := s.Issue("a", []Scope{ScopePublish}, 0); return err },
			"TooLong":      func() error { _, _, err := s.Issue("a", nil, MaxLinkTTL+time.Second); return err },
			"Negative":     func() error { _, _, err := s.Issue("a", nil, -time.Second); return err },
		} {
			if err := f(); hub.Code(err) != hub.InvalidArgument {
				t.Errorf("%s: %v", name, err)
			}
		}
		for name, keys := range map[string][][]byte{"None": nil, "Short": {[]byte("short")}, "Repeated": {k1, k1}} {
			if _, err := NewLinkSigner(keys...); hub.Code(err) != hub.InvalidArgument {
				t.Errorf("%s: %v", name, err)
			}
		}
	})
}

// flip changes the character at i to another base64url character.
func flip(s string, i int) string {
	c := byte('A')
	if s[i] == 'A' {
		c = 'B'
	}
	return s[:i] + string(c) + s[i+1:]
}

func FuzzLinkToken(f *testing.F) {
	key := bytes.Repeat([]byte{7}, 32)
	s, _ := NewLinkSigner(key)
	tok, _, _ := s.Issue("acme", []Scope{ScopeRead, ScopeWrite}, time.Hour)
	f.Add(tok)
	f.Add(LinkPrefix + "00000000.e30." + strings.Repeat("A", 43))
	f.Add("ehl_")
	f.Add("")
	f.Fuzz(func(t *testing.T, in string) {
		c, err := s.Parse(in)
		if err != nil {
			if hub.Code(err) != hub.Unauthenticated {
				t.Fatalf("code %v", hub.Code(err))
			}
			return
		}
		// Only tokens the signer made verify: the fuzzer cannot forge a MAC, so an
		// accepted input carries the claims the seed was issued with.
		if c.Tenant != "acme" || c.Version != 1 {
			t.Fatalf("accepted %q: %+v", in, c)
		}
	})
}
