package ledger

import (
	"context"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// TimePrecision is the resolution of every time the ledger stores and every bound it
// compares with one: a job's creation time, the acceptance time the outbox relay hands
// to a transport (H6), an endpoint's registration time, the Since/Until of a listing or
// a bulk resend.
//
// It is SQLite's: riversqlite stores times as text with three decimals
// (river_sqlite_driver.go: TimePrecision), so a River job created on SQLite is known
// only to the millisecond, while PostgreSQL keeps microseconds and Go nanoseconds.
// Comparing a stored millisecond with a nanosecond bound taken in the same millisecond
// puts the row on the wrong side of it (a delivery created right after `since := now`
// reads as created before it), so the same question got different answers on the two
// stores. Every such time is therefore cut to the millisecond, in one place: Truncate.
const TimePrecision = time.Millisecond

// Truncate returns t in UTC, truncated down to TimePrecision and without its monotonic
// clock reading; the zero time stays zero. Use it on both sides of every comparison of
// ledger times, and on times before storing them, so that a bound and a row in the same
// millisecond compare equal on every backend.
//
// The boundary rules this gives, at millisecond precision: a time range [Since, Until)
// includes a row created in Since's millisecond and excludes one created in Until's; an
// endpoint registered in the millisecond an event was accepted receives it (H6).
func Truncate(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(TimePrecision)
}

// createdAtHook stamps every job inserted through the ledger with Truncate(time.Now())
// as its created_at. Without it PostgreSQL writes the server's now() (microseconds, the
// transaction's start) and SQLite its own clock (milliseconds): with it both stores hold
// the same millisecond, taken from the same clock as the other times the ledger's users
// compare with it (endpoint registration, Publish's acceptance time, a caller's bound).
// A job whose creation time River was already given (a stubbed test clock) keeps it.
var createdAtHook = river.HookInsertBeginFunc(func(_ context.Context, p *rivertype.JobInsertParams) error {
	if p.CreatedAt == nil {
		now := Truncate(time.Now())
		p.CreatedAt = &now
	}
	return nil
})
