package resp

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"
)

// client is one connection's state. Its commands run on the connection's goroutine,
// one at a time; mu guards what other connections touch (CLIENT UNBLOCK, LIST).
type client struct {
	id      int64
	nc      net.Conn
	rd      *cmdReader
	ctx     context.Context // ends with the connection or the server
	cancel  context.CancelFunc
	created time.Time
	out     []byte // replies not written yet (flush)
	werr    error  // the first write error: the connection is gone

	proto  int // 2 or 3 (HELLO)
	authed bool
	quit   bool

	mu      sync.Mutex
	user    string
	name    string
	libName string
	libVer  string
	lastCmd string
	unblock context.CancelCauseFunc // set while a blocking command waits
}

// Causes of a blocking command's end by CLIENT UNBLOCK.
var (
	errUnblockTimeout = errors.New("unblocked as if timed out")
	errUnblockError   = errors.New("UNBLOCKED client unblocked via CLIENT UNBLOCK")
)

func newClient(s *Server, nc net.Conn) *client {
	ctx, cancel := context.WithCancel(s.ctx)
	return &client{id: s.nextID.Add(1), nc: nc, rd: newCmdReader(nc), ctx: ctx, cancel: cancel, created: time.Now(),
		proto: 2, authed: !s.cfg.AuthRequired(), user: "default"}
}

// write queues one reply (flush sends the queue).
func (c *client) write(v any) { c.out = appendReply(c.out, v, c.proto) }

// writeErr queues err as an error reply.
func (c *client) writeErr(err error) { c.out = appendError(c.out, err.Error()) }

// maxIdleOut is the reply buffer a connection keeps between commands; a larger one
// (a big XRANGE) is dropped after it is written.
const maxIdleOut = 64 * 1024

// flush writes the queued replies in one write.
func (c *client) flush() error {
	if len(c.out) > 0 && c.werr == nil {
		_, c.werr = c.nc.Write(c.out)
	}
	c.out = c.out[:0]
	if cap(c.out) > maxIdleOut {
		c.out = nil
	}
	return c.werr
}

// setBlocking records the cancel of the command now blocking (nil when it ends).
func (c *client) setBlocking(cancel context.CancelCauseFunc) {
	c.mu.Lock()
	c.unblock = cancel
	c.mu.Unlock()
}

// unblockWith ends the client's blocking command with cause; false if none waits.
func (c *client) unblockWith(cause error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.unblock == nil {
		return false
	}
	c.unblock(cause)
	return true
}
