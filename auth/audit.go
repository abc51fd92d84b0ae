package auth

import (
	"context"
	"log/slog"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/koder/eventhub/hub"
)

// Outcomes of an audited action.
const (
	OutcomeOK     = "ok"
	OutcomeDenied = "denied" // refused: permission, scope, or another tenant's object
	OutcomeError  = "error"  // attempted and failed
)

// AuditRecord is one admin action: who (the credential, never its value), what, when,
// on which object, and how it ended.
type AuditRecord struct {
	// ID is "aud_" + a ULID: unique and ordered by time, the paging key.
	ID   string    `json:"id"`
	Time time.Time `json:"time"`
	// ActorKind and ActorID name the credential (Principal.Kind and ID).
	ActorKind Kind   `json:"actor_kind"`
	ActorID   string `json:"actor_id"`
	// Tenant is the tenant the action concerned: the object's, else the actor's ("" for
	// operator actions on tenant-less objects). Tenant-scoped queries filter on it.
	Tenant string `json:"tenant_id,omitempty"`
	// Action is a dotted verb ("endpoint.create", "key.revoke", "delivery.resend").
	Action string `json:"action"`
	// Object names the target ("endpoint/ep_01J...", "key/k2jd..."); "" for none.
	Object  string `json:"object,omitempty"`
	Outcome string `json:"outcome"`
	// Detail is a short free text (the error of a failed action).
	Detail string `json:"detail,omitempty"`
}

// AuditLog records admin actions as slog records (message "audit", at Info; denials
// at Warn) and, when it has a store, as rows queryable through AuditStore.List.
type AuditLog struct {
	Logger *slog.Logger // default slog.Default()
	Store  *AuditStore  // nil: log only
}

// Record completes rec (ID, Time, Outcome ok when empty) and writes it. A store error
// is returned after the slog record was written, so the action is never unrecorded.
func (a *AuditLog) Record(ctx context.Context, rec AuditRecord) (AuditRecord, error) {
	if rec.ID == "" {
		rec.ID = "aud_" + ulid.Make().String()
	}
	if rec.Time.IsZero() {
		rec.Time = time.Now().UTC().Truncate(time.Microsecond)
	}
	if rec.Outcome == "" {
		rec.Outcome = OutcomeOK
	}
	rec.Detail = limit(rec.Detail, 500)
	lg := a.Logger
	if lg == nil {
		lg = slog.Default()
	}
	level := slog.LevelInfo
	if rec.Outcome != OutcomeOK {
		level = slog.LevelWarn
	}
	lg.LogAttrs(ctx, level, "audit",
		slog.String("audit_id", rec.ID), slog.String("actor_kind", string(rec.ActorKind)), slog.String("actor_id", rec.ActorID),
		slog.String("tenant_id", rec.Tenant), slog.String("action", rec.Action), slog.String("object", rec.Object),
		slog.String("outcome", rec.Outcome), slog.String("detail", rec.Detail))
	if a.Store == nil {
		return rec, nil
	}
	return rec, a.Store.Insert(ctx, rec)
}

// Action records an action of the principal in ctx on object (of tenant objTenant, ""
// when it has none), with the outcome read from err: nil ok; PermissionDenied,
// Unauthenticated or NotFound denied (a tenant probing another tenant's ids shows up);
// anything else error. It returns err unchanged, for `return audit.Action(...)`.
func (a *AuditLog) Action(ctx context.Context, action, object, objTenant string, err error) error {
	p, _ := FromContext(ctx)
	rec := AuditRecord{ActorKind: p.Kind, ActorID: p.ID, Tenant: objTenant, Action: action, Object: object, Outcome: OutcomeOK}
	if rec.Tenant == "" {
		rec.Tenant = p.Tenant
	}
	if err != nil {
		rec.Outcome, rec.Detail = OutcomeError, err.Error()
		switch hub.Code(err) {
		case hub.PermissionDenied, hub.Unauthenticated, hub.NotFound:
			rec.Outcome = OutcomeDenied
		}
	}
	if _, serr := a.Record(ctx, rec); serr != nil && err == nil {
		// The action happened; the audit row did not. Report it without undoing: the
		// slog record exists, and the caller decides whether that is fatal.
		return hub.Errorf(hub.Unavailable, "auth: audit: action done but not stored: %w", serr)
	}
	return err
}
