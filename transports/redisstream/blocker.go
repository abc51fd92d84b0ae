package redisstream

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// ioTimeout bounds the small housekeeping commands sent outside a caller's context
// (CLIENT UNBLOCK, the durability check).
const ioTimeout = 5 * time.Second

// maxIdleBlockConns caps the dedicated connections kept for blocking reads.
const maxIdleBlockConns = 8

// blocker lends dedicated connections, each with its CLIENT ID, for blocking reads that
// must be interruptible (see Backend.blockingRead).
type blocker struct {
	client   *redis.Client
	disabled atomic.Bool // set when the server refuses CLIENT ID
	mu       sync.Mutex
	idle     []*blockConn
}

type blockConn struct {
	conn *redis.Conn
	id   int64
}

func (b *blocker) get(ctx context.Context) (*blockConn, error) {
	b.mu.Lock()
	if n := len(b.idle); n > 0 {
		bc := b.idle[n-1]
		b.idle = b.idle[:n-1]
		b.mu.Unlock()
		return bc, nil
	}
	b.mu.Unlock()
	conn := b.client.Conn()
	id, err := conn.ClientID(ctx).Result()
	if err != nil {
		_ = conn.Close()
		return nil, readError(err)
	}
	return &blockConn{conn: conn, id: id}, nil
}

// put returns a healthy connection for reuse and closes a failed one (after a network
// error its state is unknown).
func (b *blocker) put(bc *blockConn, healthy bool) {
	if healthy {
		b.mu.Lock()
		if len(b.idle) < maxIdleBlockConns {
			b.idle = append(b.idle, bc)
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
	}
	_ = bc.conn.Close()
}

// close releases the idle connections back to the client's pool.
func (b *blocker) close() {
	if b == nil {
		return
	}
	b.mu.Lock()
	idle := b.idle
	b.idle = nil
	b.mu.Unlock()
	for _, bc := range idle {
		_ = bc.conn.Close()
	}
}
