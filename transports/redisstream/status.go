package redisstream

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/streams"
)

// ReadStatus reads a stream's length and its groups (XLEN, XINFO GROUPS) in one round
// trip. A stream that does not exist has length 0 and no group: EXISTS, sent in the
// same pipeline, tells that case apart, so no error reply needs interpreting.
func ReadStatus(ctx context.Context, client redis.UniversalClient, stream string) (streams.StreamStatus, error) {
	pipe := client.Pipeline()
	exists := pipe.Exists(ctx, stream)
	length := pipe.XLen(ctx, stream)
	groups := pipe.XInfoGroups(ctx, stream)
	_, _ = pipe.Exec(ctx) // each command carries its own error
	st := streams.StreamStatus{Stream: stream}
	if err := exists.Err(); err != nil {
		return st, classify(err)
	}
	if err := length.Err(); err != nil {
		return st, classify(err)
	}
	st.Length = length.Val()
	if exists.Val() == 0 {
		return st, nil // XINFO GROUPS failed for the missing key: no group to report
	}
	if err := groups.Err(); err != nil {
		return st, classify(err)
	}
	for _, g := range groups.Val() {
		st.Groups = append(st.Groups, streams.GroupStatus{Name: g.Name, Consumers: g.Consumers, Pending: g.Pending, Lag: g.Lag, LastDeliveredID: g.LastDeliveredID})
	}
	return st, nil
}

// Status reports the transport's stream (ReadStatus). It is nil when the transport has
// no single stream: category naming and a Namer pick one per event.
func (t *Transport) Status(ctx context.Context) (*streams.StreamStatus, error) {
	return streams.FixedStatus(ctx, t.cfg.selection().FixedStream(), func(ctx context.Context, stream string) (streams.StreamStatus, error) {
		return ReadStatus(ctx, t.client, stream)
	})
}

// DLQ operates the dead-letter stream of the transport's stream ("<stream>:dlq", or
// events.dlq under category naming), where consumers of that stream give up on entries.
// It is nil when the transport's streams are a Namer's own, and on Redis Cluster when
// they are per-category (each has its own dead-letter stream there: ClusterDLQStreamFor).
func (t *Transport) DLQ() *DLQ {
	dlq := t.cfg.selection().DLQStream()
	if IsCluster(t.client) {
		dlq = ""
		if fixed := t.cfg.selection().FixedStream(); fixed != "" {
			dlq = ClusterDLQStreamFor(fixed)
		}
	}
	if dlq == "" {
		return nil
	}
	return NewDLQ(t.client, dlq)
}
