package auth

import (
	"bytes"
	"testing"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// A revoked link fails Verify at once on every signer reading the same table (another
// replica), other links keep working, the row outlives every link it could name and is
// pruned after, and a store that cannot answer fails closed.
func TestSEC_LinkRevocation(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		ctx := ctxT(t)
		db := openDB(t, b)
		c := newClock()
		revs := must[*LinkRevocations](t)(NewLinkRevocations(ctx, db))
		revs.now = c.Now
		key := bytes.Repeat([]byte{7}, 32)
		s := linkSigner(t, c, key).WithRevocations(revs)
		replica := linkSigner(t, c, key).WithRevocations(must[*LinkRevocations](t)(NewLinkRevocations(ctx, db)))

		tok, claims, err := s.Issue("acme", nil, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		keep, _, _ := s.Issue("acme", nil, time.Hour)
		if _, err := replica.Verify(ctx, tok); err != nil {
			t.Fatal(err)
		}
		if err := revs.Revoke(ctx, claims.ID); err != nil {
			t.Fatal(err)
		}
		if err := revs.Revoke(ctx, claims.ID); err != nil {
			t.Fatalf("a second revocation: %v", err)
		}
		for _, v := range []*LinkSigner{s, replica} {
			if _, err := v.Verify(ctx, tok); hub.Code(err) != hub.Unauthenticated || !bytes.Contains([]byte(err.Error()), []byte("revoked")) {
				t.Fatalf("a revoked link verifies: %v", err)
			}
			if _, err := v.Verify(ctx, keep); err != nil {
				t.Fatalf("another link stopped working: %v", err)
			}
		}
		wantCode(t, revs.Revoke(ctx, ""), hub.InvalidArgument)

		// Pruned only once no link it could name is alive.
		if n, err := revs.Prune(ctx, c.Now().Add(MaxLinkTTL)); err != nil || n != 0 {
			t.Fatalf("Prune within a link's longest life: %d, %v", n, err)
		}
		if n, err := revs.Prune(ctx, c.Now().Add(MaxLinkTTL+time.Minute)); err != nil || n != 1 {
			t.Fatalf("Prune after it: %d, %v", n, err)
		}

		// Fail closed: a store that cannot answer refuses the link.
		_ = db.Close()
		if _, err := s.Verify(ctx, keep); err == nil {
			t.Fatal("a link verified while its revocation list could not be read")
		}
	})
}
