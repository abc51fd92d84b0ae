package redisstream

import (
	"context"
	"errors"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
)

// DeadLetter is one entry of a dead-letter stream, split into the original entry and
// the metadata the consumer added when it gave up (R4.6, E6); kdbstream's DLQ answers
// the same type.
type DeadLetter = streams.DeadLetter

// DLQ operates one dead-letter stream (W3): list, inspect, replay, purge. The admin API
// and the CLI call these; they are plain stream commands, so redis-cli works too.
type DLQ struct {
	client redis.UniversalClient
	stream string
}

// NewDLQ returns the operations on dlqStream ("<stream>:dlq", or "events.dlq").
func NewDLQ(client redis.UniversalClient, dlqStream string) *DLQ {
	return &DLQ{client: client, stream: dlqStream}
}

// Stream returns the dead-letter stream's key.
func (d *DLQ) Stream() string { return d.stream }

// Len returns the number of dead letters.
func (d *DLQ) Len(ctx context.Context) (int64, error) {
	n, err := d.client.XLen(ctx, d.stream).Result()
	return n, classify(err)
}

// List returns up to count dead letters after the entry id after ("" for the oldest
// first), oldest first; page by passing the last ID back. count <= 0 means 100
// (streams.DefaultDLQList).
func (d *DLQ) List(ctx context.Context, after string, count int64) ([]DeadLetter, error) {
	start, count := streams.ListRange(after, count)
	msgs, err := d.client.XRangeN(ctx, d.stream, start, "+", count).Result()
	if err != nil {
		return nil, classify(err)
	}
	out := make([]DeadLetter, len(msgs))
	for i, m := range msgs {
		out[i] = toDeadLetter(m)
	}
	return out, nil
}

// Get returns one dead letter; a missing id is NotFound.
func (d *DLQ) Get(ctx context.Context, id string) (DeadLetter, error) {
	msgs, err := d.client.XRange(ctx, d.stream, id, id).Result()
	if err != nil {
		return DeadLetter{}, classify(err)
	}
	if len(msgs) == 0 {
		return DeadLetter{}, hub.Errorf(hub.NotFound, "redisstream: no dead letter %s in %s", id, d.stream)
	}
	return toDeadLetter(msgs[0]), nil
}

// replayScript is streams.ReplayScript: a replay in one atomic step.
var replayScript = redis.NewScript(streams.ReplayScript)

// Replay appends the dead letter's original fields to its source stream as a new entry
// (a new delivery: every group of that stream sees it, and R5's idempotency by
// event_id keeps groups that had handled it from acting twice), then deletes it from
// the DLQ. It returns the new entry's id; a missing dead letter is NotFound.
func (d *DLQ) Replay(ctx context.Context, id string) (string, error) {
	dl, err := d.Get(ctx, id)
	if err != nil {
		return "", err
	}
	if dl.SourceStream == "" {
		return "", hub.Errorf(hub.FailedPrecondition, "redisstream: dead letter %s has no %s field", id, streams.FieldSourceStream)
	}
	args := make([]any, 0, 2+2*len(dl.Fields))
	// The source stream's default cap: none for a per-category stream (E8 trims by age).
	maxLen, _ := streams.Retention{}.For(dl.SourceStream)
	args = append(args, id, strconv.FormatInt(maxLen, 10))
	for _, f := range streams.OrderedFields(dl.Fields) {
		args = append(args, f)
	}
	newID, err := replayScript.Run(ctx, d.client, []string{d.stream, dl.SourceStream}, args...).Text()
	if errors.Is(err, redis.Nil) {
		return "", hub.Errorf(hub.NotFound, "redisstream: dead letter %s was removed concurrently", id)
	}
	return newID, classify(err)
}

// Purge deletes the given dead letters, or the whole dead-letter stream when no id is
// given, and returns how many entries went.
func (d *DLQ) Purge(ctx context.Context, ids ...string) (int64, error) {
	if len(ids) > 0 {
		n, err := d.client.XDel(ctx, d.stream, ids...).Result()
		return n, classify(err)
	}
	n, err := d.client.XLen(ctx, d.stream).Result()
	if err != nil {
		return 0, classify(err)
	}
	return n, classify(d.client.Del(ctx, d.stream).Err())
}

func toDeadLetter(m redis.XMessage) DeadLetter {
	return streams.ParseDeadLetter(m.ID, toEntries([]redis.XMessage{m}, 0)[0].Values)
}
