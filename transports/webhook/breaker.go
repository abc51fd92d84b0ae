package webhook

import (
	"context"
	"database/sql"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/koder/eventhub/hub"
)

// The per-endpoint circuit breaker (H3). Its state is a row in webhook_breakers, so
// every replica and a restarted process see the same breaker; each transition is one
// conditional UPDATE, so concurrent workers cannot both win a transition.
//
//	closed --(BreakerThreshold consecutive failures)--> open
//	open --(BreakerPause elapsed; one worker wins the probe lease)--> half_open
//	half_open --(probe succeeds)--> closed, --(probe fails)--> open (pause again)
//
// While open (and while another worker holds the probe lease) deliveries are snoozed in
// River: deferred without spending an attempt, so an endpoint that is down for an hour
// does not burn through its retry schedule. The probe lease (probe_until) expires
// after one attempt timeout, so a probe whose process died is taken over.
//
// Consecutive failures rather than a failure rate over a window (Convoy): webhook
// traffic per endpoint is often sparse, where a rate needs a minimum count that a quiet
// endpoint never reaches; a run of N failures with no success between is unambiguous.

// BreakerState is the state of an endpoint's breaker.
type BreakerState string

const (
	BreakerClosed   BreakerState = "closed"
	BreakerOpen     BreakerState = "open"
	BreakerHalfOpen BreakerState = "half_open"
)

// BreakerStatus is an endpoint's breaker as stored.
type BreakerStatus struct {
	EndpointID string       `json:"endpoint_id"`
	State      BreakerState `json:"state"`
	// Failures is the count of consecutive failed attempts.
	Failures int `json:"failures"`
	// OpenedAt is when it last opened; the probe is due at OpenedAt + BreakerPause.
	OpenedAt time.Time `json:"opened_at,omitzero"`
	// ProbeUntil is the end of the half-open probe's lease.
	ProbeUntil time.Time `json:"probe_until,omitzero"`
	// Trips counts the times it opened.
	Trips     int64     `json:"trips"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// breakers runs the state machine over the table, with a short per-process cache of
// closed breakers so the common case (healthy endpoint) costs no query per delivery.
type breakers struct {
	db        *sql.DB
	threshold int
	pause     time.Duration
	lease     time.Duration
	ttl       time.Duration
	onChange  func(id string, to BreakerState)

	mu    sync.Mutex
	cache map[string]cachedBreaker
	reads singleflight.Group // cold reads of a breaker (readOnce)
}

type cachedBreaker struct {
	failures  int
	at        time.Time
	refreshAt time.Time // when a caller set off to re-read it (zero: nobody)
}

// refreshTimeout is how long others serve a stale cache entry while one caller
// re-reads it, before another caller tries.
const refreshTimeout = 5 * time.Second

// cached returns a fresh closed breaker from the cache. Once it expires, the first
// caller is told to re-read it while the others keep using the stale copy for that one
// round trip: a thousand workers must not all queue for the pool at the same instant.
func (b *breakers) cached(id string, now time.Time) (cachedBreaker, bool) {
	if b.ttl < 0 {
		return cachedBreaker{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.cache[id]
	switch {
	case !ok:
		return cachedBreaker{}, false
	case now.Sub(c.at) <= b.ttl:
		return c, true
	case c.refreshAt.IsZero() || now.Sub(c.refreshAt) > refreshTimeout:
		c.refreshAt = now
		b.cache[id] = c
		return cachedBreaker{}, false
	}
	return c, true
}

const breakerCols = `endpoint_id, state, failures, opened_at, probe_until, trips, updated_at`

func scanBreaker(r scanner) (BreakerStatus, error) {
	var (
		b                     BreakerStatus
		state                 string
		opened, probe, update int64
	)
	err := r.Scan(&b.EndpointID, &state, &b.Failures, &opened, &probe, &b.Trips, &update)
	b.State, b.OpenedAt, b.ProbeUntil, b.UpdatedAt = BreakerState(state), fromMicros(opened), fromMicros(probe), fromMicros(update)
	return b, err
}

func (b *breakers) get(ctx context.Context, id string) (BreakerStatus, error) {
	s, err := scanBreaker(b.db.QueryRowContext(ctx, `SELECT `+breakerCols+` FROM webhook_breakers WHERE endpoint_id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return BreakerStatus{}, hub.Errorf(hub.NotFound, "webhook: breaker of endpoint %s not found", id)
	}
	return s, dbErr("breaker", err)
}

func (b *breakers) list(ctx context.Context) ([]BreakerStatus, error) {
	rows, err := b.db.QueryContext(ctx, `SELECT `+breakerCols+` FROM webhook_breakers ORDER BY endpoint_id`)
	if err != nil {
		return nil, dbErr("breakers", err)
	}
	defer rows.Close()
	var out []BreakerStatus
	for rows.Next() {
		s, err := scanBreaker(rows)
		if err != nil {
			return nil, dbErr("breakers", err)
		}
		out = append(out, s)
	}
	return out, dbErr("breakers", rows.Err())
}

func (b *breakers) remember(id string, failures int, now time.Time) {
	b.mu.Lock()
	b.cache[id] = cachedBreaker{failures: failures, at: now}
	b.mu.Unlock()
}

func (b *breakers) forget(id string) {
	b.mu.Lock()
	delete(b.cache, id)
	b.mu.Unlock()
}

// admit decides whether an attempt on endpoint id may go now. It returns wait > 0 to
// defer the delivery that long (open, or another worker is probing).
func (b *breakers) admit(ctx context.Context, id string, now time.Time) (wait time.Duration, err error) {
	if _, ok := b.cached(id, now); ok {
		return 0, nil
	}
	s, err := readOnce(ctx, &b.reads, id, func(ctx context.Context) (BreakerStatus, error) { return b.get(ctx, id) })
	if hub.Code(err) == hub.NotFound {
		return 0, nil // endpoint deleted meanwhile: the worker finds out next
	}
	if err != nil {
		return 0, err
	}
	switch s.State {
	case BreakerClosed:
		b.remember(id, s.Failures, now)
		return 0, nil
	case BreakerOpen:
		if due := s.OpenedAt.Add(b.pause); now.Before(due) {
			return spread(due.Sub(now)), nil
		}
	case BreakerHalfOpen:
		// A probe is in flight; it usually ends long before its lease, so look again
		// after at most a pause rather than sleeping out the whole lease.
		if now.Before(s.ProbeUntil) {
			return spread(min(s.ProbeUntil.Sub(now), b.pause)), nil
		}
	}
	// The pause is over (or the last probe's lease ran out): try to become the probe.
	res, err := b.db.ExecContext(ctx, `UPDATE webhook_breakers SET state = 'half_open', probe_until = $2, updated_at = $3
		WHERE endpoint_id = $1 AND ((state = 'open' AND opened_at <= $4) OR (state = 'half_open' AND probe_until <= $3))`,
		id, micros(now.Add(b.lease)), micros(now), micros(now.Add(-b.pause)))
	if err != nil {
		return 0, dbErr("breaker probe", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		b.onChange(id, BreakerHalfOpen)
		return 0, nil
	}
	// Someone else won the lease (or closed it meanwhile): look again shortly.
	return spread(min(b.lease, b.pause)), nil
}

// success closes the breaker; a write only when it was not closed with zero failures.
func (b *breakers) success(ctx context.Context, id string, now time.Time) error {
	c, wasClosed := b.cached(id, now)
	if wasClosed && c.failures == 0 {
		return nil
	}
	var trips int64
	err := b.db.QueryRowContext(ctx, `UPDATE webhook_breakers SET state = 'closed', failures = 0, probe_until = 0, updated_at = $2
		WHERE endpoint_id = $1 AND (state <> 'closed' OR failures <> 0) RETURNING trips`, id, micros(now)).Scan(&trips)
	changed := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) { // no rows: already closed and clean
		return dbErr("breaker success", err)
	}
	b.remember(id, 0, now)
	if changed && !wasClosed {
		b.onChange(id, BreakerClosed)
	}
	return nil
}

// failure counts a failed attempt; it opens the breaker at the threshold, and a failed
// probe (half_open) reopens it for another pause.
func (b *breakers) failure(ctx context.Context, id string, now time.Time) (BreakerState, error) {
	var (
		state    string
		failures int
		trips    int64
		opened   int64
	)
	const trip = `(state = 'half_open' OR (state = 'closed' AND failures + 1 >= $2))`
	err := b.db.QueryRowContext(ctx, `UPDATE webhook_breakers SET
		failures = failures + 1,
		opened_at = CASE WHEN `+trip+` THEN $3 ELSE opened_at END,
		trips = CASE WHEN `+trip+` THEN trips + 1 ELSE trips END,
		probe_until = CASE WHEN `+trip+` THEN 0 ELSE probe_until END,
		state = CASE WHEN `+trip+` THEN 'open' ELSE state END,
		updated_at = $3
		WHERE endpoint_id = $1 RETURNING state, failures, trips, opened_at`, id, b.threshold, micros(now)).Scan(&state, &failures, &trips, &opened)
	if errors.Is(err, sql.ErrNoRows) {
		return BreakerClosed, nil // endpoint deleted meanwhile
	}
	if err != nil {
		return "", dbErr("breaker failure", err)
	}
	if BreakerState(state) == BreakerClosed {
		b.remember(id, failures, now)
	} else {
		b.forget(id)
	}
	if BreakerState(state) == BreakerOpen && opened == micros(now) {
		b.onChange(id, BreakerOpen) // this call tripped it (opened_at is its own now)
	}
	return BreakerState(state), nil
}

// reset closes a breaker by hand (an operator knows the receiver is back).
func (b *breakers) reset(ctx context.Context, id string, now time.Time) error {
	res, err := b.db.ExecContext(ctx, `UPDATE webhook_breakers SET state = 'closed', failures = 0, probe_until = 0,
		updated_at = $2 WHERE endpoint_id = $1`, id, micros(now))
	if err != nil {
		return dbErr("breaker reset", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return hub.Errorf(hub.NotFound, "webhook: breaker of endpoint %s not found", id)
	}
	b.forget(id)
	b.onChange(id, BreakerClosed)
	return nil
}

// spread adds up to 10 % so the deliveries deferred by one breaker do not all wake in
// the same millisecond.
func spread(d time.Duration) time.Duration {
	return d + time.Duration(rand.Float64()*breakerSnoozeJitterFraction*float64(d)) + time.Millisecond
}

// Breaker returns an endpoint's breaker as stored (every replica sees the same).
func (t *Transport) Breaker(ctx context.Context, endpointID string) (BreakerStatus, error) {
	return t.br.get(ctx, endpointID)
}

// Breakers returns every endpoint's breaker.
func (t *Transport) Breakers(ctx context.Context) ([]BreakerStatus, error) {
	return t.br.list(ctx)
}

// ResetBreaker closes an endpoint's breaker by hand (the operator knows the receiver
// is back) and makes the deliveries it deferred due now.
func (t *Transport) ResetBreaker(ctx context.Context, endpointID string) error {
	if err := t.br.reset(ctx, endpointID, time.Now()); err != nil {
		return err
	}
	waiting, err := t.Deliveries(ctx, DeliveryFilter{EndpointID: endpointID, State: DeliveryPending, Limit: maxBulkResend})
	if err != nil {
		return err
	}
	for _, d := range waiting {
		if _, err := t.l.JobRetry(ctx, d.ID); err != nil && hub.Code(err) != hub.NotFound {
			return err
		}
	}
	return nil
}
