package auth

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// syncBuffer is the audit logger's sink, read back as JSON lines.
type syncBuffer struct{ testenv.LogBuffer }

func (s *syncBuffer) Lines() []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func TestSEC_Audit(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		setup := func(t *testing.T) (*AuditLog, *syncBuffer) {
			st, err := NewAuditStore(ctxT(t), openDB(t, b))
			if err != nil {
				t.Fatal(err)
			}
			buf := &syncBuffer{}
			return &AuditLog{Logger: slog.New(slog.NewJSONHandler(buf, nil)), Store: st}, buf
		}

		t.Run("ActionRecordsWhoWhatWhenAndOutcome", func(t *testing.T) {
			t.Parallel()
			log, buf := setup(t)
			op := NewContext(ctxT(t), Principal{Kind: KindAdminToken, ID: "1a2b3c4d", Scopes: AllScopes})
			tenant := NewContext(ctxT(t), Principal{Kind: KindLink, ID: "jti1", Tenant: "acme", Scopes: []Scope{ScopeRead}})
			if err := log.Action(op, "endpoint.create", "endpoint/ep_1", "acme", nil); err != nil {
				t.Fatal(err)
			}
			denied := hub.Errorf(hub.NotFound, "endpoint ep_2 not found")
			if err := log.Action(tenant, "delivery.resend", "delivery/9", "", denied); err != denied {
				t.Fatalf("Action must return the action's error unchanged: %v", err)
			}
			_ = log.Action(op, "key.revoke", "key/k1", "", hub.Errorf(hub.Unavailable, "db down"))

			recs, next, err := log.Store.List(ctxT(t), AuditQuery{})
			if err != nil || next != "" || len(recs) != 3 {
				t.Fatalf("%d records %q %v", len(recs), next, err)
			}
			// Newest first.
			if recs[0].Action != "key.revoke" || recs[0].Outcome != OutcomeError || recs[0].Detail != "db down" {
				t.Fatalf("%+v", recs[0])
			}
			if recs[1].Outcome != OutcomeDenied || recs[1].ActorKind != KindLink || recs[1].Tenant != "acme" {
				t.Fatalf("a tenant's denied action: %+v", recs[1])
			}
			r := recs[2]
			if r.ActorID != "1a2b3c4d" || r.Tenant != "acme" || r.Object != "endpoint/ep_1" || r.Outcome != OutcomeOK ||
				!strings.HasPrefix(r.ID, "aud_") || time.Since(r.Time) > time.Minute {
				t.Fatalf("%+v", r)
			}
			lines := buf.Lines()
			if len(lines) != 3 || lines[0]["msg"] != "audit" || lines[0]["action"] != "endpoint.create" ||
				lines[0]["actor_id"] != "1a2b3c4d" || lines[1]["level"] != "WARN" {
				t.Fatalf("slog records %v", lines)
			}
		})

		t.Run("FiltersAndKeysetPaging", func(t *testing.T) {
			t.Parallel()
			log, _ := setup(t)
			ctx := ctxT(t)
			base := time.Now().UTC().Truncate(time.Microsecond)
			var want []string
			for i := range 9 {
				tenant := []string{"a", "b", "a"}[i%3]
				rec, err := log.Record(ctx, AuditRecord{Time: base.Add(time.Duration(i) * time.Second), ActorKind: KindAdminToken,
					ActorID: "op" + string(rune('0'+i%2)), Tenant: tenant, Action: "endpoint.update", Object: "endpoint/ep_" + string(rune('0'+i%4))})
				if err != nil {
					t.Fatal(err)
				}
				if tenant == "a" {
					want = append([]string{rec.ID}, want...)
				}
			}
			var got []string
			cursor := ""
			for {
				page, next, err := log.Store.List(ctx, AuditQuery{Tenant: "a", Limit: 2, Before: cursor})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range page {
					got = append(got, r.ID)
				}
				if next == "" {
					break
				}
				cursor = next
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("tenant a pages %v, want %v", got, want)
			}
			for name, q := range map[string]struct {
				q    AuditQuery
				want int
			}{
				"Actor":  {AuditQuery{ActorID: "op1"}, 4},
				"Object": {AuditQuery{Object: "endpoint/ep_0"}, 3},
				"Action": {AuditQuery{Action: "endpoint.update", Tenant: "b"}, 3},
				"Since":  {AuditQuery{Since: base.Add(6 * time.Second)}, 3},
				"Until":  {AuditQuery{Until: base.Add(2 * time.Second)}, 2},
				"None":   {AuditQuery{Tenant: "c"}, 0},
			} {
				recs, _, err := log.Store.List(ctx, q.q)
				if err != nil || len(recs) != q.want {
					t.Errorf("%s: %d records (%v), want %d", name, len(recs), err, q.want)
				}
			}
			scoped := AuditQuery{Tenant: "b"}.ScopedTo(Principal{Kind: KindLink, ID: "l", Tenant: "a"})
			if recs, _, _ := log.Store.List(ctx, scoped); len(recs) != len(want) {
				t.Fatalf("a tenant asking for another tenant's records gets its own: %d", len(recs))
			}
			if _, _, err := log.Store.List(ctx, AuditQuery{Before: "x' OR 1=1 --"}); hub.Code(err) != hub.InvalidArgument {
				t.Fatalf("bad cursor: %v", err)
			}
			n, err := log.Store.Prune(ctx, base.Add(3*time.Second))
			if err != nil || n != 3 {
				t.Fatalf("pruned %d %v", n, err)
			}
		})

		t.Run("LogOnlyWithoutStore", func(t *testing.T) {
			t.Parallel()
			buf := &syncBuffer{}
			log := &AuditLog{Logger: slog.New(slog.NewJSONHandler(buf, nil))}
			if _, err := log.Record(ctxT(t), AuditRecord{Action: "x"}); err != nil {
				t.Fatal(err)
			}
			if len(buf.Lines()) != 1 {
				t.Fatal("no slog record")
			}
		})
	})
}
