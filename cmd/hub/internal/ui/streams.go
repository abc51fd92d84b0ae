package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// The live tail: Server-Sent Events of the events this replica's hub accepts, as they
// are published (an in-process subscription, hub.SubscribePattern), filtered by a type
// pattern and a tenant. The hub runs subscribers in the publishing goroutine, so the
// tail never blocks it: events go into a small buffer, and when a slow browser lets
// the buffer fill, further events are dropped and counted (the page shows how many)
// rather than slowing the publishers. Pausing is the browser's: it stops drawing and
// keeps what arrives for when it resumes.

const (
	// tailBuffer is how many events wait for a slow browser before drops begin.
	tailBuffer = 256
	// tailHeartbeat keeps proxies from closing an idle stream.
	tailHeartbeat = 15 * time.Second
	// MaxTails bounds the live tails open at once on a replica (each is a
	// subscription on the hub's publish path); one more is 503.
	MaxTails = 32
	// tailMaxAge ends a stream after this long; EventSource reconnects by itself, and
	// the bound keeps a forgotten tab from holding a subscription for days.
	tailMaxAge = 30 * time.Minute
)

type streamsData struct {
	Pattern, Tenant string
}

func (c *Console) streams(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	pattern := q.Get("pattern")
	if pattern == "" {
		pattern = "#"
	}
	c.render(w, r, http.StatusOK, "streams", &page{Title: "Live tail", Nav: "streams", Data: streamsData{Pattern: pattern, Tenant: q.Get("tenant")}})
}

// tailEvent is one SSE message: the event and how many were dropped before it.
type tailEvent struct {
	Event   *cloudevent.Event `json:"event"`
	Dropped int64             `json:"dropped,omitempty"`
}

func (c *Console) streamEvents(w http.ResponseWriter, r *http.Request) {
	if c.cfg.Hub == nil {
		c.fail(w, r, nil, hub.Errorf(hub.NotFound, "no hub to tail"))
		return
	}
	q := r.URL.Query()
	pattern := q.Get("pattern")
	if pattern == "" {
		pattern = "#"
	}
	pat, err := hub.CompilePattern(pattern)
	if err != nil {
		c.fail(w, r, nil, hub.Errorf(hub.InvalidArgument, "pattern %q: %v", pattern, err))
		return
	}
	select {
	case c.tails <- struct{}{}:
		defer func() { <-c.tails }()
	default:
		w.Header().Set("Retry-After", "10")
		c.fail(w, r, nil, hub.Errorf(hub.Unavailable, "too many live tails are open on this replica; close one"))
		return
	}
	tenant := q.Get("tenant")
	events := make(chan *cloudevent.Event, tailBuffer)
	var dropped atomic.Int64
	cancel := c.cfg.Hub.SubscribePattern(pat, func(_ context.Context, ev *cloudevent.Event) error {
		if tenant != "" && ev.TenantID() != tenant {
			return nil
		}
		select {
		case events <- ev:
		default:
			dropped.Add(1)
		}
		return nil
	})
	defer cancel()

	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n: tail of "+pattern+"\n\n")
	_ = rc.Flush()

	beat := time.NewTicker(tailHeartbeat)
	defer beat.Stop()
	end := time.NewTimer(tailMaxAge)
	defer end.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-c.ctx.Done():
			return
		case <-end.C:
			return
		case <-beat.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case ev := <-events:
			b, err := json.Marshal(tailEvent{Event: ev, Dropped: dropped.Swap(0)})
			if err != nil {
				continue
			}
			fmt.Fprintf(w, "event: ce\ndata: %s\n\n", b)
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}
