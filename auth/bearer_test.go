package auth

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/koder/eventhub/hub"
)

func TestSEC_BearerToken(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		header, want string
	}{
		{"Bearer abc", "abc"},
		{"bearer abc", "abc"},
		{"BEARER   abc", "abc"},
		{"Bearer a-b.c_d~e+f/g==", "a-b.c_d~e+f/g=="},
	} {
		got, err := BearerToken(tc.header)
		if err != nil || got != tc.want {
			t.Errorf("%q: %q %v, want %q", tc.header, got, err, tc.want)
		}
	}
	for name, h := range map[string]string{
		"Empty":        "",
		"Basic":        "Basic dXNlcjpwYXNz",
		"NoToken":      "Bearer",
		"OnlySpace":    "Bearer   ",
		"Comma":        "Bearer a,b",
		"InnerSpace":   "Bearer a b",
		"PaddingFirst": "Bearer =abc",
		"Quote":        `Bearer "abc"`,
		"TooLong":      "Bearer " + strings.Repeat("a", MaxCredentialLen+1),
		"NUL":          "Bearer a\x00b",
	} {
		_, err := BearerToken(h)
		wantCode(t, err, hub.Unauthenticated)
		if name != "Empty" && strings.Contains(err.Error(), "dXNlcjpwYXNz") {
			t.Errorf("%s: error echoes the credential", name)
		}
	}
	t.Run("TwoAuthorizationHeaders", func(t *testing.T) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Add("Authorization", "Bearer a")
		r.Header.Add("Authorization", "Bearer b")
		_, err := RequestBearer(r)
		wantCode(t, err, hub.Unauthenticated)
	})
}

func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer a.b.c", "Basic x", "", "Bearer ", "Bearer a==", "Bearer =", "Bearer \xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		tok, err := BearerToken(h)
		if err != nil {
			if hub.Code(err) != hub.Unauthenticated {
				t.Fatalf("code %v", hub.Code(err))
			}
			return
		}
		if tok == "" || len(tok) > MaxCredentialLen || !isToken68(tok) || !strings.HasSuffix(h, tok) {
			t.Fatalf("%q gave %q", h, tok)
		}
		if !strings.EqualFold(h[:6], "bearer") {
			t.Fatalf("%q: scheme not Bearer", h)
		}
	})
}
