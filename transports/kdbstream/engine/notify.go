package engine

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// waiters wakes blocked XREADGROUPs when a stream gets new entries: one channel per
// stream, closed (broadcast) and replaced on every append.
type waiters struct {
	mu sync.Mutex
	ch map[string]chan struct{}
}

func newWaiters() *waiters { return &waiters{ch: map[string]chan struct{}{}} }

// wait returns a channel closed at the next append to stream. Take it before checking
// for entries, so an append between the check and the wait is not missed.
func (w *waiters) wait(stream string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := w.ch[stream]
	if !ok {
		c = make(chan struct{})
		w.ch[stream] = c
	}
	return c
}

func (w *waiters) notify(stream string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.ch[stream]; ok {
		close(c)
		delete(w.ch, stream)
	}
}

func (w *waiters) closeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, c := range w.ch {
		close(c)
		delete(w.ch, k)
	}
}

// listenPG relays NOTIFY kdbstream_<schema> '<stream>' (sent by appends in any process
// sharing the database) to the local waiters. It reconnects after errors; blocked reads
// also poll every PollInterval, so a gap while reconnecting costs latency, not entries.
func (e *Engine) listenPG(ctx context.Context, cc *pgx.ConnConfig, done chan struct{}) {
	defer close(done)
	for ctx.Err() == nil {
		conn, err := pgx.ConnectConfig(ctx, cc)
		if err == nil {
			_, err = conn.Exec(ctx, "LISTEN "+pgx.Identifier{e.notifyChannel()}.Sanitize())
			for err == nil {
				var n *pgconn.Notification
				n, err = conn.WaitForNotification(ctx)
				if err == nil {
					e.waiters.notify(n.Payload)
				}
			}
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			conn.Close(cctx)
			cancel()
		}
		select {
		case <-ctx.Done():
		case <-time.After(e.cfg.PollInterval):
		}
	}
}

func isNetErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne)
}
