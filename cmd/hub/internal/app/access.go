package app

import (
	"context"
	"fmt"
	"time"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/cmd/hub/internal/ops"
)

// auditPruneEvery is how often old audit rows are deleted when auth.audit.retention
// is set: retention is days or months, so an hour late is nothing, and one DELETE an
// hour costs nothing.
const auditPruneEvery = time.Hour

// startAccess opens what the listeners' access layer shares before any listener or
// source starts: the JWT verifier (auth.jwt) in the runtime, the key ring (said at
// start: whether secrets are encrypted, and whether rows wait for a re-encryption), and
// the audit pruning.
func (a *App) startAccess(ctx context.Context) error {
	cfg := &a.plan.File.Config
	a.stopBackground = func() {}
	if cfg.Auth.JWT != nil {
		jc := *cfg.Auth.JWT
		jc.Logger = a.log
		v, err := auth.NewJWTVerifier(ctx, jc)
		if err != nil {
			return fmt.Errorf("auth.jwt: %w", err)
		}
		a.rt.JWT = v
	}
	ring, err := a.store.Keyring()
	if err != nil {
		return err
	}
	if a.store.KeyFileCreated() {
		a.log.Info("secret key file created: keep it private and backed up (without it, encrypted secrets cannot be read)",
			"file", a.plan.File.Resolve(cfg.Secrets.KeyFile))
	}
	for _, t := range a.transports {
		wp, ok := t.mod.(ops.WebhookProvider)
		if !ok || wp.Webhook() == nil {
			continue
		}
		st, err := wp.Webhook().SecretsStatus(ctx)
		switch {
		case err != nil:
			a.log.Warn("webhook secrets: status unknown", "error", err)
		case ring == nil:
			a.log.Warn("webhook signing secrets are stored in plaintext: set HUB_SECRET_KEY or secrets.key_file, then run `hub secrets reencrypt`",
				"endpoints", st.Endpoints)
		case st.Pending > 0:
			a.log.Warn("webhook signing secrets wait for re-encryption under the current key: run `hub secrets reencrypt`",
				"pending", st.Pending, "key", ring.PrimaryID())
		default:
			a.log.Info("webhook signing secrets encrypted at rest", "key", ring.PrimaryID(), "endpoints", st.Endpoints)
		}
	}
	keep := cfg.Auth.Audit.Retention
	if cfg.Store.Configured() && (keep > 0 || ring != nil) {
		var as *auth.AuditStore
		if keep > 0 {
			if as, err = a.store.Audit(ctx); err != nil {
				return err
			}
		}
		// Revoked link tokens are kept until every link they could name has expired.
		var revs *auth.LinkRevocations
		if ring != nil {
			if revs, err = a.store.LinkRevocations(ctx); err != nil {
				return err
			}
		}
		pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		go func() {
			defer close(done)
			tick := time.NewTicker(auditPruneEvery)
			defer tick.Stop()
			for {
				if as != nil {
					if n, err := as.Prune(pctx, time.Now().Add(-keep)); err != nil && pctx.Err() == nil {
						a.log.Warn("audit: prune failed", "error", err)
					} else if n > 0 {
						a.log.Info("audit: pruned", "rows", n, "older_than", keep.String())
					}
				}
				if revs != nil {
					if _, err := revs.Prune(pctx, time.Now()); err != nil && pctx.Err() == nil {
						a.log.Warn("link revocations: prune failed", "error", err)
					}
				}
				select {
				case <-pctx.Done():
					return
				case <-tick.C:
				}
			}
		}()
		a.stopBackground = func() { cancel(); <-done }
	}
	return nil
}

// stopAccess ends the background work and closes the JWT verifier, after the sources
// stopped. Idempotent.
func (a *App) stopAccess() {
	if a.stopBackground != nil {
		a.stopBackground()
		a.stopBackground = nil
	}
	if a.rt != nil && a.rt.JWT != nil {
		_ = a.rt.JWT.Close()
		a.rt.JWT = nil
	}
}
