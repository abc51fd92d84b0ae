package engine

import (
	"context"
	"database/sql"
	"time"
)

// XReadGroup mirrors XREADGROUP GROUP <group> <consumer> [COUNT n] [BLOCK ms] [NOACK]
// STREAMS <key>... <id>... over any number of streams (ReadGroupRaw is the one-stream
// case the consumer loop uses). Every group must exist (NOGROUP names the first
// missing one). A stream read with an id (its history) is always in the reply, even
// empty; a ">" stream only when it delivered something. The call blocks (see
// ReadGroupRaw's block) only when every stream is ">" and none delivered; nil is
// Redis's nil reply. Unlike Redis, each stream is read in a transaction of its own:
// the reply is not one atomic snapshot across streams.
func (e *Engine) XReadGroup(ctx context.Context, grp, consumer string, keys, ids []string, count int64, block time.Duration, noack bool) ([]StreamEntries, error) {
	if len(keys) != len(ids) || len(keys) == 0 {
		return nil, errUnbalancedXReadGroup
	}
	history := false
	for _, id := range ids {
		if id == ">" {
			continue
		}
		if _, err := ParseStrictID(id); err != nil {
			return nil, err
		}
		history = true
	}
	if len(keys) == 1 {
		r, err := e.ReadGroupRaw(ctx, keys[0], grp, consumer, ids[0], count, block, noack)
		if err != nil || r.Nil {
			return nil, err
		}
		return []StreamEntries{{Stream: keys[0], Entries: r.Entries, Deliveries: r.Deliveries}}, nil
	}
	if err := e.inTx(ctx, func(tx *sql.Tx) error {
		for _, k := range keys {
			if _, _, err := e.lockGroup(ctx, tx, k, grp, "XREADGROUP with GROUP option"); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if history {
		block = -1 // served at once, as Redis serves a history read synchronously
	}
	return blockOn(ctx, e, keys, block, func() ([]StreamEntries, error) {
		var out []StreamEntries
		for i, k := range keys {
			r, err := e.ReadGroupRaw(ctx, k, grp, consumer, ids[i], count, -1, noack)
			if err != nil {
				return nil, err
			}
			if !r.Nil {
				out = append(out, StreamEntries{Stream: k, Entries: r.Entries, Deliveries: r.Deliveries})
			}
		}
		return out, nil
	})
}
