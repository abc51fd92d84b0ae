// Package streams is the consumer loop of R4, written once over the Redis Streams
// command set so that the Redis transport and kdbstream (R9's drop-in successor) share
// one behaviour: group creation, batched group reads, ack after the handler, reclaim of
// idle pending entries, dead-lettering after the delivery limit, malformed entries to the
// DLQ at once.
//
// What users configure and name (ConsumerConfig, the stream and group naming rules, the
// dead-letter reasons) lives in the public package github.com/koder/eventhub/streams;
// this package holds the machinery behind it: Consumer, the Backend interface the two
// transports implement, and the dead-letter entry layout. Inside this package the
// qualifier streams. always means that public package. The transports import this one
// as streamloop, since they import both.
package streams

import (
	"context"
	"time"
)

// Entry is one stream entry as a group read or a claim returns it.
type Entry struct {
	ID     string            // "<ms>-<seq>"
	Values map[string]string // the flat fields (R2)
	// Deliveries is the entry's delivery count after this read or claim (XPENDING's
	// "times delivered"); 1 on a first read of a new entry.
	Deliveries int64
}

// Backend is the subset of the Redis Streams command set the consumer loop needs. The
// Redis transport implements it with go-redis, kdbstream with its SQL engine. Each method
// documents the Redis command it mirrors; an implementation must reproduce its replies.
type Backend interface {
	// CreateGroup mirrors XGROUP CREATE <stream> <group> <start> MKSTREAM. A group that
	// already exists is not an error.
	CreateGroup(ctx context.Context, stream, group, start string) error

	// ReadGroup mirrors XREADGROUP GROUP <group> <consumer> COUNT <count> BLOCK <block>
	// STREAMS <stream> <id>. id ">" reads new entries, "0" re-reads the consumer's own
	// pending entries. A block of 0 means do not block (unlike Redis, where BLOCK 0 waits
	// forever); an expired block returns no entries and no error. Cancelling ctx ends the
	// wait with ctx.Err(). When the stream or group no longer exists it may return an
	// error wrapping ErrNoGroup, which makes the consumer re-create the group.
	// Entries deleted while pending come back (id "0" reads) with nil Values.
	// Deliveries must be filled: 1 for ">" reads, the pending count for "0" reads.
	ReadGroup(ctx context.Context, stream, group, consumer, id string, count int, block time.Duration) ([]Entry, error)

	// Ack mirrors XACK <stream> <group> <id>...
	Ack(ctx context.Context, stream, group string, ids ...string) error

	// AutoClaim mirrors XAUTOCLAIM <stream> <group> <consumer> <minIdle> <cursor> COUNT
	// <count>, and fills each entry's Deliveries with its count after the claim. Entries
	// trimmed while pending are dropped from the pending list and not returned (Redis 7).
	// next is "0-0" when the scan wrapped around.
	AutoClaim(ctx context.Context, stream, group, consumer string, minIdle time.Duration, cursor string, count int) (next string, claimed []Entry, err error)

	// DeadLetter appends fields (flat key, value pairs) to dlqStream and acks id in
	// stream for group, atomically: either both happen or neither.
	DeadLetter(ctx context.Context, stream, group, id, dlqStream string, fields []string) error
}
