package engine

import (
	"errors"
	"net"
	"sync"
)

// waiters wakes blocked XREADGROUPs when a stream gets new entries: one channel per
// stream, closed (broadcast) and replaced on every append. The engine notifies after
// each commit in this process; PostgreSQL's listener relays other processes' appends
// (dialect_postgres_listen.go).
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

// waitAny is wait for each stream, in one lock.
func (w *waiters) waitAny(streams []string) []<-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]<-chan struct{}, len(streams))
	for i, s := range streams {
		c, ok := w.ch[s]
		if !ok {
			c = make(chan struct{})
			w.ch[s] = c
		}
		out[i] = c
	}
	return out
}

func (w *waiters) notify(stream string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.ch[stream]; ok {
		close(c)
		delete(w.ch, stream)
	}
}

// wakeAll wakes every blocked read (each looks again): at Close, and when
// PostgreSQL's LISTEN connection is (re)established, since NOTIFYs sent while it was
// down are lost.
func (w *waiters) wakeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, c := range w.ch {
		close(c)
		delete(w.ch, k)
	}
}

func isNetErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne)
}
