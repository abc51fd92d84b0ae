package ingress

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/dedupe"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
	"github.com/koder/eventhub/outbox"
)

// failingOutbox is the dedupe-wrapped outbox of the binary with a forced failure: an
// Enqueue holding an event of type test.fail stores nothing and fails, as a commit
// that the database refused. It counts the Enqueue calls, which shows the grouping.
type failingOutbox struct {
	inner hub.Outbox
	mu    sync.Mutex
	calls []int // items per Enqueue
}

func (o *failingOutbox) Enqueue(ctx context.Context, items []hub.OutboxItem) error {
	o.mu.Lock()
	o.calls = append(o.calls, len(items))
	o.mu.Unlock()
	for _, it := range items {
		if it.Event.Type == "test.fail" {
			return hub.Errorf(hub.Unavailable, "forced: the commit failed")
		}
	}
	return o.inner.Enqueue(ctx, items)
}

func (o *failingOutbox) EnqueueTx(ctx context.Context, tx any, items []hub.OutboxItem) error {
	return o.inner.EnqueueTx(ctx, tx, items)
}

func (o *failingOutbox) takeCalls() []int {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.calls
	o.calls = nil
	return c
}

type groupBundle struct {
	l       *ledger.Ledger
	outbox  *failingOutbox
	handler *Handler
}

// setupGroup builds the binary's intake on backend b: the ledger's dedupe window, the
// outbox through dedupe.WrapOutbox (no relay: counting rows counts what was stored),
// an outbox route, and a handler whose Group waits up to 10 s for size requests, so
// each phase of a test is exactly one group.
func setupGroup(t *testing.T, b ledger.Backend, size int) *groupBundle {
	t.Helper()
	ctx := testenv.Context(t, 30*time.Second)
	l := ledgertest.Open(t, b, ledger.Config{})
	d, err := dedupe.Open(ctx, l, dedupe.Config{PruneInterval: -1, OutboxOnly: true, Logger: testenv.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	ob, err := outbox.New(l, outbox.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fo := &failingOutbox{inner: dedupe.WrapOutbox(ob)}
	h, err := hub.New(hub.WithOutbox(fo), hub.WithLogger(testenv.Logger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if err := h.Forward("#", nopTransport{}, hub.WithName("dest"), hub.WithDelivery(hub.OutboxMode)); err != nil {
		t.Fatal(err)
	}
	g := newGroup(GroupConfig{Window: 10 * time.Second, MaxRequests: size, Committers: 1})
	t.Cleanup(g.Close)
	return &groupBundle{l: l, outbox: fo, handler: &Handler{Publisher: h, Deduper: d, DedupeWindow: time.Hour, Group: g}}
}

// postAll posts the bodies at once and returns each answer's status, in order.
func (b *groupBundle) postAll(bodies []string) []int {
	codes := make([]int, len(bodies))
	var wg sync.WaitGroup
	for i, body := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := httptest.NewRequest(http.MethodPost, "/events", strings.NewReader(body))
			r.Header.Set("Content-Type", ContentTypeStructured)
			w := httptest.NewRecorder()
			b.handler.ServeHTTP(w, r)
			codes[i] = w.Code
		}()
	}
	wg.Wait()
	return codes
}

func (b *groupBundle) rows(t *testing.T) int {
	t.Helper()
	var n int
	q := "SELECT count(*) FROM " + b.l.Table("river_job") + " WHERE kind = '" + outbox.Kind + "'"
	if err := b.l.DB().QueryRowContext(testenv.Context(t, 10*time.Second), q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func groupEvent(id, typ, data string) string {
	return fmt.Sprintf(`{"specversion":"1.0","id":%q,"source":"/test","type":%q,"tenantid":"acme","data":{"v":%q}}`, id, typ, data)
}

// TestTP_GroupCommit: concurrent requests are published together, one Enqueue (one
// transaction) for the group, each answered after it; a failed commit fails exactly
// the requests of its group and stores nothing of them (O1: the client is told, and a
// retry is accepted as new, not as a duplicate); an id reused with other content
// fails only its own request (409), its neighbours are stored.
func TestTP_GroupCommit(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, be ledger.Backend) {
		const size = 4
		b := setupGroup(t, be, size)
		id := func(i int) string { return cloudevent.NewID() + fmt.Sprint(i) }

		// A group with a failing commit: every request of it fails, nothing is stored.
		var failing []string
		for i := range size - 1 {
			failing = append(failing, groupEvent(id(i), "test.ok", "a"))
		}
		failing = append(failing, groupEvent(id(9), "test.fail", "a"))
		for i, code := range b.postAll(failing) {
			if code != http.StatusServiceUnavailable {
				t.Errorf("failed group: request %d answered %d, want 503", i, code)
			}
		}
		if calls := b.outbox.takeCalls(); len(calls) != 1 || calls[0] != size {
			t.Fatalf("failed group: Enqueue calls %v, want one of %d items", calls, size)
		}
		if n := b.rows(t); n != 0 {
			t.Fatalf("failed group stored %d rows, want 0", n)
		}

		// The same events again, without the failing one: one Enqueue, all stored, none
		// a duplicate (the failed group recorded no id).
		ok := append(append([]string{}, failing[:size-1]...), groupEvent(id(10), "test.ok", "a"))
		for i, code := range b.postAll(ok) {
			if code != http.StatusAccepted {
				t.Errorf("group: request %d answered %d, want 202", i, code)
			}
		}
		if calls := b.outbox.takeCalls(); len(calls) != 1 || calls[0] != size {
			t.Fatalf("group: Enqueue calls %v, want one of %d items", calls, size)
		}
		if n := b.rows(t); n != size {
			t.Fatalf("group stored %d rows, want %d", n, size)
		}

		// One request reuses an id with other content: it alone is refused.
		var mixed []string
		for i := range size - 1 {
			mixed = append(mixed, groupEvent(id(20+i), "test.ok", "b"))
		}
		reused := strings.Replace(ok[0], `"v":"a"`, `"v":"other"`, 1)
		mixed = append(mixed, reused)
		codes := b.postAll(mixed)
		for i, code := range codes[:size-1] {
			if code != http.StatusAccepted {
				t.Errorf("mixed group: request %d answered %d, want 202", i, code)
			}
		}
		if codes[size-1] != http.StatusConflict {
			t.Errorf("mixed group: the reused id answered %d, want 409", codes[size-1])
		}
		if n := b.rows(t); n != 2*size-1 {
			t.Fatalf("after the mixed group %d rows, want %d", n, 2*size-1)
		}
	})
}
