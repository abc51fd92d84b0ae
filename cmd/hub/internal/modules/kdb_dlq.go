package modules

import (
	"context"
	"errors"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/streams"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// kdbDLQ operates a kdbstream dead-letter stream with the engine's stream commands and
// the dead-letter layout of internal/streams (the same one redisstream.DLQ reads).
type kdbDLQ struct {
	eng    *engine.Engine
	stream string
}

type kdbDeadLetter struct {
	ID           string            `json:"id"`
	Time         time.Time         `json:"time"`
	Fields       map[string]string `json:"fields"`
	Error        string            `json:"error"`
	Reason       string            `json:"reason"`
	SourceStream string            `json:"source_stream"`
	Group        string            `json:"group"`
	OriginalID   string            `json:"original_id"`
}

func toKDBDeadLetter(e engine.Entry) kdbDeadLetter {
	values := map[string]string{}
	for i := 0; i+1 < len(e.Fields); i += 2 {
		values[e.Fields[i]] = e.Fields[i+1]
	}
	orig, meta := streams.SplitDeadLetter(values)
	return kdbDeadLetter{ID: e.ID.String(), Time: time.UnixMilli(e.ID.Ms).UTC(), Fields: orig, Error: meta[streams.FieldError],
		Reason: meta[streams.FieldReason], SourceStream: meta[streams.FieldSourceStream], Group: meta[streams.FieldGroup], OriginalID: meta[streams.FieldOriginalID]}
}

func (d kdbDLQ) List(ctx context.Context, limit int) (any, error) {
	n, err := d.eng.XLen(ctx, d.stream)
	if err != nil {
		return nil, err
	}
	es, err := d.eng.XRange(ctx, d.stream, "-", "+", int64(limit))
	if err != nil {
		return nil, err
	}
	out := make([]kdbDeadLetter, len(es))
	for i, e := range es {
		out[i] = toKDBDeadLetter(e)
	}
	return map[string]any{"stream": d.stream, "total": n, "entries": out}, nil
}

func (d kdbDLQ) get(ctx context.Context, id string) (kdbDeadLetter, error) {
	es, err := d.eng.XRange(ctx, d.stream, id, id, 1)
	if err != nil {
		return kdbDeadLetter{}, err
	}
	if len(es) == 0 {
		return kdbDeadLetter{}, hub.Errorf(hub.NotFound, "kdbstream: no dead letter %s in %s", id, d.stream)
	}
	return toKDBDeadLetter(es[0]), nil
}

func (d kdbDLQ) Inspect(ctx context.Context, id string) (any, error) { return d.get(ctx, id) }

// Replay appends the original fields to the source stream as a new entry, then deletes
// the dead letter (at-least-once: a crash between the two leaves both, and R5's
// idempotency by event_id absorbs the duplicate).
func (d kdbDLQ) Replay(ctx context.Context, ids []string, all bool) (int, error) {
	if all {
		es, err := d.eng.XRange(ctx, d.stream, "-", "+", 0)
		if err != nil {
			return 0, err
		}
		ids = ids[:0]
		for _, e := range es {
			ids = append(ids, e.ID.String())
		}
	}
	n := 0
	var errs []error
	for _, id := range ids {
		dl, err := d.get(ctx, id)
		if err == nil && dl.SourceStream == "" {
			err = hub.Errorf(hub.FailedPrecondition, "kdbstream: dead letter %s has no %s field", id, streams.FieldSourceStream)
		}
		if err == nil {
			_, _, err = d.eng.XAdd(ctx, engine.Add{Stream: dl.SourceStream, Values: streams.OrderedFields(dl.Fields)})
		}
		if err == nil {
			_, err = d.eng.XDel(ctx, d.stream, id)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

func (d kdbDLQ) Purge(ctx context.Context, ids []string, all bool) (int, error) {
	if all {
		es, err := d.eng.XRange(ctx, d.stream, "-", "+", 0)
		if err != nil {
			return 0, err
		}
		ids = nil
		for _, e := range es {
			ids = append(ids, e.ID.String())
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	n, err := d.eng.XDel(ctx, d.stream, ids...)
	return int(n), err
}
