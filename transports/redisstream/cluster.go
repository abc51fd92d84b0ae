package redisstream

import (
	"context"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
)

// Redis Cluster runs a Lua script only when all its keys live in one hash slot, and
// the dead-letter move (streams.DeadLetterScript) and the replay
// (streams.ReplayScript) each touch a stream and its dead-letter stream. Without a
// hash tag "koder:events:id" and "koder:events:id:dlq" hash to different slots, so on a
// cluster the dead-letter stream's default name wraps the stream's name in braces:
// "{koder:events:id}:dlq" hashes exactly the characters "koder:events:id" hashes, which
// puts it in the stream's slot while the stream keeps its R1 name. A stream that has a
// hash tag of its own ("orders:{eu}") keeps the usual "<stream>:dlq", which shares that
// tag. Per-category streams (E8) get one dead-letter stream each on a cluster for the
// same reason: a single events.dlq cannot share a slot with every events.<category>.

// ClusterDLQStreamFor is the dead-letter stream of stream on Redis Cluster: in stream's
// hash slot (see above), "{<stream>}:dlq" unless stream has a hash tag of its own.
func ClusterDLQStreamFor(stream string) string {
	if hashTag(stream) != stream {
		return stream + streams.DLQSuffix
	}
	return "{" + stream + "}" + streams.DLQSuffix
}

// DLQStreamFor is the default dead-letter stream of stream on client:
// ClusterDLQStreamFor on a *redis.ClusterClient, streams.DLQStreamFor otherwise.
func DLQStreamFor(client redis.UniversalClient, stream string) string {
	if IsCluster(client) {
		return ClusterDLQStreamFor(stream)
	}
	return streams.DLQStreamFor(stream)
}

// IsCluster reports whether client talks to a Redis Cluster.
func IsCluster(client redis.UniversalClient) bool {
	_, ok := client.(*redis.ClusterClient)
	return ok
}

// checkSameSlot refuses, on a cluster client, a stream and dead-letter stream that
// hash to different slots: every dead-letter move would fail with CROSSSLOT, at run
// time and only for the entries that fail, so the mistake is caught at construction.
func checkSameSlot(client redis.UniversalClient, stream, dlq string) error {
	if !IsCluster(client) || stream == "" || dlq == "" || KeySlot(stream) == KeySlot(dlq) {
		return nil
	}
	return hub.Errorf(hub.InvalidArgument,
		"redisstream: on Redis Cluster the stream %q (slot %d) and its dead-letter stream %q (slot %d) must share a hash slot: leave dlq_stream empty (default %q) or give both the same {hash tag}",
		stream, KeySlot(stream), dlq, KeySlot(dlq), ClusterDLQStreamFor(stream))
}

// KeySlot is the Redis Cluster hash slot of key (CRC16 of its hash tag, mod 16384),
// the value CLUSTER KEYSLOT returns.
func KeySlot(key string) int {
	return int(crc16(hashTag(key)) % 16384)
}

// hashTag is the part of key Redis Cluster hashes: the text between the first '{' and
// the next '}' when it is not empty, the whole key otherwise.
func hashTag(key string) string {
	_, after, ok := strings.Cut(key, "{")
	if !ok {
		return key
	}
	tag, _, ok := strings.Cut(after, "}")
	if !ok || tag == "" {
		return key
	}
	return tag
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial 0), Redis Cluster's key hash.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// nodeBlockers lends blocking-read connections on Redis Cluster: one blocker per master
// node, found by the stream's slot, so a consumer's Close interrupts its read there
// (CLIENT UNBLOCK is per node) as it does on one server.
type nodeBlockers struct {
	cluster *redis.ClusterClient
	mu      sync.Mutex
	byAddr  map[string]*blocker
}

// blockerFor returns the blocker of the node serving stream, nil when it is not known
// (the read then goes through the cluster client, without early cancellation).
func (b *Backend) blockerFor(ctx context.Context, stream string) *blocker {
	if b.nodes == nil {
		return b.blocker
	}
	node, err := b.nodes.cluster.MasterForKey(ctx, stream)
	if err != nil {
		return nil
	}
	addr := node.Options().Addr
	b.nodes.mu.Lock()
	defer b.nodes.mu.Unlock()
	bl, ok := b.nodes.byAddr[addr]
	if !ok || bl.client != node {
		bl.close() // the node's client was replaced after a topology change
		bl = &blocker{client: node}
		if b.nodes.byAddr == nil {
			b.nodes.byAddr = map[string]*blocker{}
		}
		b.nodes.byAddr[addr] = bl
	}
	return bl
}

// closeBlockers releases the dedicated read connections.
func (b *Backend) closeBlockers() {
	b.blocker.close()
	if b.nodes == nil {
		return
	}
	b.nodes.mu.Lock()
	defer b.nodes.mu.Unlock()
	for addr, bl := range b.nodes.byAddr {
		bl.close()
		delete(b.nodes.byAddr, addr)
	}
}

// isRedirect reports a cluster redirection reply (MOVED, ASK).
func isRedirect(err error) bool {
	return redis.HasErrorPrefix(err, "MOVED") || redis.HasErrorPrefix(err, "ASK")
}
