package webhook

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
)

// MaxRPS bounds an endpoint's rate limit (requests per second).
const MaxRPS = 10000

// RateLimit caps the requests to an endpoint: RPS on average, Burst at once. Zero RPS
// = no limit.
type RateLimit struct {
	// RPS is the sustained rate, requests per second (fractions allowed: 0.5 = one
	// every 2 s).
	RPS float64 `json:"rps,omitempty"`
	// Burst is how many requests may go at once after a quiet spell. Default 1.
	Burst int `json:"burst,omitempty"`
}

func (r RateLimit) validate() error {
	switch {
	case r.RPS < 0 || r.RPS > MaxRPS:
		return hub.Errorf(hub.InvalidArgument, "webhook: rate_limit.rps %g: between 0 (no limit) and %d", r.RPS, MaxRPS)
	case r.Burst < 0:
		return hub.Errorf(hub.InvalidArgument, "webhook: rate_limit.burst %d: must not be negative", r.Burst)
	case r.Burst > 0 && r.RPS == 0:
		return hub.Errorf(hub.InvalidArgument, "webhook: rate_limit.burst without rps")
	}
	return nil
}

// The limiter is GCRA (the generic cell rate algorithm, what redis-cell and many API
// gateways use) on one row per endpoint in the ledger's database, so every replica
// sharing the ledger draws from one allowance. The row holds the theoretical arrival
// time (tat, unix µs): the time the next request is due at the sustained rate. A
// delivery takes a slot with one UPDATE, atomic on both stores, that moves tat to
// max(tat, now) + interval and returns it; its slot is then tat - interval - tau, where
// tau = (Burst-1) × interval lets a burst through at once. A slot at or before now goes
// at once; a later one is a reservation: the delivery records it in its job's metadata
// and snoozes until then (no attempt spent, like an open breaker's deferral), and goes
// when it wakes without asking again. Reserving, rather than refusing and asking
// again, is what keeps a deep queue from waking all at once at every free slot: each
// waiting delivery wakes once, at its own time, in the order the slots were taken.
//
// Over any window of length W the endpoint gets at most Burst + RPS × W requests. A
// reservation taken by a delivery that then does not send (its endpoint disabled, its
// breaker open) is lost, which errs on the side of fewer requests. The deciding time
// is the database's: the UPDATE reads the clock of the server that holds the row, so
// every replica draws from the allowance on one clock whatever its own says (with the
// replicas' clocks, two that disagreed by d let about RPS × d extra requests through
// when they alternated). A replica's clock only times the wait of its reservation: the
// slot is recorded in the deciding replica's clock, so a delivery woken on another
// replica may go as much earlier or later as the two clocks differ, while the slots
// themselves are counted on the database's clock (TestDC_RateLimitOnTheDatabaseClock).

// The database's clock in unix microseconds, fixed for one statement:
// statement_timestamp() on PostgreSQL, 'now' (the same within one sqlite3_step) on SQLite.
const (
	pgNowMicros     = `(extract(epoch from statement_timestamp()) * 1000000)::bigint`
	sqliteNowMicros = `CAST(unixepoch('subsec') * 1000000 AS INTEGER)`
)

// metaRateSlot is the job metadata key of a reserved slot (unix µs).
const metaRateSlot = "rate_slot"

// rateEarly is how early a woken delivery may use its reserved slot: the ledger's
// scheduler may hand a job out a little before its time.
const rateEarly = 2 * time.Millisecond

// RateState is an endpoint's limiter as stored (for the admin API).
type RateState struct {
	Limit RateLimit `json:"limit"`
	// NextFreeAt is when the next slot not yet reserved comes (the theoretical
	// arrival time); zero when the endpoint has had no request yet.
	NextFreeAt time.Time `json:"next_free_at,omitzero"`
	// Available is how many requests could go at once now (0 to Burst); when 0, the
	// deliveries waiting hold slots up to NextFreeAt.
	Available int `json:"available"`
}

// gcra is the limiter's arithmetic in microseconds.
type gcra struct{ interval, tau int64 }

func newGCRA(r RateLimit) gcra {
	interval := max(int64(1), int64(math.Round(1e6/r.RPS)))
	return gcra{interval: interval, tau: interval * int64(max(1, r.Burst)-1)}
}

// admitRate returns how long the delivery must wait for its rate-limit slot: 0 when it
// may go now (no limit, a slot free now, or the slot it reserved earlier has come).
func (t *Transport) admitRate(ctx context.Context, ep *Endpoint, metadata []byte, now time.Time) (time.Duration, error) {
	rl := ep.Controls.RateLimit
	if rl.RPS <= 0 {
		return 0, nil
	}
	at := micros(now)
	if slot := reservedSlot(metadata); slot > 0 {
		if wait := time.Duration(slot-at) * time.Microsecond; wait > rateEarly {
			return wait, nil // woken early: keep the reservation
		}
		setMeta(ctx, metaRateSlot, nil) // used: a retry reserves afresh
		return 0, nil
	}
	g := newGCRA(rl)
	dbNow := sqliteNowMicros // one value for the whole statement on both stores
	if t.l.Backend() == ledger.Postgres {
		dbNow = pgNowMicros
	}
	for range 2 {
		var tat, dbAt int64
		err := t.st.db.QueryRowContext(ctx, `UPDATE webhook_rate_limits
			SET tat = (CASE WHEN tat > `+dbNow+` THEN tat ELSE `+dbNow+` END) + $2
			WHERE endpoint_id = $1 RETURNING tat, `+dbNow, ep.ID, g.interval).Scan(&tat, &dbAt)
		if errors.Is(err, sql.ErrNoRows) {
			if _, err := t.st.db.ExecContext(ctx, `INSERT INTO webhook_rate_limits (endpoint_id, tat) VALUES ($1, 0)
				ON CONFLICT (endpoint_id) DO NOTHING`, ep.ID); err != nil {
				return 0, dbErr("rate limit", err)
			}
			continue
		}
		if err != nil {
			return 0, dbErr("rate limit", err)
		}
		slot := tat - g.interval - g.tau
		if slot <= dbAt {
			return 0, nil
		}
		wait := slot - dbAt
		setMeta(ctx, metaRateSlot, at+wait) // in this replica's clock, as the woken check reads it
		return time.Duration(wait) * time.Microsecond, nil
	}
	return 0, hub.Errorf(hub.Unavailable, "webhook: rate limit of %s: no limiter row", ep.ID)
}

// reservedSlot reads a reserved slot from a job's metadata (0 = none).
func reservedSlot(metadata []byte) int64 { return metadataInt(metadata, metaRateSlot) }

// RateState reads an endpoint's rate limiter.
func (t *Transport) RateState(ctx context.Context, id string) (RateState, error) {
	ep, err := t.st.getEndpoint(ctx, id)
	if err != nil {
		return RateState{}, err
	}
	rs := RateState{Limit: ep.Controls.RateLimit}
	if rs.Limit.RPS <= 0 {
		return rs, nil
	}
	var tat int64
	err = t.st.db.QueryRowContext(ctx, `SELECT tat FROM webhook_rate_limits WHERE endpoint_id = $1`, id).Scan(&tat)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return rs, dbErr("rate state", err)
	}
	g, now := newGCRA(rs.Limit), micros(time.Now())
	rs.NextFreeAt = fromMicros(tat)
	if room := now + g.tau - max(tat, now); room >= 0 {
		rs.Available = int(min(int64(max(1, rs.Limit.Burst)), room/g.interval+1))
	}
	return rs, nil
}
