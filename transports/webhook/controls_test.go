package webhook

import (
	"errors"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	stripewebhook "github.com/stripe/stripe-go/v82/webhook"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/filter"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
)

func planEvent(t *testing.T, plan string) *cloudevent.Event {
	t.Helper()
	ev := cloudevent.New("/billing", "subscription.changed").SetTenantID("acme")
	if err := ev.SetData("application/json", map[string]string{"plan": plan}); err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestDC_EndpointFilter: an endpoint's CESQL filter decides at fan-out, so an event it
// rejects gets no delivery at all; a bad filter fails registration and update with
// InvalidArgument and the problem's position.
func TestDC_EndpointFilter(t *testing.T) {
	t.Parallel()
	for _, b := range []ledger.Backend{ledger.SQLite, ledger.Postgres} {
		t.Run(b.String(), func(t *testing.T) {
			t.Parallel()
			tb := setup(t, b, nil)
			ep, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/pro"), Patterns: []string{"#"},
				Controls: Controls{Filter: "tenantid = 'acme' AND data.plan = 'pro'"}})
			if err != nil {
				t.Fatal(err)
			}
			all := tb.endpoint(t, "/all")
			free, pro := planEvent(t, "free"), planEvent(t, "pro")
			tb.send(t, free, pro)
			tb.waitStates(t, DeliveryFilter{EndpointID: all.ID}, 2, DeliveryDelivered)
			ds := tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID}, 1, DeliveryDelivered)
			if ds[0].EventID != pro.ID {
				t.Fatalf("filtered endpoint got %s, want the pro event", ds[0].EventID)
			}

			_, err = tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/x"), Patterns: []string{"#"},
				Controls: Controls{Filter: "data.plan = = 'pro'"}})
			var fe *filter.Error
			if hub.Code(err) != hub.InvalidArgument || !errors.As(err, &fe) || fe.Col != 13 {
				t.Fatalf("bad filter: got %v, want InvalidArgument at 1:13", err)
			}
			if _, err := tb.tr.UpdateEndpoint(tb.ctx, ep.ID, EndpointUpdate{Controls: &Controls{Filter: "AND"}}); hub.Code(err) != hub.InvalidArgument {
				t.Fatalf("bad filter on update: got %v", err)
			}
			got, err := tb.tr.Endpoint(tb.ctx, ep.ID)
			if err != nil || got.Controls.Filter != "tenantid = 'acme' AND data.plan = 'pro'" {
				t.Fatalf("stored filter %q, %v", got.Controls.Filter, err)
			}
		})
	}
}

// TestDC_StaticHeadersAndReserved: static headers arrive as given; reserved names are
// refused at registration with a clear error.
func TestDC_StaticHeadersAndReserved(t *testing.T) {
	t.Parallel()
	tb := setup(t, ledger.SQLite, nil)
	ep, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/h"), Patterns: []string{"#"},
		Controls: Controls{Headers: map[string]string{"Authorization": "Bearer s3cret", "x-team": "billing", "User-Agent": "legacy/2"}}})
	if err != nil {
		t.Fatal(err)
	}
	tb.send(t, newEvent(t, "user.created"))
	tb.waitStates(t, DeliveryFilter{EndpointID: ep.ID}, 1, DeliveryDelivered)
	h := tb.recv.requests()[0].header
	if h.Get("Authorization") != "Bearer s3cret" || h.Get("X-Team") != "billing" || h.Get("User-Agent") != "legacy/2" {
		t.Fatalf("headers not sent as given: %v", h)
	}
	if h.Get(SignatureHeader) == "" || h.Get(IDHeader) == "" {
		t.Fatalf("signature headers missing: %v", h)
	}
	for _, name := range []string{"Content-Type", "content-length", "Host", "Eventhub-Signature", "webhook-id",
		"Webhook-Signature", "Webhook-Timestamp", "Stripe-Signature", "ce-type", "CE-Source", "Eventhub-Ext-Types",
		"Transfer-Encoding", "Connection", "bad name", "X:y"} {
		_, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/r"), Patterns: []string{"#"},
			Controls: Controls{Headers: map[string]string{name: "v"}}})
		if hub.Code(err) != hub.InvalidArgument || !strings.Contains(err.Error(), "headers["+name+"]") {
			t.Errorf("header %q: got %v, want InvalidArgument naming it", name, err)
		}
	}
	_, err = tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/r"), Patterns: []string{"#"},
		Controls: Controls{Headers: map[string]string{"X-A": "a\r\nX-Injected: 1"}}})
	if hub.Code(err) != hub.InvalidArgument {
		t.Fatalf("CRLF in a value: got %v", err)
	}
	_, err = tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/r"), Patterns: []string{"#"},
		Controls: Controls{Signature: Signature{Header: "X-Sig"}, Headers: map[string]string{"x-sig": "forged"}}})
	if hub.Code(err) != hub.InvalidArgument {
		t.Fatalf("a static header named like the signature header: got %v", err)
	}
}

// TestDC_SignatureSchemes: each scheme is verified by an independent verifier: the
// Standard Webhooks reference library, Stripe's own Go library (webhook.ValidatePayload,
// the signature check of ConstructEvent, which would also demand a Stripe event body),
// and, for a renamed header, the transport's own Verify.
func TestDC_SignatureSchemes(t *testing.T) {
	t.Parallel()
	tb := setup(t, ledger.SQLite, nil)
	secret := NewSecret()
	mk := func(path string, sig Signature) *Endpoint {
		ep, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url(path), Patterns: []string{"#"}, Secret: secret,
			Controls: Controls{Signature: sig}})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return ep
	}
	mk("/standard", Signature{Scheme: SchemeStandard})
	mk("/stripe", Signature{Scheme: SchemeStripe})
	mk("/renamed", Signature{Scheme: SchemeEventhub, Header: "X-Signature"})
	mk("/stripe-renamed", Signature{Scheme: SchemeStripe, Header: "X-Stripe-Sig"})
	tb.send(t, newEvent(t, "user.created"))
	tb.waitStates(t, DeliveryFilter{}, 4, DeliveryDelivered)

	byPath := map[string]request{}
	for _, r := range tb.recv.requests() {
		byPath[r.path] = r
	}
	std, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	r := byPath["/standard"]
	if err := std.Verify(r.body, r.header); err != nil {
		t.Errorf("standard webhooks verifier: %v", err)
	}
	if r.header.Get(SignatureHeader) != "" {
		t.Errorf("standard scheme also sent %s", SignatureHeader)
	}
	r = byPath["/stripe"]
	if err := stripewebhook.ValidatePayload(r.body, r.header.Get("Stripe-Signature"), secret); err != nil {
		t.Errorf("stripe verifier: %v", err)
	}
	r = byPath["/stripe-renamed"]
	if err := stripewebhook.ValidatePayload(r.body, r.header.Get("X-Stripe-Sig"), secret); err != nil {
		t.Errorf("stripe verifier, renamed header: %v", err)
	}
	r = byPath["/renamed"]
	if r.header.Get(SignatureHeader) != "" {
		t.Errorf("renamed scheme still sent %s", SignatureHeader)
	}
	if err := Verify(r.header.Get("X-Signature"), r.body, [][]byte{[]byte(secret)}, 5*time.Minute, time.Now()); err != nil {
		t.Errorf("renamed header: %v", err)
	}

	for _, sig := range []Signature{{Scheme: "hmac"}, {Scheme: SchemeStandard, Header: "X-Sig"}, {Header: "Content-Type"}, {Header: "bad header"}} {
		_, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: tb.recv.url("/bad"), Patterns: []string{"#"}, Controls: Controls{Signature: sig}})
		if hub.Code(err) != hub.InvalidArgument || !strings.Contains(err.Error(), "signature.") {
			t.Errorf("signature %+v: got %v", sig, err)
		}
	}
}
