package redisstream

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	streamloop "github.com/koder/eventhub/internal/streams"
	"github.com/koder/eventhub/streams"
)

// Backend is streamloop.Backend on go-redis: the commands of R4, one per method. It is
// exported so the migration tooling and tests can drive a stream the way the consumer
// does.
type Backend struct {
	client  redis.UniversalClient
	blocker *blocker      // nil when the client cannot lend a dedicated connection
	nodes   *nodeBlockers // on Redis Cluster: a blocker per master node
}

// NewBackend returns the Backend over client (which it never closes).
func NewBackend(client redis.UniversalClient) *Backend {
	b := &Backend{client: client}
	if c, ok := client.(*redis.Client); ok {
		b.blocker = &blocker{client: c}
	}
	if c, ok := client.(*redis.ClusterClient); ok {
		b.nodes = &nodeBlockers{cluster: c}
	}
	return b
}

// CreateGroup runs XGROUP CREATE <stream> <group> <start> MKSTREAM; BUSYGROUP is success.
func (b *Backend) CreateGroup(ctx context.Context, stream, group, start string) error {
	err := b.client.XGroupCreateMkStream(ctx, stream, group, start).Err()
	if err != nil && redis.HasErrorPrefix(err, "BUSYGROUP") {
		return nil
	}
	return classify(err)
}

// ReadGroup runs XREADGROUP GROUP <group> <consumer> COUNT <count> [BLOCK <ms>]
// STREAMS <stream> <id>. For "0" reads (own pending entries) it adds one XPENDING to
// learn each entry's delivery count, which XREADGROUP does not return.
func (b *Backend) ReadGroup(ctx context.Context, stream, group, consumer, id string, count int, block time.Duration) ([]streamloop.Entry, error) {
	args := &redis.XReadGroupArgs{
		Group: group, Consumer: consumer, Streams: []string{stream, id},
		Count: int64(count), Block: -1, // go-redis: a negative Block omits BLOCK
	}
	var res []redis.XStream
	var err error
	if block > 0 && id == ">" {
		args.Block = block
		res, err = b.blockingRead(ctx, args)
	} else {
		res, err = b.client.XReadGroup(ctx, args).Result()
	}
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, readError(err)
	}
	if len(res) == 0 || len(res[0].Messages) == 0 {
		return nil, nil
	}
	entries := toEntries(res[0].Messages, 1)
	if id != ">" {
		if err := b.fillDeliveries(ctx, stream, group, consumer, entries); err != nil {
			return nil, err
		}
	}
	return entries, nil
}

// blockingRead runs a blocking XREADGROUP that ctx can interrupt. go-redis does not
// abort a command when its context is cancelled, so a plain call would hold Close for
// up to BLOCK (5 s) and leak the wait (go-redis#2556). Instead the read runs on a
// dedicated connection whose CLIENT ID is known, and cancellation sends CLIENT UNBLOCK
// for it: the read returns at once as if its block had expired.
func (b *Backend) blockingRead(ctx context.Context, args *redis.XReadGroupArgs) ([]redis.XStream, error) {
	bl := b.blockerFor(ctx, args.Streams[0])
	if bl == nil || bl.disabled.Load() {
		return b.client.XReadGroup(ctx, args).Result()
	}
	bc, err := bl.get(ctx)
	if err != nil {
		var rerr redis.Error
		if errors.As(err, &rerr) {
			// The server refused CLIENT ID (an ACL user without the connection commands):
			// read without the early cancellation rather than not at all.
			bl.disabled.Store(true)
			return b.client.XReadGroup(ctx, args).Result()
		}
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() {
		uctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
		defer cancel()
		bl.client.ClientUnblock(uctx, bc.id)
	})
	res, err := bc.conn.XReadGroup(context.WithoutCancel(ctx), args).Result()
	stop()
	bl.put(bc, err == nil || errors.Is(err, redis.Nil))
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil && b.nodes != nil && isRedirect(err) {
		// The slot moved while the read was routed by hand: the cluster client follows
		// the redirect and refreshes its slot map.
		return b.client.XReadGroup(ctx, args).Result()
	}
	return res, err
}

// fillDeliveries sets each entry's delivery count from XPENDING.
func (b *Backend) fillDeliveries(ctx context.Context, stream, group, consumer string, entries []streamloop.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	pend, err := b.client.XPendingExt(ctx, &redis.XPendingExtArgs{
		Stream: stream, Group: group, Consumer: consumer,
		Start: entries[0].ID, End: entries[len(entries)-1].ID, Count: int64(len(entries)),
	}).Result()
	if err != nil {
		return classify(err)
	}
	counts := make(map[string]int64, len(pend))
	for _, p := range pend {
		counts[p.ID] = p.RetryCount
	}
	for i := range entries {
		if n, ok := counts[entries[i].ID]; ok {
			entries[i].Deliveries = n
		}
	}
	return nil
}

// Ack runs XACK <stream> <group> <id>...
func (b *Backend) Ack(ctx context.Context, stream, group string, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	return classify(b.client.XAck(ctx, stream, group, ids...).Err())
}

// AutoClaim runs XAUTOCLAIM <stream> <group> <consumer> <minIdle> <cursor> COUNT
// <count>, then one XPENDING for the claimed range to fill the delivery counts.
func (b *Backend) AutoClaim(ctx context.Context, stream, group, consumer string, minIdle time.Duration, cursor string, count int) (string, []streamloop.Entry, error) {
	msgs, next, err := b.client.XAutoClaim(ctx, &redis.XAutoClaimArgs{
		Stream: stream, Group: group, Consumer: consumer, MinIdle: minIdle, Start: cursor, Count: int64(count),
	}).Result()
	if err != nil {
		return "", nil, readError(err)
	}
	entries := toEntries(msgs, 0)
	if err := b.fillDeliveries(ctx, stream, group, consumer, entries); err != nil {
		return "", nil, err
	}
	return next, entries, nil
}

// deadLetterScript is streams.DeadLetterScript: the dead-letter move in one atomic step.
var deadLetterScript = redis.NewScript(streams.DeadLetterScript)

// DeadLetter appends fields to dlqStream and acks id in stream for group, atomically.
func (b *Backend) DeadLetter(ctx context.Context, stream, group, id, dlqStream string, fields []string) error {
	args := make([]any, 0, 2+len(fields))
	args = append(args, group, id)
	for _, f := range fields {
		args = append(args, f)
	}
	return classify(deadLetterScript.Run(ctx, b.client, []string{stream, dlqStream}, args...).Err())
}

func toEntries(msgs []redis.XMessage, deliveries int64) []streamloop.Entry {
	entries := make([]streamloop.Entry, len(msgs))
	for i, m := range msgs {
		entries[i] = streamloop.Entry{ID: m.ID, Deliveries: deliveries}
		if m.Values != nil {
			vals := make(map[string]string, len(m.Values))
			for k, v := range m.Values {
				s, _ := v.(string)
				vals[k] = s
			}
			entries[i].Values = vals
		}
	}
	return entries
}

var _ streamloop.Backend = (*Backend)(nil)
