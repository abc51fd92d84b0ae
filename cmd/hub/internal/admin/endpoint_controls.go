package admin

import "github.com/koder/eventhub/transports/webhook"

// controlsBody is the "controls" member of POST /endpoints and PATCH /endpoints/{id}:
// each member given replaces that control, the others stay as they are (on POST, as
// the zero value). "headers": {} removes every static header.
type controlsBody struct {
	Filter      *string            `json:"filter"`
	Headers     map[string]string  `json:"headers"`
	Signature   *webhook.Signature `json:"signature"`
	RateLimit   *webhook.RateLimit `json:"rate_limit"`
	Ordering    *webhook.Ordering  `json:"ordering"`
	MaxQueued   *int               `json:"max_queued"`
	MaxInFlight *int               `json:"max_in_flight"`
	Proxy       *string            `json:"proxy"`
	TLS         *webhook.TLS       `json:"tls"`
}

// merge returns cur with the members of b that are set.
func (b *controlsBody) merge(cur webhook.Controls) webhook.Controls {
	if b == nil {
		return cur
	}
	if b.Filter != nil {
		cur.Filter = *b.Filter
	}
	if b.Headers != nil {
		cur.Headers = b.Headers
	}
	if b.Signature != nil {
		cur.Signature = *b.Signature
	}
	if b.RateLimit != nil {
		cur.RateLimit = *b.RateLimit
	}
	if b.Ordering != nil {
		cur.Ordering = *b.Ordering
	}
	if b.MaxQueued != nil {
		cur.MaxQueued = *b.MaxQueued
	}
	if b.MaxInFlight != nil {
		cur.MaxInFlight = *b.MaxInFlight
	}
	if b.Proxy != nil {
		cur.Proxy = *b.Proxy
	}
	if b.TLS != nil {
		cur.TLS = *b.TLS
	}
	return cur
}
