package engine

import (
	"context"
	"database/sql"
	"time"

	"github.com/koder/eventhub/internal/streams"
)

// The streams.Backend methods: the shared R4 consumer loop runs on these exactly as it
// runs on go-redis.

// CreateGroup is XGROUP CREATE ... MKSTREAM; an existing group is not an error.
func (e *Engine) CreateGroup(ctx context.Context, stream, grp, start string) error {
	err := e.GroupCreate(ctx, stream, grp, start, true, -1)
	if IsBusyGroup(err) {
		return nil
	}
	return err
}

// ReadGroup is XREADGROUP; block 0 does not block (streams.Backend's rule).
func (e *Engine) ReadGroup(ctx context.Context, stream, grp, consumer, id string, count int, block time.Duration) ([]streams.Entry, error) {
	if block <= 0 {
		block = -1
	}
	res, err := e.ReadGroupRaw(ctx, stream, grp, consumer, id, int64(count), block, false)
	if err != nil || res.Nil {
		return nil, err
	}
	out := make([]streams.Entry, 0, len(res.Entries))
	for i, en := range res.Entries {
		out = append(out, streams.Entry{ID: en.ID.String(), Values: valuesMap(en.Fields), Deliveries: res.Deliveries[i]})
	}
	return out, nil
}

// Ack is XACK.
func (e *Engine) Ack(ctx context.Context, stream, grp string, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := e.XAck(ctx, stream, grp, ids...)
	return err
}

// AutoClaim is XAUTOCLAIM.
func (e *Engine) AutoClaim(ctx context.Context, stream, grp, consumer string, minIdle time.Duration, cursor string, count int) (string, []streams.Entry, error) {
	if cursor == "" {
		cursor = "0-0"
	}
	r, err := e.XAutoClaim(ctx, stream, grp, consumer, minIdle, cursor, int64(count), false)
	if err != nil {
		return "", nil, err
	}
	out := make([]streams.Entry, 0, len(r.Claimed))
	for _, c := range r.Claimed {
		out = append(out, streams.Entry{ID: c.ID.String(), Values: valuesMap(c.Fields), Deliveries: c.Deliveries})
	}
	return r.Next.String(), out, nil
}

// DeadLetter appends fields to dlqStream and acks id in stream, in one transaction.
func (e *Engine) DeadLetter(ctx context.Context, src, grp, id, dlqStream string, fields []string) error {
	_, err := e.DeadLetterID(ctx, src, grp, id, dlqStream, fields)
	return err
}

// DeadLetterID is DeadLetter returning the dead letter's id (the reply of the Redis
// transport's dead-letter script, which the Redis protocol front runs for it).
func (e *Engine) DeadLetterID(ctx context.Context, src, grp, id, dlqStream string, fields []string) (ID, error) {
	pid, err := ParseStrictID(id)
	if err != nil {
		return ID{}, err
	}
	if len(fields) == 0 || len(fields)%2 != 0 {
		return ID{}, errWrongArgs("xadd")
	}
	var nid ID
	err = e.inTxLockingOpen(ctx, func(tx *sql.Tx, noWait bool) error {
		locked, err := e.lockPair(ctx, tx, src, dlqStream, false, true, noWait)
		if err != nil {
			return err
		}
		d := locked[dlqStream]
		if nid, err = e.appendOne(ctx, tx, d, fields); err != nil {
			return err
		}
		if err := e.d.saveAppended(ctx, tx, d); err != nil {
			return err
		}
		if s := locked[src]; s != nil {
			_, err = e.deletePending(ctx, tx, s.sid, grp, []ID{pid})
		}
		return err
	})
	if err == nil {
		e.waiters.notify(dlqStream)
	}
	return nid, err
}

func valuesMap(f []string) map[string]string {
	if f == nil {
		return nil
	}
	m := make(map[string]string, len(f)/2)
	for i := 0; i+1 < len(f); i += 2 {
		m[f[i]] = f[i+1]
	}
	return m
}

var _ streams.Backend = (*Engine)(nil)
