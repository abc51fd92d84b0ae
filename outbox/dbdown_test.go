package outbox_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
	"github.com/koder/eventhub/outbox"
)

// cutProxy is a loopback TCP proxy to PostgreSQL that can cut every connection and
// refuse new ones: the database "goes down" for this test only, while the shared
// server keeps serving every other test.
type cutProxy struct {
	ln       net.Listener
	upstream string
	mu       sync.Mutex
	down     bool
	conns    map[net.Conn]struct{}
	wg       sync.WaitGroup
}

func newCutProxy(t *testing.T, upstream string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, upstream: upstream, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.setDown(true)
		p.wg.Wait()
	})
	return p
}

func (p *cutProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			c.Close()
			continue
		}
		up, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
		if err != nil || !p.track(up) {
			c.Close()
			if up != nil {
				up.Close()
			}
			continue
		}
		p.wg.Add(2)
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

func (p *cutProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *cutProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
}

// setDown cuts every open connection and refuses new ones (true), or lets them in again.
func (p *cutProxy) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

// TestO1_DatabaseUnreachable: while the database is unreachable Enqueue and EnqueueTx
// fail (Unavailable) instead of losing events; when it returns, enqueueing works again
// and the relay delivers every stored event.
func TestO1_DatabaseUnreachable(t *testing.T) {
	t.Parallel()
	cfg := ledgertest.Config(t, ledger.Postgres, ledger.Config{MaxConns: 4})
	u, err := url.Parse(cfg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCutProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	q := u.Query()
	q.Set("connect_timeout", "2")
	u.RawQuery = q.Encode()
	cfg.DSN = u.String()
	ctx := testenv.Context(t, 90*time.Second)
	l, err := ledger.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	dest := newSink()
	o, err := outbox.New(l, fastRetry, outbox.MapLookup(map[string]hub.Transport{"sink": dest}))
	if err != nil {
		t.Fatal(err)
	}
	start(t, l)

	before := events(t, 5)
	if err := o.Enqueue(ctx, items(before, "sink")); err != nil {
		t.Fatal(err)
	}
	dest.waitUntil(t, "events before the outage", func(d, _, _ int) bool { return d == 5 })

	tx, err := l.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	proxy.setDown(true)
	err = o.EnqueueTx(ctx, tx, items(events(t, 1), "sink"))
	if err == nil {
		t.Fatal("EnqueueTx succeeded with the database unreachable")
	}
	_ = tx.Rollback()
	if c := hub.Code(err); c != hub.Unavailable {
		t.Errorf("EnqueueTx while down: code %s (%v), want Unavailable", c, err)
	}
	downCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = o.Enqueue(downCtx, items(events(t, 1), "sink"))
	cancel()
	if err == nil {
		t.Fatal("Enqueue succeeded with the database unreachable")
	}
	if c := hub.Code(err); c != hub.Unavailable && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Enqueue while down: code %s (%v), want Unavailable", c, err)
	}

	proxy.setDown(false)
	after := events(t, 5)
	testenv.WaitFor(t, 20*time.Second, "enqueue after the database returns", func() bool {
		return o.Enqueue(ctx, items(after, "sink")) == nil
	})
	dest.waitUntil(t, "every stored event after the outage", func(d, _, _ int) bool { return d == 10 })
	for _, ev := range append(before, after...) {
		if dest.deliveries(ev.ID) == 0 {
			t.Fatalf("event %s never delivered", ev.ID)
		}
	}
}
