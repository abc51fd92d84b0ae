package redisstream

import (
	"context"

	"github.com/koder/eventhub/streams"
)

// ReplayAll replays every dead letter present when it starts (Replay, one by one,
// oldest first) and returns how many moved. Ids are collected page by page first
// (streams.DLQPage per XRANGE), so an entry that fails again and returns to the DLQ
// during the call is not replayed twice; an entry that cannot move is reported in the
// joined error and the rest still move.
func (d *DLQ) ReplayAll(ctx context.Context) (int, error) {
	return streams.ReplayAll(ctx, d.List, func(dl DeadLetter) string { return dl.ID }, d.Replay)
}

var _ streams.DLQ[DeadLetter] = (*DLQ)(nil)
