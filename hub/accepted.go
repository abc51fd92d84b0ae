package hub

import (
	"context"
	"time"
)

// acceptedKey carries the acceptance times of a Send's events in its context.
type acceptedKey struct{}

// accepted is either one time for every event of the Send (all) or one per event id
// (byID). Per-event times exist because a batch may combine events accepted at
// different moments, and H6 is decided per event: an endpoint registered between two
// events of one batch must receive the later one and not the earlier.
type accepted struct {
	all  time.Time
	byID map[string]time.Time
}

// WithAcceptedAt returns a context saying that every event of the Send it is given to
// was accepted by the hub for delivery at t: when Publish queued it (direct mode) or
// when its outbox row was written (outbox mode). Transports that decide recipients at
// delivery time (the webhook fan-out, H6) use it, so the delay between acceptance and
// Send (a queue, a relay catching up after an outage) does not widen the recipients to
// those registered in between. t is kept as given; a transport compares it with its
// stored times at its store's precision (the webhook transport at the ledger's
// millisecond, ledger.Truncate, counting a registration in t's millisecond as before t).
func WithAcceptedAt(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, acceptedKey{}, accepted{all: t})
}

// WithAcceptedAtByEvent is WithAcceptedAt with one time per event id, for a batch whose
// events were accepted at different times. An event id missing from m has no known
// acceptance time. m is not copied: do not change it afterwards.
func WithAcceptedAtByEvent(ctx context.Context, m map[string]time.Time) context.Context {
	return context.WithValue(ctx, acceptedKey{}, accepted{byID: m})
}

// AcceptedAtFrom returns the time the hub accepted the event with id eventID for
// delivery, as set by WithAcceptedAt or WithAcceptedAtByEvent; false when unknown (a
// transport's Send called directly by library code), in which case a transport treats
// the event as accepted now.
func AcceptedAtFrom(ctx context.Context, eventID string) (time.Time, bool) {
	a, ok := ctx.Value(acceptedKey{}).(accepted)
	if !ok {
		return time.Time{}, false
	}
	if a.byID != nil {
		t, ok := a.byID[eventID]
		return t, ok
	}
	return a.all, !a.all.IsZero()
}
