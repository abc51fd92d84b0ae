package auth

import (
	"strings"
	"testing"

	"github.com/koder/eventhub/hub"
)

func TestSEC_APIKeyFormat(t *testing.T) {
	t.Parallel()

	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		k := newAPIKey(newKeyID())
		if len(k.String()) != APIKeyLen || !strings.HasPrefix(k.String(), APIKeyPrefix+k.ID+"_") {
			t.Fatalf("key %q: want %d characters starting ehk_<id>_", k, APIKeyLen)
		}
		p, err := ParseAPIKey(k.String())
		if err != nil {
			t.Fatal(err)
		}
		if p.ID != k.ID || p.Secret != k.Secret || p.Hash() != k.Hash() {
			t.Fatalf("parsed %+v, want %+v", p, k)
		}
		if len(p.Hash()) != 64 {
			t.Fatalf("hash %q: want hex SHA-256", p.Hash())
		}
	})

	t.Run("DistinctSecrets", func(t *testing.T) {
		t.Parallel()
		a, b := newAPIKey("aaaaaaaaaaaaaaaa"), newAPIKey("aaaaaaaaaaaaaaaa")
		if a.Secret == b.Secret {
			t.Fatal("two keys share a secret")
		}
	})

	t.Run("EveryTypoIsCaught", func(t *testing.T) {
		t.Parallel()
		k := newAPIKey(newKeyID()).String()
		for i := len(APIKeyPrefix); i < len(k); i++ {
			if k[i] == '_' {
				continue
			}
			c := byte('a')
			if k[i] == 'a' {
				c = 'b'
			}
			bad := k[:i] + string(c) + k[i+1:]
			if _, err := ParseAPIKey(bad); hub.Code(err) != hub.Unauthenticated {
				t.Fatalf("typo at %d accepted (err %v)", i, err)
			}
		}
	})

	t.Run("Malformed", func(t *testing.T) {
		t.Parallel()
		k := newAPIKey(newKeyID()).String()
		for name, s := range map[string]string{
			"Empty":        "",
			"Prefix":       "ehx_" + k[4:],
			"Short":        k[:len(k)-1],
			"Long":         k + "a",
			"Upper":        strings.ToUpper(k),
			"Separator":    k[:4+16] + "-" + k[4+17:],
			"Alphabet":     k[:30] + "1" + k[31:],
			"NonASCII":     k[:30] + "é" + k[32:],
			"Whitespace":   " " + k[1:],
			"OnlyPrefix":   APIKeyPrefix,
			"JWTLookalike": "eyJhbGciOiJIUzI1NiJ9.e30.sig",
		} {
			_, err := ParseAPIKey(s)
			wantCode(t, err, hub.Unauthenticated)
			if s != "" && len(s) > 8 && strings.Contains(err.Error(), s[8:]) {
				t.Errorf("%s: the error echoes the key: %v", name, err)
			}
		}
	})
}

func FuzzParseAPIKey(f *testing.F) {
	f.Add(newAPIKey(newKeyID()).String())
	f.Add("ehk_aaaaaaaaaaaaaaaa_" + strings.Repeat("a", 59))
	f.Add("")
	f.Add("ehk_")
	f.Add("ehk_" + strings.Repeat("7", 76))
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseAPIKey(s)
		if err != nil {
			if hub.Code(err) != hub.Unauthenticated {
				t.Fatalf("code %v, want Unauthenticated", hub.Code(err))
			}
			return
		}
		// Whatever parses is canonical: it is exactly the string given, and parses again.
		if k.String() != s || len(s) != APIKeyLen || !validKeyID(k.ID) {
			t.Fatalf("parsed %q into %+v", s, k)
		}
		if _, err := ParseAPIKey(k.String()); err != nil {
			t.Fatal(err)
		}
	})
}
