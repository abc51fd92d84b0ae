package hub

import (
	"container/list"
	"context"
	"crypto/sha256"
	"sync"
	"time"
)

// MemoryEventDeduper is an in-process EventDeduper: the window lives in a map bounded to
// max entries. Its limits, by design: it forgets everything on restart, it sees only the
// requests of its own process (not those of other replicas), and when full it forgets the
// oldest accepted ids first, so a retry of one of those is accepted again (at-least-once,
// never a loss). Use a store-backed deduper (package dedupe) where the window must
// survive a restart.
//
// A request admitting an id holds it while it publishes: a concurrent request with the
// same id waits for the outcome, then is a Duplicate (or Conflict) if it succeeded, or
// is judged afresh if it failed. So two concurrent identical requests publish once.
type MemoryEventDeduper struct {
	mu    sync.Mutex
	max   int
	now   func() time.Time
	items map[tenantID]*list.Element // of *dedupeEntry
	order *list.List                 // accepted entries, oldest first; pending ones are not in it
}

type tenantID struct{ tenant, id string }

type dedupeEntry struct {
	key     tenantID
	digest  [sha256.Size]byte
	expires time.Time
	pending chan struct{} // closed when the publish that holds the entry returns; nil once accepted
}

// NewMemoryEventDeduper returns a deduper holding at most max accepted ids (max < 1:
// DefaultIdempotencyMaxEntries).
func NewMemoryEventDeduper(max int) *MemoryEventDeduper {
	if max < 1 {
		max = DefaultIdempotencyMaxEntries
	}
	return &MemoryEventDeduper{max: max, now: time.Now, items: map[tenantID]*list.Element{}, order: list.New()}
}

// Admit implements EventDeduper.
func (d *MemoryEventDeduper) Admit(ctx context.Context, keys []EventKey, ttl time.Duration, publish func(ctx context.Context, fresh []int) error) ([]Admission, error) {
	if ttl <= 0 {
		ttl = DefaultIdempotencyTTL
	}
	out := BatchAdmissions(keys)
	var fresh []int
	for {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		wait := d.claim(keys, out, &fresh)
		if wait == nil {
			break
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return out, ctx.Err()
		}
	}
	if AnyConflict(out) || len(fresh) == 0 {
		return out, nil
	}
	err := publish(ctx, fresh)
	d.settle(keys, fresh, ttl, err == nil)
	return out, err
}

// claim judges the keys still Admitted against the window. When one is held by a
// request in flight it returns that request's channel to wait on and claims nothing.
// Otherwise, unless some key is a Conflict, it holds every fresh key and lists them.
func (d *MemoryEventDeduper) claim(keys []EventKey, out []Admission, fresh *[]int) <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	*fresh = (*fresh)[:0]
	for i, k := range keys {
		if out[i] != Admitted {
			continue
		}
		el, ok := d.items[tenantID{k.Tenant, k.ID}]
		if !ok {
			*fresh = append(*fresh, i)
			continue
		}
		e := el.Value.(*dedupeEntry)
		switch {
		case e.pending != nil:
			return e.pending
		case !now.Before(e.expires):
			d.remove(el)
			*fresh = append(*fresh, i)
		case e.digest == k.Digest:
			out[i] = Duplicate
		default:
			out[i] = Conflict
		}
	}
	if AnyConflict(out) {
		return nil
	}
	for _, i := range *fresh {
		k := keys[i]
		e := &dedupeEntry{key: tenantID{k.Tenant, k.ID}, digest: k.Digest, pending: make(chan struct{})}
		d.items[e.key] = &list.Element{Value: e} // not in order until accepted
	}
	return nil
}

// settle accepts the held keys (ok) or releases them, and wakes their waiters.
func (d *MemoryEventDeduper) settle(keys []EventKey, fresh []int, ttl time.Duration, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	for _, i := range fresh {
		k := tenantID{keys[i].Tenant, keys[i].ID}
		el := d.items[k]
		e := el.Value.(*dedupeEntry)
		close(e.pending)
		e.pending = nil
		if !ok {
			delete(d.items, k)
			continue
		}
		e.expires = now.Add(ttl)
		d.items[k] = d.order.PushBack(e)
	}
	// Amortized sweep: drop expired entries at the old end, then enforce the bound.
	for el := d.order.Front(); el != nil && !now.Before(el.Value.(*dedupeEntry).expires); el = d.order.Front() {
		d.remove(el)
	}
	for d.order.Len() > d.max {
		d.remove(d.order.Front())
	}
}

// Len returns the number of accepted ids held (expired ones not yet swept included).
func (d *MemoryEventDeduper) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.order.Len()
}

func (d *MemoryEventDeduper) remove(el *list.Element) {
	delete(d.items, el.Value.(*dedupeEntry).key)
	d.order.Remove(el)
}

var _ EventDeduper = (*MemoryEventDeduper)(nil)
