package auth

import (
	"slices"
	"testing"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// A console session opened through one store is seen, with its principal intact, by
// another store on the same table (another replica), ends on every replica when it is
// deleted, is gone at its expiry and pruned after; the table keeps only the id's hash.
func TestSEC_SharedSessions(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		ctx := ctxT(t)
		db := openDB(t, b)
		c := newClock()
		a := must[*SessionStore](t)(NewSessionStore(ctx, db))
		replica := must[*SessionStore](t)(NewSessionStore(ctx, db))
		a.now, replica.now = c.Now, c.Now

		tenant := Principal{Kind: KindAdminToken, ID: "fp:1", Tenant: "acme", Scopes: []Scope{ScopeRead},
			Types: []hub.Pattern{hub.MustCompilePattern("billing.#")}}
		operator := Principal{Kind: KindLoopback, ID: "loopback", Scopes: AllScopes}
		noTypes := Principal{Kind: KindAPIKey, ID: "k", Scopes: []Scope{ScopePublish}, Types: []hub.Pattern{}}
		for i, p := range []Principal{tenant, operator, noTypes} {
			id := "session-" + string(rune('a'+i))
			if err := a.Create(ctx, id, Session{Principal: p, CSRF: "csrf-" + id, Expires: c.Now().Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			got, ok, err := replica.Get(ctx, id)
			if err != nil || !ok {
				t.Fatalf("%s on the replica: %v %v", id, ok, err)
			}
			if got.CSRF != "csrf-"+id || !got.Expires.Equal(c.Now().Add(time.Hour)) || got.Principal.Kind != p.Kind ||
				got.Principal.ID != p.ID || got.Principal.Tenant != p.Tenant || !slices.Equal(got.Principal.Scopes, p.Scopes) {
				t.Fatalf("%s round trip: %+v, want %+v", id, got, p)
			}
			if (got.Principal.Types == nil) != (p.Types == nil) || len(got.Principal.Types) != len(p.Types) {
				t.Fatalf("%s types: %v, want %v", id, got.Principal.Types, p.Types)
			}
		}
		if got, _, _ := replica.Get(ctx, "session-a"); !got.Principal.AllowsType("billing.paid") || got.Principal.AllowsType("user.created") {
			t.Fatal("the type restriction did not survive the round trip")
		}
		if got, _, _ := replica.Get(ctx, "session-c"); got.Principal.AllowsType("user.created") {
			t.Fatal("an empty type list came back as every type")
		}
		var raw int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM auth_sessions WHERE id_hash = $1 OR principal LIKE '%session-%'`, "session-a").Scan(&raw); err != nil || raw != 0 {
			t.Fatalf("the table holds a session id in clear (%d rows, %v)", raw, err)
		}

		if _, ok, err := replica.Get(ctx, "never-issued"); ok || err != nil {
			t.Fatalf("an unknown id: %v %v", ok, err)
		}
		if err := replica.Delete(ctx, "session-a"); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := a.Get(ctx, "session-a"); ok {
			t.Fatal("a session ended on the replica still opens on the first")
		}
		if err := a.Delete(ctx, "session-a"); err != nil {
			t.Fatalf("ending it twice: %v", err)
		}

		c.Add(time.Hour)
		if _, ok, _ := a.Get(ctx, "session-b"); ok {
			t.Fatal("an expired session still opens")
		}
		if n, err := a.Prune(ctx, c.Now()); err != nil || n != 2 {
			t.Fatalf("prune: %d, %v; want the two expired sessions", n, err)
		}
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM auth_sessions`).Scan(&raw); err != nil || raw != 0 {
			t.Fatalf("%d rows after the prune (%v)", raw, err)
		}
	})
}
