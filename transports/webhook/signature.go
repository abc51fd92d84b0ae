package webhook

import (
	"net/http"
	"strconv"
	"time"

	"github.com/koder/eventhub/hub"
)

// SignatureScheme names how a request is signed, so a receiver written for another
// provider verifies ours unchanged.
type SignatureScheme string

const (
	// SchemeEventhub is the transport's own (H2): `Eventhub-Signature: t=<unix>,v1=<hex>`,
	// HMAC-SHA256 of "<t>.<body>" keyed with the secret's bytes; plus the Standard
	// Webhooks headers when Config.StandardWebhooks is set. The default.
	SchemeEventhub SignatureScheme = "eventhub"
	// SchemeStandard is Standard Webhooks alone: webhook-id, webhook-timestamp and
	// webhook-signature (`v1,<base64 HMAC-SHA256 of "<id>.<t>.<body>">`, keyed with the
	// base64 part of a whsec_ secret). Its header names are fixed by that spec.
	SchemeStandard SignatureScheme = "standard"
	// SchemeStripe is Stripe's: `Stripe-Signature: t=<unix>,v1=<hex>` over "<t>.<body>"
	// keyed with the secret string as given (whsec_ included), what Stripe's libraries
	// verify (webhook.ConstructEvent and friends). The same computation as ours under
	// Stripe's header name.
	SchemeStripe SignatureScheme = "stripe"
)

// StripeSignatureHeader is the header SchemeStripe signs in by default.
const StripeSignatureHeader = "Stripe-Signature"

// Signature is an endpoint's signing scheme and, for the t=,v1= schemes, the header
// name that carries it.
type Signature struct {
	// Scheme: eventhub (default), standard or stripe.
	Scheme SignatureScheme `json:"scheme,omitempty"`
	// Header renames the signature header of the eventhub and stripe schemes (a
	// receiver that reads `X-Signature`). "" = the scheme's own name. Not allowed with
	// standard, whose names the spec fixes.
	Header string `json:"header,omitempty"`
}

func (s Signature) validate() error {
	switch s.Scheme {
	case "", SchemeEventhub, SchemeStripe:
	case SchemeStandard:
		if s.Header != "" {
			return hub.Errorf(hub.InvalidArgument, "webhook: signature.header: the standard scheme's header names are fixed (webhook-signature)")
		}
	default:
		return hub.Errorf(hub.InvalidArgument, "webhook: signature.scheme %q: eventhub, standard or stripe", s.Scheme)
	}
	if s.Header != "" && !validHeaderName(s.Header) {
		return hub.Errorf(hub.InvalidArgument, "webhook: signature.header %q: not a valid header name", s.Header)
	}
	var c Controls
	if why := c.reservedHeader(http.CanonicalHeaderKey(s.Header)); s.Header != "" && why != "" {
		return hub.Errorf(hub.InvalidArgument, "webhook: signature.header %q: reserved: %s", s.Header, why)
	}
	return nil
}

// sign sets the signature headers of the scheme on h for body sent at at with every
// active secret. standardToo is Config.StandardWebhooks.
func (s Signature) sign(h http.Header, id string, at time.Time, body []byte, secrets [][]byte, standardToo bool) {
	switch s.Scheme {
	case SchemeStandard:
		signStandard(h, id, at, body, secrets)
	case SchemeStripe:
		h.Set(s.headerOr(StripeSignatureHeader), Sign(at, body, secrets...))
	default:
		h.Set(s.headerOr(SignatureHeader), Sign(at, body, secrets...))
		if standardToo {
			signStandard(h, id, at, body, secrets)
		}
	}
}

func (s Signature) headerOr(def string) string {
	if s.Header != "" {
		return s.Header
	}
	return def
}

func signStandard(h http.Header, id string, at time.Time, body []byte, secrets [][]byte) {
	keys := make([][]byte, len(secrets))
	for i, sec := range secrets {
		keys[i] = StandardKey(string(sec))
	}
	h.Set(TimestampHeader, strconv.FormatInt(at.Unix(), 10))
	h.Set(StandardSignatureHeader, SignStandard(id, at, body, keys...))
}
