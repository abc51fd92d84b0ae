package webhook

import (
	"fmt"
	"maps"
	"net/http"
	"net/textproto"
	"sort"
	"strings"

	"github.com/koder/eventhub/filter"
	"github.com/koder/eventhub/hub"
)

// Controls are an endpoint's delivery controls: which events it gets beyond its
// patterns (Filter), what its requests look like (Headers, Signature), how fast, how
// many at once and in which order they go (RateLimit, MaxInFlight, Ordering) and how
// much may wait for it (MaxQueued).
// Every field is optional; the zero value is the transport's plain behaviour. They are
// stored with the endpoint (one JSON column), so every replica applies the same.
type Controls struct {
	// Filter is a CloudEvents SQL expression an event must satisfy, on top of the
	// patterns and the tenant, to be delivered here: `data.plan = 'pro'` (package
	// filter: `data.` paths read the JSON payload). Checked at fan-out, before a
	// delivery is queued. "" = every event the patterns select.
	Filter string `json:"filter,omitempty"`
	// Headers are sent on every request, as given. The headers the transport owns
	// (see reservedHeader) cannot be set; CreateEndpoint and UpdateEndpoint refuse them.
	Headers map[string]string `json:"headers,omitempty"`
	// Signature picks the signing scheme and header name (signature.go).
	Signature Signature `json:"signature,omitzero"`
	// RateLimit caps requests to the endpoint across every replica (ratelimit.go).
	RateLimit RateLimit `json:"rate_limit,omitzero"`
	// Ordering makes deliveries of one key go one at a time, in fan-out order
	// (ordering.go).
	Ordering Ordering `json:"ordering,omitzero"`
	// MaxQueued caps the deliveries waiting for this endpoint (not yet delivered or
	// dead); an event that would exceed it is refused at fan-out with
	// ResourceExhausted (fanout.go). 0 = the transport's Config.MaxQueuedPerEndpoint.
	MaxQueued int `json:"max_queued,omitempty"`
	// MaxInFlight caps the requests each replica has open to this endpoint at once
	// (inflight.go). 0 = the transport's Config.MaxInFlightPerEndpoint.
	MaxInFlight int `json:"max_in_flight,omitempty"`
	// Proxy sends this endpoint's deliveries through an HTTP CONNECT proxy
	// (http://[user:pass@]host:port), overriding Config.Proxy (proxy.go).
	Proxy string `json:"proxy,omitempty"`
	// TLS is the endpoint's client certificate, CA bundle and minimum version (tls.go).
	TLS TLS `json:"tls,omitzero"`
}

// compiledControls is what a Controls compiles to, kept beside the endpoint.
type compiledControls struct {
	filter *filter.Filter
}

// maxHeaders bounds the static headers of an endpoint.
const (
	maxHeaders        = 32
	maxHeaderValueLen = 4096
)

// compile checks every control and returns the compiled forms. Problems are
// InvalidArgument naming the field ("filter", "headers[X-Foo]", "signature.scheme").
func (c *Controls) compile() (compiledControls, error) {
	var cc compiledControls
	c.Headers = maps.Clone(c.Headers) // the endpoint's own, not the caller's map
	f, err := filter.Compile(c.Filter)
	if err != nil {
		return cc, hub.Errorf(hub.InvalidArgument, "webhook: filter: %w", err)
	}
	cc.filter = f
	if err := c.Signature.validate(); err != nil {
		return cc, err
	}
	if err := c.checkHeaders(); err != nil {
		return cc, err
	}
	if err := c.RateLimit.validate(); err != nil {
		return cc, err
	}
	if err := c.Ordering.validate(); err != nil {
		return cc, err
	}
	if c.Proxy != "" {
		if _, err := checkProxyURL(c.Proxy); err != nil {
			return cc, hub.Wrap(hub.InvalidArgument, err)
		}
	}
	if err := c.TLS.validate(); err != nil {
		return cc, err
	}
	if c.MaxQueued < 0 {
		return cc, hub.Errorf(hub.InvalidArgument, "webhook: max_queued %d: must not be negative", c.MaxQueued)
	}
	if c.MaxInFlight < 0 || c.MaxInFlight > MaxInFlight {
		return cc, hub.Errorf(hub.InvalidArgument, "webhook: max_in_flight %d: between 0 (the transport's) and %d", c.MaxInFlight, MaxInFlight)
	}
	return cc, nil
}

// checkHeaders refuses header names that are not HTTP tokens, values that could split
// a request (CR, LF, NUL), and the reserved names.
func (c *Controls) checkHeaders() error {
	if len(c.Headers) > maxHeaders {
		return hub.Errorf(hub.InvalidArgument, "webhook: headers: at most %d", maxHeaders)
	}
	names := make([]string, 0, len(c.Headers))
	for k := range c.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	seen := map[string]bool{}
	for _, k := range names {
		v := c.Headers[k]
		canon := textproto.CanonicalMIMEHeaderKey(k)
		switch {
		case !validHeaderName(k):
			return hub.Errorf(hub.InvalidArgument, "webhook: headers[%s]: not a valid header name", k)
		case seen[canon]:
			return hub.Errorf(hub.InvalidArgument, "webhook: headers[%s]: given twice (header names ignore case)", k)
		case strings.ContainsAny(v, "\r\n\x00"):
			return hub.Errorf(hub.InvalidArgument, "webhook: headers[%s]: the value must not contain CR, LF or NUL", k)
		case len(v) > maxHeaderValueLen:
			return hub.Errorf(hub.InvalidArgument, "webhook: headers[%s]: value longer than %d bytes", k, maxHeaderValueLen)
		}
		if why := c.reservedHeader(canon); why != "" {
			return hub.Errorf(hub.InvalidArgument, "webhook: headers[%s]: reserved: %s", k, why)
		}
		seen[canon] = true
	}
	return nil
}

// reservedHeader says why a (canonical) header name cannot be a static header, or "".
// These are the headers the request's meaning or its verification rests on: the body's
// framing and type, the signature and id headers of every scheme (a receiver must be
// able to trust them), the CloudEvents binding (ce-*) and the transport's own
// (Eventhub-*), and the hop-by-hop headers a proxy would act on.
func (c *Controls) reservedHeader(name string) string {
	switch name {
	case "Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding", "Host":
		return "set by the transport from the body and URL"
	case "Connection", "Keep-Alive", "Te", "Trailer", "Upgrade", "Proxy-Authorization", "Proxy-Connection":
		return "a hop-by-hop header"
	case IDHeader, TimestampHeader, StandardSignatureHeader, StripeSignatureHeader, DeliveryHeader, SignatureHeader:
		return "a signature or id header"
	}
	if h := c.Signature.Header; h != "" && name == textproto.CanonicalMIMEHeaderKey(h) {
		return "the endpoint's signature header"
	}
	lower := strings.ToLower(name)
	switch {
	case strings.HasPrefix(lower, "ce-"):
		return "a CloudEvents attribute header (ce-*)"
	case strings.HasPrefix(lower, "eventhub-"):
		return "the transport's own header (Eventhub-*)"
	}
	return ""
}

// validHeaderName: an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	return true
}

// applyHeaders sets the static headers on req (before the transport's own, which
// therefore always win: a header the rules let through cannot shadow one).
func (c *Controls) applyHeaders(h http.Header) {
	for k, v := range c.Headers {
		h.Set(k, v)
	}
}

// String is a short description for logs.
func (c *Controls) String() string {
	var parts []string
	if c.Filter != "" {
		parts = append(parts, "filter")
	}
	if len(c.Headers) > 0 {
		parts = append(parts, fmt.Sprintf("%d headers", len(c.Headers)))
	}
	if c.Signature.Scheme != "" {
		parts = append(parts, "signature "+string(c.Signature.Scheme))
	}
	if c.RateLimit.RPS > 0 {
		parts = append(parts, fmt.Sprintf("rate %g/s", c.RateLimit.RPS))
	}
	if c.Ordering.Enabled {
		parts = append(parts, "ordered")
	}
	return strings.Join(parts, ", ")
}
