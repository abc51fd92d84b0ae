package webhook

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

func TestH1_FanOut(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, nil)
		users := tb.endpoint(t, "/users", "user.*")
		all := tb.endpoint(t, "/all", "*")
		tenant, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/t2"), Patterns: []string{"#"}, TenantID: "t2"})
		if err != nil {
			t.Fatal(err)
		}
		off, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/off"), Patterns: []string{"#"}, Disabled: true})
		if err != nil {
			t.Fatal(err)
		}
		u, o, h := newEvent(t, "user.created"), newEvent(t, "order.paid"), newEvent(t, "hub.transport.failed")
		tb.send(t, u, o, h)
		// users: u; all: u, o (catch-all * skips hub.*); tenant t2: none; disabled: none.
		tb.waitStates(t, DeliveryFilter{}, 3, DeliveryDelivered)
		if got := tb.recv.count("/users"); got != 1 {
			t.Fatalf("/users got %d requests, want 1", got)
		}
		if got := tb.recv.count("/all"); got != 2 {
			t.Fatalf("/all got %d requests, want 2", got)
		}
		for _, ep := range []*Endpoint{tenant, off} {
			if ds := tb.deliveries(t, DeliveryFilter{EndpointID: ep.ID}); len(ds) != 0 {
				t.Fatalf("endpoint %s got %d deliveries, want 0", ep.URL, len(ds))
			}
		}
		ds := tb.deliveries(t, DeliveryFilter{EndpointID: users.ID})
		if len(ds) != 1 || ds[0].EventID != u.ID || ds[0].EventType != "user.created" || ds[0].LastStatus != 204 {
			t.Fatalf("users deliveries = %+v", ds)
		}
		if n := len(tb.deliveries(t, DeliveryFilter{EndpointID: all.ID})); n != 2 {
			t.Fatalf("all: %d deliveries, want 2", n)
		}
		// Tenant filter: a t2 event reaches the tenant endpoint.
		t2 := newEvent(t, "user.deleted")
		t2.SetTenantID("t2")
		tb.send(t, t2)
		tb.waitStates(t, DeliveryFilter{EndpointID: tenant.ID}, 1, DeliveryDelivered)
	})
}

func TestH1_ResendNeverDuplicates(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, nil)
		tb.endpoint(t, "/a")
		tb.endpoint(t, "/b")
		batch := make([]*cloudevent.Event, 10)
		for i := range batch {
			batch[i] = newEvent(t, "user.created")
		}
		var wg sync.WaitGroup
		errs := make(chan error, 6)
		for range 6 {
			wg.Go(func() { errs <- tb.tr.Send(tb.ctx, batch) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("concurrent Send: %v", err)
			}
		}
		tb.waitStates(t, DeliveryFilter{}, 20, DeliveryDelivered)
		// Once delivered, re-sending still adds nothing (unique in every state).
		tb.send(t, batch...)
		if ds := tb.deliveries(t, DeliveryFilter{}); len(ds) != 20 {
			t.Fatalf("%d deliveries after re-sends, want 20 (10 events x 2 endpoints)", len(ds))
		}
		// At least once: an attempt whose response was lost is retried, so the receiver
		// may see a request twice; every (endpoint, event) arrives at least once.
		seen := map[string]bool{}
		for _, r := range tb.recv.requests() {
			seen[r.path+" "+r.header.Get(IDHeader)] = true
		}
		if len(seen) != 20 {
			t.Fatalf("receiver got %d distinct (endpoint, event) pairs, want 20", len(seen))
		}
	})
}

func TestH6_LaterEndpointGetsOnlyLaterEvents(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, nil)
		early := tb.endpoint(t, "/early")
		ev1 := newEvent(t, "user.created")
		tb.send(t, ev1)
		tb.waitStates(t, DeliveryFilter{EndpointID: early.ID}, 1, DeliveryDelivered)

		late := tb.endpoint(t, "/late")
		ev2 := newEvent(t, "user.created")
		tb.send(t, ev2)
		tb.waitStates(t, DeliveryFilter{EndpointID: early.ID}, 2, DeliveryDelivered)
		ds := tb.waitStates(t, DeliveryFilter{EndpointID: late.ID}, 1, DeliveryDelivered)
		if ds[0].EventID != ev2.ID {
			t.Fatalf("late endpoint got %s, want only %s", ds[0].EventID, ev2.ID)
		}
		if got := ids(tb.recv.requests()); len(got) != 3 {
			t.Fatalf("receiver got %v, want ev1 and ev2 on early, ev2 on late", got)
		}
		if !late.CreatedAt.After(early.CreatedAt) {
			t.Fatalf("created times not recorded: early %s late %s", early.CreatedAt, late.CreatedAt)
		}
	})
}

func TestH2_DeliveredRequest(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		t.Run("StructuredVerifiedByReceiver", func(t *testing.T) {
			t.Parallel()
			tb := setup(t, b, nil)
			ep := tb.endpoint(t, "/hook")
			got := make(chan *cloudevent.Event, 1)
			rcv, err := NewReceiver(ReceiverConfig{Secrets: []string{ep.Secrets[0].Value}}, func(_ context.Context, ev *cloudevent.Event) error {
				got <- ev
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(rcv)
			defer srv.Close()
			if _, err := tb.tr.UpdateEndpoint(tb.ctx, ep.ID, EndpointUpdate{URL: &srv.URL}); err != nil {
				t.Fatal(err)
			}
			ev := newEvent(t, "user.created")
			tb.send(t, ev)
			select {
			case g := <-got:
				if g.ID != ev.ID || g.Type != ev.Type || g.TenantID() != "t1" || string(g.Data) != string(ev.Data) {
					t.Fatalf("received %+v, want %+v", g, ev)
				}
			case <-tb.ctx.Done():
				t.Fatal("event not received")
			}
			tb.waitStates(t, DeliveryFilter{}, 1, DeliveryDelivered)
		})
		t.Run("HeadersAndIndependentHMAC", func(t *testing.T) {
			t.Parallel()
			tb := setup(t, b, func(c *Config) { c.StandardWebhooks = true })
			ep := tb.endpoint(t, "/hook")
			ev := newEvent(t, "user.created")
			tb.send(t, ev)
			tb.waitStates(t, DeliveryFilter{}, 1, DeliveryDelivered)
			r := tb.recv.requests()[0]
			if r.header.Get(IDHeader) != ev.ID || r.header.Get(DeliveryHeader) == "" {
				t.Fatalf("headers %v: want %s = event id and a delivery id", r.header, IDHeader)
			}
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/cloudevents+json") {
				t.Fatalf("Content-Type %q, want structured mode", ct)
			}
			sig := r.header.Get(SignatureHeader)
			ts := strings.TrimPrefix(strings.Split(sig, ",")[0], "t=")
			if want := "t=" + ts + ",v1=" + hmacHex(ep.Secrets[0].Value, ts+"."+string(r.body)); sig != want {
				t.Fatalf("%s = %q, want %q", SignatureHeader, sig, want)
			}
			std := r.header.Get(StandardSignatureHeader)
			if want := "v1," + hmacB64(StandardKey(ep.Secrets[0].Value), ev.ID+"."+r.header.Get(TimestampHeader)+"."+string(r.body)); std != want {
				t.Fatalf("%s = %q, want %q", StandardSignatureHeader, std, want)
			}
		})
		t.Run("BinaryMode", func(t *testing.T) {
			t.Parallel()
			tb := setup(t, b, func(c *Config) { c.Mode = ModeBinary })
			ep := tb.endpoint(t, "/hook")
			ev := newEvent(t, "user.created")
			tb.send(t, ev)
			tb.waitStates(t, DeliveryFilter{}, 1, DeliveryDelivered)
			r := tb.recv.requests()[0]
			if r.header.Get("Ce-Id") != ev.ID || string(r.body) != string(ev.Data) {
				t.Fatalf("binary request: ce-id %q body %q", r.header.Get("Ce-Id"), r.body)
			}
			if err := Verify(r.header.Get(SignatureHeader), r.body, [][]byte{[]byte(ep.Secrets[0].Value)}, 0, time.Now()); err != nil {
				t.Fatalf("Verify: %v", err)
			}
		})
	})
}

func TestH2_Rotation(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, nil)
		ep := tb.endpoint(t, "/hook")
		old := ep.Secrets[0].Value
		rot, err := tb.tr.RotateSecret(tb.ctx, ep.ID, RotateOptions{Grace: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		nw := rot.Secrets[0].Value
		if len(rot.Secrets) != 2 || rot.Secrets[1].Value != old || rot.Secrets[1].ExpiresAt.IsZero() {
			t.Fatalf("secrets after rotation = %+v, want new then old with an expiry", rot.Secrets)
		}
		tb.send(t, newEvent(t, "user.created"))
		tb.waitStates(t, DeliveryFilter{}, 1, DeliveryDelivered)
		r := tb.recv.requests()[0]
		sig := r.header.Get(SignatureHeader)
		if n := strings.Count(sig, "v1="); n != 2 {
			t.Fatalf("%s = %q: want one v1 per active secret (2)", SignatureHeader, sig)
		}
		for _, s := range []string{old, nw} {
			if err := Verify(sig, r.body, [][]byte{[]byte(s)}, 0, time.Now()); err != nil {
				t.Fatalf("receiver holding one secret of the rotation: %v", err)
			}
		}
		// Revoke: only the newest secret signs from now on.
		if _, err := tb.tr.RotateSecret(tb.ctx, ep.ID, RotateOptions{Revoke: true}); err != nil {
			t.Fatal(err)
		}
		tb.send(t, newEvent(t, "user.created"))
		tb.waitStates(t, DeliveryFilter{}, 2, DeliveryDelivered)
		r = tb.recv.requests()[1]
		sig = r.header.Get(SignatureHeader)
		if n := strings.Count(sig, "v1="); n != 1 {
			t.Fatalf("after revoke %s = %q, want a single v1", SignatureHeader, sig)
		}
		if err := Verify(sig, r.body, [][]byte{[]byte(nw)}, 0, time.Now()); !errors.Is(err, ErrMismatch) {
			t.Fatalf("revoked secret still verifies: %v", err)
		}
	})
}

func TestEndpoints(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, nil)
		ctx := tb.ctx
		ep := tb.endpoint(t, "/x", "user.*", "order.#")
		got, err := tb.tr.Endpoint(ctx, ep.ID)
		if err != nil || got.URL != ep.URL || len(got.Patterns) != 2 || !got.Enabled || !got.CreatedAt.Equal(ep.CreatedAt) {
			t.Fatalf("Endpoint = %+v, %v; want %+v", got, err, ep)
		}
		desc := "orders"
		up, err := tb.tr.UpdateEndpoint(ctx, ep.ID, EndpointUpdate{Patterns: []string{"order.*"}, Description: &desc})
		if err != nil || up.Description != desc || len(up.Patterns) != 1 {
			t.Fatalf("UpdateEndpoint = %+v, %v", up, err)
		}
		if err := tb.tr.DisableEndpoint(ctx, ep.ID, "maintenance"); err != nil {
			t.Fatal(err)
		}
		if got, _ := tb.tr.Endpoint(ctx, ep.ID); got.Enabled || got.DisabledReason != "maintenance" {
			t.Fatalf("after disable: %+v", got)
		}
		if err := tb.tr.EnableEndpoint(ctx, ep.ID); err != nil {
			t.Fatal(err)
		}
		list, err := tb.tr.Endpoints(ctx)
		if err != nil || len(list) != 1 || !list[0].Enabled || list[0].DisabledReason != "" {
			t.Fatalf("Endpoints = %+v, %v", list, err)
		}
		if err := tb.tr.DeleteEndpoint(ctx, ep.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := tb.tr.Endpoint(ctx, ep.ID); hub.Code(err) != hub.NotFound {
			t.Fatalf("Endpoint after delete: %v, want NotFound", err)
		}
		if err := tb.tr.DeleteEndpoint(ctx, ep.ID); hub.Code(err) != hub.NotFound {
			t.Fatalf("second delete: %v, want NotFound", err)
		}
		bad := []EndpointSpec{
			{URL: tb.recv.url("/"), Patterns: nil},
			{URL: tb.recv.url("/"), Patterns: []string{"a..b"}},
			{URL: tb.recv.url("/"), Patterns: []string{"#"}, Secret: "short"},
			{URL: "ftp://127.0.0.1/", Patterns: []string{"#"}},
		}
		for _, s := range bad {
			if _, err := tb.tr.CreateEndpoint(ctx, s); hub.Code(err) != hub.InvalidArgument {
				t.Fatalf("CreateEndpoint(%+v) = %v, want InvalidArgument", s, err)
			}
		}
	})
}

func TestH4_RegisterChecksURL(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		tb := setup(t, b, func(c *Config) { c.Allow = nil })
		for _, u := range []string{tb.recv.url("/"), "http://169.254.169.254/", "http://[::1]:80/", "https://user:pw@127.0.0.1/"} {
			_, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: u, Patterns: []string{"#"}})
			if c := hub.Code(err); c != hub.PermissionDenied && c != hub.InvalidArgument {
				t.Fatalf("CreateEndpoint(%s) = %v, want refused", u, err)
			}
		}
		if tb.recv.count("") != 0 {
			t.Fatal("receiver was contacted")
		}
	})
}

func TestSendAfterClose(t *testing.T) {
	t.Parallel()
	tb := setup(t, ledger.SQLite, nil)
	if err := tb.tr.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tb.tr.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := tb.tr.Send(tb.ctx, []*cloudevent.Event{newEvent(t, "a.b")}); hub.Code(err) != hub.FailedPrecondition {
		t.Fatalf("Send after Close = %v, want FailedPrecondition", err)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	bad := map[string]func(*Config){
		"Workers":          func(c *Config) { c.Workers = -1 },
		"RetrySchedule[0]": func(c *Config) { c.RetrySchedule = []time.Duration{0} },
		"Jitter":           func(c *Config) { c.Jitter = 1 },
		"Mode":             func(c *Config) { c.Mode = "xml" },
		"RotationGrace":    func(c *Config) { c.RotationGrace = 30 * 24 * time.Hour },
		"Allow":            func(c *Config) { c.Allow = []string{"http://x"} },
	}
	for field, change := range bad {
		var c Config
		change(&c)
		c.setDefaults()
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), strings.TrimSuffix(field, "[0]")) {
			t.Fatalf("%s: Validate = %v, want an error naming the field", field, err)
		}
	}
	var c Config
	c.setDefaults()
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
}
