package auth

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

type keyBundle struct {
	store *KeyStore
	clock *clock
	b     ledger.Backend
}

func setupKeys(t *testing.T, b ledger.Backend, cfg KeyStoreConfig) *keyBundle {
	t.Helper()
	db := openDB(t, b)
	s, err := NewKeyStore(ctxT(t), db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := newClock()
	s.now = c.Now
	return &keyBundle{store: s, clock: c, b: b}
}

func TestSEC_KeyStore(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		t.Run("CreateShowsTheKeyOnceAndStoresItsHash", func(t *testing.T) {
			t.Parallel()
			bd := setupKeys(t, b, KeyStoreConfig{})
			ctx := ctxT(t)
			k, raw, err := bd.store.Create(ctx, KeySpec{Tenant: "acme", Name: "billing", Types: []string{"billing.#"}})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(raw, k.Prefix) || k.Tenant != "acme" || k.Types[0] != "billing.#" {
				t.Fatalf("key %+v raw %q", k, raw)
			}
			var stored string
			if err := bd.store.db.QueryRowContext(ctx, `SELECT hash FROM auth_api_keys WHERE id = $1`, k.ID).Scan(&stored); err != nil {
				t.Fatal(err)
			}
			if stored == raw || strings.Contains(stored, raw[len(k.Prefix):]) || stored != hashKey(raw) {
				t.Fatalf("stored %q: want the SHA-256 of the key, never the key", stored)
			}
			p, err := bd.store.Verify(ctx, raw)
			if err != nil {
				t.Fatal(err)
			}
			if p.Kind != KindAPIKey || p.ID != k.ID || p.Tenant != "acme" || !p.Can(ScopePublish) || p.Can(ScopeWrite) {
				t.Fatalf("principal %+v", p)
			}
			if !p.AllowsType("billing.invoice.paid") || p.AllowsType("user.created") {
				t.Fatal("type patterns not applied")
			}
		})

		t.Run("CreateValidates", func(t *testing.T) {
			t.Parallel()
			bd := setupKeys(t, b, KeyStoreConfig{})
			ctx := ctxT(t)
			for name, spec := range map[string]KeySpec{
				"NoTenant":     {},
				"ControlChars": {Tenant: "a\nb"},
				"BadPattern":   {Tenant: "acme", Types: []string{"a..b"}},
				"ExpiryInPast": {Tenant: "acme", ExpiresAt: bd.clock.Now().Add(-time.Second)},
				"LongTenant":   {Tenant: strings.Repeat("t", 201)},
			} {
				_, _, err := bd.store.Create(ctx, spec)
				if hub.Code(err) != hub.InvalidArgument {
					t.Errorf("%s: %v, want InvalidArgument", name, err)
				}
			}
		})

		t.Run("WrongSecretUnknownAndMalformedAreUnauthenticated", func(t *testing.T) {
			t.Parallel()
			bd := setupKeys(t, b, KeyStoreConfig{})
			ctx := ctxT(t)
			k, _, err := bd.store.Create(ctx, KeySpec{Tenant: "acme"})
			if err != nil {
				t.Fatal(err)
			}
			forged := newAPIKey(k.ID).String() // right id, right format, wrong secret
			_, err = bd.store.Verify(ctx, forged)
			wantCode(t, err, hub.Unauthenticated)
			if !strings.Contains(err.Error(), "wrong secret") {
				t.Fatalf("error %v", err)
			}
			_, err = bd.store.Verify(ctx, newAPIKey(newKeyID()).String())
			wantCode(t, err, hub.Unauthenticated)
			_, err = bd.store.Verify(ctx, "ehk_nonsense")
			wantCode(t, err, hub.Unauthenticated)
			if !errors.Is(err, hub.ErrUnauthenticated) {
				t.Fatal("errors.Is(err, hub.ErrUnauthenticated) must hold")
			}
		})

		t.Run("TenantScopedManagement", func(t *testing.T) {
			t.Parallel()
			bd := setupKeys(t, b, KeyStoreConfig{})
			ctx := ctxT(t)
			a, _, _ := bd.store.Create(ctx, KeySpec{Tenant: "a"})
			bk, _, _ := bd.store.Create(ctx, KeySpec{Tenant: "b"})
			if _, err := bd.store.Get(ctx, KeyRef{ID: bk.ID, Tenant: "a"}); hub.Code(err) != hub.NotFound {
				t.Fatalf("tenant a reading b's key: %v, want NotFound", err)
			}
			if _, err := bd.store.Revoke(ctx, KeyRef{ID: bk.ID, Tenant: "a"}); hub.Code(err) != hub.NotFound {
				t.Fatalf("tenant a revoking b's key: %v, want NotFound", err)
			}
			if _, _, err := bd.store.Rotate(ctx, RotateParams{KeyRef: KeyRef{ID: bk.ID, Tenant: "a"}}); hub.Code(err) != hub.NotFound {
				t.Fatalf("tenant a rotating b's key: %v, want NotFound", err)
			}
			list, _, err := bd.store.List(ctx, ListKeysParams{Tenant: "a"})
			if err != nil || len(list) != 1 || list[0].ID != a.ID {
				t.Fatalf("tenant a lists %v (%v)", list, err)
			}
			tenantB := Principal{Kind: KindLink, ID: "l", Tenant: "b"}
			if _, err := bd.store.Get(ctx, KeyRef{ID: a.ID}.ScopedTo(tenantB)); hub.Code(err) != hub.NotFound {
				t.Fatalf("KeyRef.ScopedTo: %v", err)
			}
			if l, _, _ := bd.store.List(ctx, ListKeysParams{Tenant: "a"}.ScopedTo(tenantB)); len(l) != 1 || l[0].ID != bk.ID {
				t.Fatalf("ListKeysParams.ScopedTo: %v", l)
			}
			all, _, _ := bd.store.List(ctx, ListKeysParams{}.ScopedTo(Principal{Kind: KindAdminToken, ID: "op"}))
			if len(all) != 2 {
				t.Fatalf("operator lists %d keys, want 2", len(all))
			}
			if _, err := bd.store.Get(ctx, KeyRef{ID: "not-an-id"}); hub.Code(err) != hub.NotFound {
				t.Fatalf("bad id: %v", err)
			}
		})

		t.Run("ListPagesInCreationOrder", func(t *testing.T) {
			t.Parallel()
			bd := setupKeys(t, b, KeyStoreConfig{})
			ctx := ctxT(t)
			var ids []string
			for range 7 {
				k, _, err := bd.store.Create(ctx, KeySpec{Tenant: "acme"})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, k.ID)
				bd.clock.Add(time.Millisecond)
			}
			_, _ = bd.store.Revoke(ctx, KeyRef{ID: ids[3]})
			var got []string
			after := ""
			for {
				page, next, err := bd.store.List(ctx, ListKeysParams{Tenant: "acme", Limit: 2, After: after, IncludeRevoked: true})
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range page {
					got = append(got, k.ID)
				}
				if next == "" {
					break
				}
				after = next
			}
			if strings.Join(got, ",") != strings.Join(ids, ",") {
				t.Fatalf("pages %v, want %v", got, ids)
			}
			live, _, _ := bd.store.List(ctx, ListKeysParams{Tenant: "acme"})
			if len(live) != 6 {
				t.Fatalf("%d live keys, want 6 (one revoked)", len(live))
			}
			if _, _, err := bd.store.List(ctx, ListKeysParams{After: "garbage"}); hub.Code(err) != hub.InvalidArgument {
				t.Fatalf("bad cursor: %v", err)
			}
		})

		t.Run("RevokeEndsTheKeyAtOnceHere", func(t *testing.T) {
			t.Parallel()
			bd := setupKeys(t, b, KeyStoreConfig{})
			ctx := ctxT(t)
			k, raw, _ := bd.store.Create(ctx, KeySpec{Tenant: "acme"})
			if _, err := bd.store.Verify(ctx, raw); err != nil { // now cached
				t.Fatal(err)
			}
			rk, err := bd.store.Revoke(ctx, KeyRef{ID: k.ID})
			if err != nil || !rk.Revoked() {
				t.Fatalf("revoke: %+v %v", rk, err)
			}
			_, err = bd.store.Verify(ctx, raw)
			wantCode(t, err, hub.Unauthenticated)
			if !strings.Contains(err.Error(), "revoked") {
				t.Fatalf("error %v", err)
			}
			again, err := bd.store.Revoke(ctx, KeyRef{ID: k.ID})
			if err != nil || !again.RevokedAt.Equal(rk.RevokedAt) {
				t.Fatalf("second revoke: %+v %v", again, err)
			}
			if _, _, err := bd.store.Rotate(ctx, RotateParams{KeyRef: KeyRef{ID: k.ID}}); hub.Code(err) != hub.FailedPrecondition {
				t.Fatalf("rotating a revoked key: %v", err)
			}
		})

		t.Run("OtherReplicasSeeRevocationWithinCacheTTL", func(t *testing.T) {
			t.Parallel()
			db := openDB(t, b)
			ctx := ctxT(t)
			c := newClock()
			mk := func() *KeyStore {
				s := must[*KeyStore](t)(NewKeyStore(ctx, db, KeyStoreConfig{CacheTTL: 10 * time.Second}))
				s.now = c.Now
				return s
			}
			a, replica := mk(), mk()
			k, raw, _ := a.Create(ctx, KeySpec{Tenant: "acme"})
			if _, err := replica.Verify(ctx, raw); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Revoke(ctx, KeyRef{ID: k.ID}); err != nil {
				t.Fatal(err)
			}
			c.Add(9 * time.Second)
			if _, err := replica.Verify(ctx, raw); err != nil {
				t.Fatalf("within the bound the replica may still accept: %v", err)
			}
			c.Add(time.Second)
			_, err := replica.Verify(ctx, raw)
			wantCode(t, err, hub.Unauthenticated)
		})

		t.Run("UnknownIdsAreCachedToo", func(t *testing.T) {
			t.Parallel()
			bd := setupKeys(t, b, KeyStoreConfig{LookupRate: 1e-9, LookupBurst: 1})
			ctx := ctxT(t)
			unknown := newAPIKey(newKeyID()).String()
			for range 5 { // one lookup, then the cache answers
				_, err := bd.store.Verify(ctx, unknown)
				wantCode(t, err, hub.Unauthenticated)
			}
			_, err := bd.store.Verify(ctx, newAPIKey(newKeyID()).String())
			wantCode(t, err, hub.ResourceExhausted)
			var rl *RateLimitError
			if !errors.As(err, &rl) || rl.RetryAfter != time.Second {
				t.Fatalf("lookup bound: %v", err)
			}
		})

		t.Run("RotateKeepsTheOldSecretForTheGrace", func(t *testing.T) {
			t.Parallel()
			bd := setupKeys(t, b, KeyStoreConfig{})
			ctx := ctxT(t)
			k, old, _ := bd.store.Create(ctx, KeySpec{Tenant: "acme", Types: []string{"a.*"}})
			rk, fresh, err := bd.store.Rotate(ctx, RotateParams{KeyRef: KeyRef{ID: k.ID}, Grace: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			if fresh == old || !strings.HasPrefix(fresh, k.Prefix) || rk.ID != k.ID || rk.Types[0] != "a.*" {
				t.Fatalf("rotated %+v %q", rk, fresh)
			}
			if !rk.PreviousValidUntil.Equal(bd.clock.Now().Add(time.Hour)) || rk.RotatedAt.IsZero() {
				t.Fatalf("grace %v", rk.PreviousValidUntil)
			}
			for _, raw := range []string{old, fresh} {
				if _, err := bd.store.Verify(ctx, raw); err != nil {
					t.Fatalf("during the grace both secrets work: %v", err)
				}
			}
			bd.clock.Add(time.Hour)
			_, err = bd.store.Verify(ctx, old)
			wantCode(t, err, hub.Unauthenticated)
			if _, err := bd.store.Verify(ctx, fresh); err != nil {
				t.Fatal(err)
			}
			// A negative grace ends the current secret at once.
			_, third, err := bd.store.Rotate(ctx, RotateParams{KeyRef: KeyRef{ID: k.ID}, Grace: -1})
			if err != nil {
				t.Fatal(err)
			}
			_, err = bd.store.Verify(ctx, fresh)
			wantCode(t, err, hub.Unauthenticated)
			if _, err := bd.store.Verify(ctx, third); err != nil {
				t.Fatal(err)
			}
		})

		t.Run("DefaultGraceFromConfig", func(t *testing.T) {
			t.Parallel()
			bd := setupKeys(t, b, KeyStoreConfig{RotateGrace: 5 * time.Minute})
			ctx := ctxT(t)
			k, _, _ := bd.store.Create(ctx, KeySpec{Tenant: "acme"})
			rk, _, err := bd.store.Rotate(ctx, RotateParams{KeyRef: KeyRef{ID: k.ID}})
			if err != nil || !rk.PreviousValidUntil.Equal(bd.clock.Now().Add(5*time.Minute)) {
				t.Fatalf("%+v %v", rk, err)
			}
		})

		t.Run("ExpiredKey", func(t *testing.T) {
			t.Parallel()
			bd := setupKeys(t, b, KeyStoreConfig{})
			ctx := ctxT(t)
			k, raw, _ := bd.store.Create(ctx, KeySpec{Tenant: "acme", ExpiresAt: bd.clock.Now().Add(time.Minute)})
			if _, err := bd.store.Verify(ctx, raw); err != nil {
				t.Fatal(err)
			}
			bd.clock.Add(time.Minute)
			_, err := bd.store.Verify(ctx, raw)
			wantCode(t, err, hub.Unauthenticated)
			if _, _, err := bd.store.Rotate(ctx, RotateParams{KeyRef: KeyRef{ID: k.ID}}); hub.Code(err) != hub.FailedPrecondition {
				t.Fatalf("rotating an expired key: %v", err)
			}
		})

		t.Run("MigrationIsIdempotent", func(t *testing.T) {
			t.Parallel()
			db := openDB(t, b)
			ctx := ctxT(t)
			for range 2 {
				if _, err := NewKeyStore(ctx, db, KeyStoreConfig{}); err != nil {
					t.Fatal(err)
				}
			}
		})
	})
}

func TestSEC_KeyStoreConfig(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]KeyStoreConfig{
		"NegativeSize":  {CacheSize: -1},
		"NegativeGrace": {RotateGrace: -time.Second},
		"NegativeRate":  {LookupRate: -1},
	} {
		c := cfg
		c.setDefaults()
		if err := c.Validate(); hub.Code(err) != hub.InvalidArgument {
			t.Errorf("%s: %v", name, err)
		}
	}
	var c KeyStoreConfig
	c.setDefaults()
	if c.CacheTTL != DefaultKeyCacheTTL || c.RotateGrace != DefaultRotateGrace || c.Validate() != nil {
		t.Fatalf("defaults %+v", c)
	}
}
