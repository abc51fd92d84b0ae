package streams

import (
	"context"
	"errors"
)

// DLQ is the dead-letter stream operations redisstream.DLQ and kdbstream.DLQ both
// offer (W3), E being each one's DeadLetter, so tools written once (an admin API, the
// shared test suite) serve either bus.
type DLQ[E any] interface {
	// Stream is the dead-letter stream's key.
	Stream() string
	// Len counts the dead letters.
	Len(ctx context.Context) (int64, error)
	// List returns up to count dead letters after the id after, oldest first.
	List(ctx context.Context, after string, count int64) ([]E, error)
	// Get returns one dead letter; NotFound when absent.
	Get(ctx context.Context, id string) (E, error)
	// Replay moves one dead letter back to its source stream as a new entry.
	Replay(ctx context.Context, id string) (string, error)
	// ReplayAll replays every dead letter present when it starts.
	ReplayAll(ctx context.Context) (int, error)
	// Purge deletes the given dead letters, or every one without ids.
	Purge(ctx context.Context, ids ...string) (int64, error)
}

// DLQPage is how many dead letters one read of a dead-letter stream returns when an
// operation walks the whole stream (replay or purge of every entry): a DLQ of a few
// thousand entries then takes a handful of round trips, and one reply stays a few
// hundred kilobytes, far below Redis's client output buffer limits and cheap for one
// SQL query.
const DLQPage = 500

// DefaultDLQList is the page of a dead-letter listing when the caller gives none.
const DefaultDLQList = 100

// ListRange turns a page request of a dead-letter listing into XRANGE's start and
// count: the entries after the id after ("(" + after, or "-" from the oldest), count of
// them (DefaultDLQList when count is not positive). redisstream and kdbstream page
// their DLQs alike through it.
func ListRange(after string, count int64) (start string, n int64) {
	start = "-"
	if after != "" {
		start = "(" + after
	}
	if count <= 0 {
		count = DefaultDLQList
	}
	return start, count
}

// ReplayAll replays every dead letter present when it starts. It first collects the
// ids page by page (list returns up to n dead letters after the id after, "" for the
// oldest; id tells a dead letter's id), then replays them one by one, oldest first: an entry that fails again and lands in
// the DLQ during the walk is not replayed twice by one call. An entry that cannot be
// replayed is reported in the joined error and the others still move; the count is of
// those that moved.
func ReplayAll[E any](ctx context.Context, list func(ctx context.Context, after string, n int64) ([]E, error),
	id func(E) string, replay func(ctx context.Context, id string) (string, error)) (int, error) {
	var ids []string
	after := ""
	for {
		page, err := list(ctx, after, DLQPage)
		if err != nil {
			return 0, err
		}
		for _, e := range page {
			ids = append(ids, id(e))
		}
		if len(page) < DLQPage {
			break
		}
		after = ids[len(ids)-1]
	}
	n := 0
	var errs []error
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return n, errors.Join(append(errs, err)...)
		}
		if _, err := replay(ctx, id); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
