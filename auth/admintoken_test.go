package auth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/koder/eventhub/hub"
)

func TestSEC_AdminTokens(t *testing.T) {
	t.Parallel()
	op1, op2 := GenerateAdminToken(), GenerateAdminToken()
	tenant, reader := GenerateAdminToken(), GenerateAdminToken()
	file := filepath.Join(t.TempDir(), "tokens")
	text := "# tokens\n\n" + op2 + "\n  " + tenant + " tenant=acme scopes=read,write\n" + reader + " scopes=read\n"
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := LoadAdminTokens(op1+", short-one", file)
	if err != nil {
		t.Fatal(err)
	}
	if set.Len() != 5 {
		t.Fatalf("%d tokens, want 5", set.Len())
	}
	ctx := ctxT(t)

	t.Run("EachTokenResolves", func(t *testing.T) {
		for tok, want := range map[string]Principal{
			op1:    {Kind: KindAdminToken, ID: AdminTokenID(op1), Scopes: AllScopes},
			op2:    {Kind: KindAdminToken, ID: AdminTokenID(op2), Scopes: AllScopes},
			tenant: {Kind: KindAdminToken, ID: AdminTokenID(tenant), Tenant: "acme", Scopes: []Scope{ScopeRead, ScopeWrite}},
			reader: {Kind: KindAdminToken, ID: AdminTokenID(reader), Scopes: []Scope{ScopeRead}},
		} {
			p, err := set.Verify(ctx, tok)
			if err != nil {
				t.Fatal(err)
			}
			if p.ID != want.ID || p.Tenant != want.Tenant || p.Kind != want.Kind || strings.Join(scopeNames(p.Scopes), ",") != strings.Join(scopeNames(want.Scopes), ",") {
				t.Errorf("got %+v, want %+v", p, want)
			}
		}
		if p, _ := set.Verify(ctx, tenant); p.Operator() || !p.Owns("acme") || p.Owns("globex") {
			t.Fatalf("tenant token %+v", p)
		}
	})

	t.Run("IDsAreHashPrefixes", func(t *testing.T) {
		id := AdminTokenID(op1)
		if len(id) != 8 || strings.Contains(op1, id) {
			t.Fatalf("id %q", id)
		}
		if got := set.Short(); len(got) != 1 || got[0] != AdminTokenID("short-one") {
			t.Fatalf("short tokens %v", got)
		}
	})

	t.Run("UnknownTokens", func(t *testing.T) {
		for _, tok := range []string{"", "nope", op1 + "x", op1[:len(op1)-1]} {
			_, err := set.Verify(ctx, tok)
			wantCode(t, err, hub.Unauthenticated)
		}
		var empty *AdminTokens
		_, err := empty.Verify(ctx, op1)
		wantCode(t, err, hub.Unauthenticated)
	})

	t.Run("FileErrorsNameTheLineNotTheToken", func(t *testing.T) {
		secret := GenerateAdminToken()
		for name, text := range map[string]string{
			"Attribute":  "# c\n" + secret + " role=admin\n",
			"Scope":      secret + " scopes=read,delete\n",
			"Tenant":     secret + " tenant=\n",
			"Duplicate":  secret + "\n" + secret + "\n",
			"NotToken68": "has\"quote\n",
			"APIKeyLike": "ehk_" + secret + "\n",
			"LinkLike":   "ehl_" + secret + "\n",
			"JWTLike":    "eyJhbGciOiJSUzI1NiJ9.e30.c2ln\n",
		} {
			_, err := ParseAdminTokens(text, "tokens.txt")
			if hub.Code(err) != hub.InvalidArgument {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if !strings.Contains(err.Error(), "tokens.txt:") || strings.Contains(err.Error(), secret) {
				t.Errorf("%s: %v", name, err)
			}
		}
		if _, err := LoadAdminTokens("", filepath.Join(t.TempDir(), "missing")); hub.Code(err) != hub.InvalidArgument {
			t.Errorf("missing file: %v", err)
		}
	})
}

func scopeNames(s []Scope) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = string(x)
	}
	return out
}

func FuzzParseAdminTokens(f *testing.F) {
	f.Add("# c\ntok-1234567890\n\nother-token tenant=acme scopes=read\n")
	f.Add("a tenant=\n")
	f.Add("ehk_x\n")
	f.Add("x scopes=read,write,publish y=z")
	f.Fuzz(func(t *testing.T, text string) {
		set, err := ParseAdminTokens(text, "f")
		if err != nil {
			if hub.Code(err) != hub.InvalidArgument {
				t.Fatalf("code %v", hub.Code(err))
			}
			return
		}
		// Every parsed token resolves to itself, and only to itself.
		for _, line := range strings.Split(text, "\n") {
			f := strings.Fields(line)
			if len(f) == 0 || strings.HasPrefix(f[0], "#") {
				continue
			}
			p, err := set.Verify(t.Context(), f[0])
			if err != nil || p.ID != AdminTokenID(f[0]) {
				t.Fatalf("token %q of the file: %+v %v", f[0], p, err)
			}
		}
	})
}
