package webhook

import (
	"context"
	"strings"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
)

// Endpoint management. Every call goes to the database (the source of truth for all
// replicas) and drops this process's cached copy, so its workers see the change at
// once; other processes see it within Config.CacheTTL.

// CreateEndpoint registers an endpoint. Its URL must pass the SSRF rules now (H4: the
// host's addresses are resolved and every one checked) and is checked again at every
// dial. It receives events fanned out from now on (H6).
func (t *Transport) CreateEndpoint(ctx context.Context, spec EndpointSpec) (*Endpoint, error) {
	compiled, err := compilePatterns(spec.Patterns)
	if err != nil {
		return nil, err
	}
	cc, err := spec.Controls.compile()
	if err != nil {
		return nil, err
	}
	if _, err := t.guard.CheckURL(ctx, spec.URL); err != nil {
		return nil, err
	}
	secret := spec.Secret
	if secret == "" {
		secret = NewSecret()
	}
	if err := checkSecret(secret); err != nil {
		return nil, err
	}
	now := ledger.Truncate(time.Now())
	e := &Endpoint{
		ID:          "ep_" + strings.TrimPrefix(cloudevent.NewIDAt(now), cloudevent.IDPrefix),
		URL:         spec.URL,
		Secrets:     []Secret{{Value: secret}},
		Patterns:    append([]string(nil), spec.Patterns...),
		TenantID:    spec.TenantID,
		Enabled:     !spec.Disabled,
		Description: spec.Description,
		CreatedAt:   now,
		UpdatedAt:   now,
		Controls:    spec.Controls,
		version:     1,
		compiled:    compiled,
		cc:          cc,
	}
	if err := t.st.insertEndpoint(ctx, e); err != nil {
		return nil, err
	}
	return e, nil
}

// Endpoint returns one endpoint (NotFound when absent).
func (t *Transport) Endpoint(ctx context.Context, id string) (*Endpoint, error) {
	return t.st.getEndpoint(ctx, id)
}

// Endpoints lists every endpoint, enabled or not, by id (= creation order).
func (t *Transport) Endpoints(ctx context.Context) ([]*Endpoint, error) {
	return t.st.listEndpoints(ctx, endpointQuery{open: true})
}

// UpdateEndpoint changes the fields set in u. A new URL passes the SSRF rules first.
// Re-enabling clears DisabledReason.
func (t *Transport) UpdateEndpoint(ctx context.Context, id string, u EndpointUpdate) (*Endpoint, error) {
	if u.URL != nil {
		if _, err := t.guard.CheckURL(ctx, *u.URL); err != nil {
			return nil, err
		}
	}
	var compiled []hub.Pattern
	if u.Patterns != nil {
		var err error
		if compiled, err = compilePatterns(u.Patterns); err != nil {
			return nil, err
		}
	}
	var cc compiledControls
	if u.Controls != nil {
		var err error
		if cc, err = u.Controls.compile(); err != nil {
			return nil, err
		}
	}
	return t.modify(ctx, id, func(e *Endpoint, _ time.Time) {
		if u.Controls != nil {
			e.Controls, e.cc = *u.Controls, cc
		}
		if u.URL != nil {
			e.URL = *u.URL
		}
		if u.Patterns != nil {
			e.Patterns = append([]string(nil), u.Patterns...)
			e.compiled = compiled
		}
		if u.TenantID != nil {
			e.TenantID = *u.TenantID
		}
		if u.Description != nil {
			e.Description = *u.Description
		}
		if u.Enabled != nil {
			e.Enabled = *u.Enabled
			if e.Enabled {
				e.DisabledReason = ""
			}
		}
	})
}

// DisableEndpoint stops fan-out to the endpoint; its queued deliveries are cancelled
// when their turn comes (resend them after re-enabling).
func (t *Transport) DisableEndpoint(ctx context.Context, id, reason string) error {
	_, err := t.modify(ctx, id, func(e *Endpoint, _ time.Time) {
		e.Enabled, e.DisabledReason = false, reason
	})
	return err
}

// EnableEndpoint resumes fan-out to the endpoint.
func (t *Transport) EnableEndpoint(ctx context.Context, id string) error {
	on := true
	_, err := t.UpdateEndpoint(ctx, id, EndpointUpdate{Enabled: &on})
	return err
}

// DeleteEndpoint removes the endpoint and its breaker. Its deliveries stay in the
// ledger (for inspection) and queued ones are cancelled when their turn comes.
func (t *Transport) DeleteEndpoint(ctx context.Context, id string) error {
	defer t.forgetEndpoint(id)
	if err := t.st.deleteEndpoint(ctx, id); err != nil {
		return err
	}
	return t.deleteHistory(ctx, id)
}

// RotateSecret adds a new signing secret in front. The current secrets keep signing
// until now + grace (one v1 value each, so receivers can switch at their pace), then
// drop out; opts.Revoke drops them at once instead.
func (t *Transport) RotateSecret(ctx context.Context, id string, opts RotateOptions) (*Endpoint, error) {
	secret := opts.Secret
	if secret == "" {
		secret = NewSecret()
	}
	if err := checkSecret(secret); err != nil {
		return nil, err
	}
	grace := opts.Grace
	if grace == 0 {
		grace = t.cfg.RotationGrace
	}
	if grace < 0 || grace > MaxRotationGrace {
		return nil, hub.Errorf(hub.InvalidArgument, "webhook: rotation grace %s: between 0 and %s", grace, MaxRotationGrace)
	}
	return t.modify(ctx, id, func(e *Endpoint, now time.Time) {
		old := pruneSecrets(e.Secrets, now)
		until := now.Add(grace)
		for i := range old {
			if opts.Revoke {
				old = old[:0]
				break
			}
			if old[i].ExpiresAt.IsZero() || old[i].ExpiresAt.After(until) {
				old[i].ExpiresAt = until
			}
		}
		e.Secrets = pruneSecrets(append([]Secret{{Value: secret}}, old...), now)
	})
}

// modify reads, changes and writes an endpoint under an optimistic lock, retrying when
// another writer got there first.
func (t *Transport) modify(ctx context.Context, id string, change func(*Endpoint, time.Time)) (*Endpoint, error) {
	defer t.forgetEndpoint(id)
	for range 10 {
		e, err := t.st.getEndpoint(ctx, id)
		if err != nil {
			return nil, err
		}
		now := ledger.Truncate(time.Now())
		change(e, now)
		e.UpdatedAt = now
		ok, err := t.st.saveEndpoint(ctx, e)
		if err != nil {
			return nil, err
		}
		if ok {
			return e, nil
		}
	}
	return nil, hub.Errorf(hub.Unavailable, "webhook: endpoint %s: too many concurrent updates", id)
}

// checkSecret refuses secrets too short to resist guessing (Standard Webhooks asks for
// 24-64 random bytes; a whsec_ secret of 24 bytes is 38 characters), and secrets that
// look encrypted: a stored value starting with the encryption marker is decrypted, so a
// caller who could store one would make the endpoint sign with whatever an attacker's
// ciphertext opens to, or, under a keyless ring, be mistaken for a sealed value.
func checkSecret(s string) error {
	if len(s) < 24 {
		return hub.Errorf(hub.InvalidArgument, "webhook: secret: at least 24 characters (use NewSecret)")
	}
	if strings.HasPrefix(s, "enc:") {
		return hub.Errorf(hub.InvalidArgument, "webhook: secret: must not start with \"enc:\" (the prefix of an encrypted secret)")
	}
	return nil
}

// endpoint returns the endpoint a worker delivers to, from the cache when fresh. Once
// an entry expires, one caller re-reads it while the others use the stale copy for
// that round trip (see breakers.cached); with no copy at all, the callers share one
// read (readOnce).
func (t *Transport) endpoint(ctx context.Context, id string, now time.Time) (*Endpoint, error) {
	if t.cfg.CacheTTL <= 0 {
		return t.st.getEndpoint(ctx, id)
	}
	t.epMu.Lock()
	c, ok := t.epCache[id]
	switch {
	case !ok:
	case now.Sub(c.at) <= t.cfg.CacheTTL:
		t.epMu.Unlock()
		return c.ep, nil
	case c.refreshAt.IsZero() || now.Sub(c.refreshAt) > refreshTimeout:
		c.refreshAt = now
		t.epCache[id] = c
	default:
		t.epMu.Unlock()
		return c.ep, nil
	}
	t.epMu.Unlock()
	e, err := readOnce(ctx, &t.epReads, id, func(ctx context.Context) (*Endpoint, error) { return t.st.getEndpoint(ctx, id) })
	if err != nil {
		return nil, err
	}
	t.epMu.Lock()
	t.epCache[id] = cachedEndpoint{ep: e, at: now}
	t.epMu.Unlock()
	return e, nil
}

func (t *Transport) forgetEndpoint(id string) {
	t.epMu.Lock()
	delete(t.epCache, id)
	t.epMu.Unlock()
	t.br.forget(id)
}
