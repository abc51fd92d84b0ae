package webhook

import (
	"slices"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// Endpoint is a registered receiver.
type Endpoint struct {
	// ID is "ep_<ULID>", assigned at creation.
	ID string
	// URL receives the POSTs; checked against the SSRF rules at registration and at
	// every dial.
	URL string
	// Secrets sign each request, newest first. During a rotation the old secret stays
	// with an ExpiresAt and both sign (one v1 each) until then.
	Secrets []Secret
	// Patterns select event types (hub pattern syntax: `user.*`, `#`, `*` = all but
	// hub.*). At least one.
	Patterns []string
	// TenantID, when set, limits the endpoint to events of that tenant (C1 tenantid).
	TenantID string
	// Enabled endpoints receive fan-out; a disabled one gets nothing new and its queued
	// deliveries are cancelled when their turn comes.
	Enabled bool
	// DisabledReason says why (set by DisableEndpoint or a 410 response).
	DisabledReason string
	// Description is free text for operators.
	Description string
	// CreatedAt is when the endpoint was registered: events fanned out before it are
	// not delivered to it (H6).
	CreatedAt time.Time
	UpdatedAt time.Time
	// Controls are the endpoint's delivery controls (controls.go).
	Controls Controls

	version  int64
	compiled []hub.Pattern
	cc       compiledControls
}

// Secret is one signing secret.
type Secret struct {
	Value string `json:"value"`
	// ExpiresAt ends the secret's rotation grace; zero = current.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// EndpointSpec describes a new endpoint.
type EndpointSpec struct {
	URL      string
	Patterns []string
	TenantID string
	// Secret signs requests; empty = a fresh NewSecret().
	Secret      string
	Description string
	// Disabled registers the endpoint without enabling it.
	Disabled bool
	// Controls are checked like the rest: a bad filter or a reserved header fails the
	// registration with InvalidArgument naming the field.
	Controls Controls
}

// EndpointUpdate changes the fields that are set (non-nil).
type EndpointUpdate struct {
	URL         *string
	Patterns    []string // nil = unchanged
	TenantID    *string
	Description *string
	Enabled     *bool
	// Controls replaces every delivery control at once (nil = unchanged).
	Controls *Controls
}

// RotateOptions tunes RotateSecret.
type RotateOptions struct {
	// Secret is the new secret; empty = a fresh NewSecret().
	Secret string
	// Grace keeps the current secrets signing for this long; 0 = Config.RotationGrace.
	Grace time.Duration
	// Revoke drops the current secrets at once (a leaked secret): no grace.
	Revoke bool
}

// activeSecrets returns the secrets that sign at now, newest first.
func (e *Endpoint) activeSecrets(now time.Time) [][]byte {
	out := make([][]byte, 0, len(e.Secrets))
	for _, s := range e.Secrets {
		if s.ExpiresAt.IsZero() || s.ExpiresAt.After(now) {
			out = append(out, []byte(s.Value))
		}
	}
	return out
}

// matches reports whether ev goes to this endpoint (at fan-out time).
func (e *Endpoint) matches(ev *cloudevent.Event) bool {
	if !e.Enabled {
		return false
	}
	if e.TenantID != "" && ev.TenantID() != e.TenantID {
		return false
	}
	for _, p := range e.compiled {
		if p.Match(ev.Type) {
			return e.cc.filter.Match(ev) // the CESQL filter last: the dearest check
		}
	}
	return false
}

// compilePatterns checks and compiles the patterns.
func compilePatterns(ps []string) ([]hub.Pattern, error) {
	if len(ps) == 0 {
		return nil, hub.Errorf(hub.InvalidArgument, "webhook: endpoint needs at least one pattern")
	}
	out := make([]hub.Pattern, 0, len(ps))
	for _, p := range ps {
		c, err := hub.CompilePattern(p)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// pruneSecrets drops secrets expired at now and keeps at most maxSecretsPerEndpoint.
func pruneSecrets(ss []Secret, now time.Time) []Secret {
	ss = slices.DeleteFunc(slices.Clone(ss), func(s Secret) bool {
		return !s.ExpiresAt.IsZero() && !s.ExpiresAt.After(now)
	})
	if len(ss) > maxSecretsPerEndpoint {
		ss = ss[:maxSecretsPerEndpoint]
	}
	return ss
}
