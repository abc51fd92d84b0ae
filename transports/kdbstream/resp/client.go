package resp

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/tidwall/redcon"
)

// client is one connection's state. Its commands run on the connection's goroutine,
// one at a time; mu guards what other connections touch (CLIENT UNBLOCK, LIST).
type client struct {
	id      int64
	conn    redcon.Conn
	ctx     context.Context // ends with the connection or the server
	cancel  context.CancelFunc
	created time.Time
	buf     []byte // reply scratch

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

func newClient(s *Server, conn redcon.Conn) *client {
	ctx, cancel := context.WithCancel(s.ctx)
	return &client{id: s.nextID.Add(1), conn: conn, ctx: ctx, cancel: cancel, created: time.Now(),
		proto: 2, authed: !s.cfg.AuthRequired(), user: "default"}
}

// write sends one reply.
func (c *client) write(v any) {
	c.buf = appendReply(c.buf[:0], v, c.proto)
	c.conn.WriteRaw(c.buf)
}

// writeErr sends err as an error reply.
func (c *client) writeErr(err error) {
	c.buf = appendError(c.buf[:0], err.Error())
	c.conn.WriteRaw(c.buf)
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
