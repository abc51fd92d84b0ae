package kdbstream

import (
	"context"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// DeadLetter is one entry of a dead-letter stream (streams.DeadLetter, the type the
// Redis transport's DLQ answers too).
type DeadLetter = streams.DeadLetter

// DLQ operates one dead-letter stream of the engine (W3): the operations of
// redisstream.DLQ (Len, List, Get, Replay, ReplayAll, Purge) with the same dead-letter
// layout (internal/streams), so tooling treats both buses alike. They are plain stream
// commands on the engine.
type DLQ struct {
	eng    *engine.Engine
	stream string
}

// NewDLQ returns the operations on dlqStream ("<stream>:dlq", or "events.dlq").
func NewDLQ(eng *engine.Engine, dlqStream string) *DLQ {
	return &DLQ{eng: eng, stream: dlqStream}
}

// Stream returns the dead-letter stream's key.
func (d *DLQ) Stream() string { return d.stream }

// Len returns the number of dead letters.
func (d *DLQ) Len(ctx context.Context) (int64, error) {
	n, err := d.eng.XLen(ctx, d.stream)
	return n, classify(err)
}

// List returns up to count dead letters after the entry id after ("" for the oldest
// first), oldest first; page by passing the last ID back. count <= 0 means
// 100 (streams.DefaultDLQList), as in redisstream.
func (d *DLQ) List(ctx context.Context, after string, count int64) ([]DeadLetter, error) {
	start, count := streams.ListRange(after, count)
	es, err := d.eng.XRange(ctx, d.stream, start, "+", count)
	if err != nil {
		return nil, classify(err)
	}
	out := make([]DeadLetter, len(es))
	for i, e := range es {
		out[i] = toDeadLetter(e)
	}
	return out, nil
}

// Get returns one dead letter; a missing id is NotFound.
func (d *DLQ) Get(ctx context.Context, id string) (DeadLetter, error) {
	es, err := d.eng.XRange(ctx, d.stream, id, id, 1)
	if err != nil {
		return DeadLetter{}, classify(err)
	}
	if len(es) == 0 {
		return DeadLetter{}, hub.Errorf(hub.NotFound, "kdbstream: no dead letter %s in %s", id, d.stream)
	}
	return toDeadLetter(es[0]), nil
}

// Replay appends the dead letter's original fields to its source stream as a new
// entry (a new delivery: every group of that stream sees it, and R5's idempotency by
// event_id keeps groups that had handled it from acting twice), then deletes it from
// the DLQ, and returns the new entry's id. The two steps are separate commands: a
// crash between them leaves both entries (at-least-once), never neither. A missing
// dead letter is NotFound.
func (d *DLQ) Replay(ctx context.Context, id string) (string, error) {
	dl, err := d.Get(ctx, id)
	if err != nil {
		return "", err
	}
	if dl.SourceStream == "" {
		return "", hub.Errorf(hub.FailedPrecondition, "kdbstream: dead letter %s has no %s field", id, streams.FieldSourceStream)
	}
	newID, _, err := d.eng.XAdd(ctx, engine.Add{Stream: dl.SourceStream, Values: streams.OrderedFields(dl.Fields)})
	if err != nil {
		return "", classify(err)
	}
	if _, err := d.eng.XDel(ctx, d.stream, id); err != nil {
		return "", classify(err)
	}
	return newID.String(), nil
}

// ReplayAll replays every dead letter present when it starts (Replay, one by one,
// oldest first) and returns how many moved; see redisstream.DLQ.ReplayAll.
func (d *DLQ) ReplayAll(ctx context.Context) (int, error) {
	return streams.ReplayAll(ctx, d.List, func(dl DeadLetter) string { return dl.ID }, d.Replay)
}

// Purge deletes the given dead letters, or every one when no id is given, and returns
// how many entries went. The whole stream goes page by page (streams.DLQPage entries
// per transaction), so a large DLQ never holds one long write lock; unlike Redis's DEL,
// a purge of everything is therefore not one atomic step.
func (d *DLQ) Purge(ctx context.Context, ids ...string) (int64, error) {
	if len(ids) > 0 {
		n, err := d.eng.XDel(ctx, d.stream, ids...)
		return n, classify(err)
	}
	var total int64
	after := ""
	for {
		page, err := d.List(ctx, after, streams.DLQPage)
		if err != nil || len(page) == 0 {
			return total, err
		}
		ids := make([]string, len(page))
		for i, dl := range page {
			ids[i] = dl.ID
		}
		n, err := d.eng.XDel(ctx, d.stream, ids...)
		total += n
		if err != nil || len(page) < streams.DLQPage {
			return total, classify(err)
		}
		after = ids[len(ids)-1]
	}
}

func toDeadLetter(e engine.Entry) DeadLetter {
	values := make(map[string]string, len(e.Fields)/2)
	for i := 0; i+1 < len(e.Fields); i += 2 {
		values[e.Fields[i]] = e.Fields[i+1]
	}
	return streams.ParseDeadLetter(e.ID.String(), values)
}

var _ streams.DLQ[DeadLetter] = (*DLQ)(nil)
