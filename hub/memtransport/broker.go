// Package memtransport is the in-memory transport: named streams kept in a Broker, a
// Transport that appends to one, and a Consumer that reads one with consumer groups,
// acknowledgement and redelivery.
//
// It exists for tests and as the reference implementation of the hub/transporttest
// suite: it has every capability the suite checks (order, persistence for the Broker's
// lifetime, groups, redelivery) with none of a network's failure modes, except the one
// the suite needs, an unreachable broker (Broker.Close). Nothing survives the process.
package memtransport

import (
	"sync"
	"time"

	"github.com/koder/eventhub/cloudevent"
)

// DLQSuffix is appended to a stream's name to form its dead-letter stream, as R4.6 does
// for Redis (`<stream>:dlq`).
const DLQSuffix = ":dlq"

// ExtDeadLetterReason is the extension a dead-lettered event carries: its last error.
const ExtDeadLetterReason = "dlqreason"

// Broker holds streams by name. It plays the server: transports and consumers built on
// one Broker see the same streams. It is safe for concurrent use.
type Broker struct {
	mu      sync.Mutex
	streams map[string]*stream
	closed  bool
}

type stream struct {
	base    int // offset of events[0]: entries before it were trimmed (MaxLen)
	events  []*cloudevent.Event
	groups  map[string]*group
	changed chan struct{} // closed and replaced on every append or nack: wakes consumers
}

// group is a consumer group's state on one stream: the next new offset, and the
// delivered-but-unacknowledged entries (Redis's pending entries list).
type group struct {
	next    int
	pending map[int]*pendingEntry
}

type pendingEntry struct {
	deliveries int
	inFlight   bool
	readyAt    time.Time
}

// NewBroker returns an empty broker.
func NewBroker() *Broker { return &Broker{streams: map[string]*stream{}} }

// Close makes the broker unreachable: Sends fail with Unavailable and consumers stop
// receiving. It stands in for a server that went away. Idempotent.
func (b *Broker) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		for _, s := range b.streams {
			s.notify()
		}
	}
	return nil
}

// Len returns the number of events appended to the stream name (trimmed ones
// included).
func (b *Broker) Len(name string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.streams[name]; ok {
		return s.base + len(s.events)
	}
	return 0
}

// Events returns copies of the stream's retained events in append order (for tests and
// DLQ inspection).
func (b *Broker) Events(name string) []*cloudevent.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.streams[name]
	if !ok {
		return nil
	}
	out := make([]*cloudevent.Event, len(s.events))
	for i, ev := range s.events {
		out[i] = ev.Clone()
	}
	return out
}

// Pending returns how many entries group has delivered but not acknowledged on stream.
func (b *Broker) Pending(name, groupName string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.streams[name]; ok {
		if g, ok := s.groups[groupName]; ok {
			return len(g.pending)
		}
	}
	return 0
}

// streamLocked returns the stream name, creating it. b.mu must be held.
func (b *Broker) streamLocked(name string) *stream {
	s, ok := b.streams[name]
	if !ok {
		s = &stream{groups: map[string]*group{}, changed: make(chan struct{})}
		b.streams[name] = s
	}
	return s
}

// append stores clones of batch atomically (the whole batch or, when closed, nothing)
// and trims the stream to its newest maxLen entries when maxLen > 0 (XADD MAXLEN).
func (b *Broker) append(name string, batch []*cloudevent.Event, maxLen int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	s := b.streamLocked(name)
	for _, ev := range batch {
		s.events = append(s.events, ev.Clone())
	}
	if maxLen > 0 && len(s.events) > maxLen {
		// Trim in chunks so a stream at its cap does not copy on every append.
		if drop := len(s.events) - maxLen; drop >= maxLen/4 || drop >= 1024 {
			s.events = append([]*cloudevent.Event(nil), s.events[drop:]...)
			s.base += drop
		}
	}
	s.notify()
	return true
}

func (s *stream) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// claim hands the consumer of group the next entry: the oldest pending entry whose
// redelivery is due, else the next new one. With nothing available it returns the
// channel that signals a change and, when a redelivery is scheduled, how long until it
// is due. ok is false once the broker is closed.
func (b *Broker) claim(name, groupName string, now time.Time) (off int, ev *cloudevent.Event, deliveries int, changed <-chan struct{}, wait time.Duration, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, nil, 0, nil, 0, false
	}
	s := b.streamLocked(name)
	g, exists := s.groups[groupName]
	if !exists {
		g = &group{pending: map[int]*pendingEntry{}}
		s.groups[groupName] = g
	}
	best := -1
	for o, p := range g.pending {
		if o < s.base {
			delete(g.pending, o) // trimmed away before it was acknowledged
			continue
		}
		if p.inFlight {
			continue
		}
		if !p.readyAt.After(now) {
			if best < 0 || o < best {
				best = o
			}
		} else if d := p.readyAt.Sub(now); wait == 0 || d < wait {
			wait = d
		}
	}
	if best >= 0 {
		p := g.pending[best]
		p.inFlight = true
		p.deliveries++
		return best, s.events[best-s.base].Clone(), p.deliveries, nil, 0, true
	}
	g.next = max(g.next, s.base)
	if g.next < s.base+len(s.events) {
		off = g.next
		g.next++
		g.pending[off] = &pendingEntry{deliveries: 1, inFlight: true}
		return off, s.events[off-s.base].Clone(), 1, nil, 0, true
	}
	return 0, nil, 0, s.changed, wait, true
}

// settle acknowledges (err == nil) or fails an entry. A failed entry becomes due again
// after delay, or goes to the dead-letter stream once it has been delivered
// maxDeliveries times.
func (b *Broker) settle(name, groupName string, off int, err error, delay time.Duration, maxDeliveries int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.streamLocked(name)
	g := s.groups[groupName]
	p, ok := g.pending[off]
	if !ok {
		return
	}
	switch {
	case err == nil:
		delete(g.pending, off)
	case off < s.base:
		delete(g.pending, off) // trimmed: nothing left to redeliver
	case maxDeliveries > 0 && p.deliveries >= maxDeliveries:
		delete(g.pending, off)
		dead := s.events[off-s.base].Clone()
		dead.SetExtension(ExtDeadLetterReason, err.Error())
		d := b.streamLocked(name + DLQSuffix)
		d.events = append(d.events, dead)
		d.notify()
	default:
		p.inFlight = false
		p.readyAt = time.Now().Add(delay)
	}
	s.notify()
}

// release returns an in-flight entry to the pending list without counting a failure
// (a consumer closed before its handler finished): it is due again at once.
func (b *Broker) release(name, groupName string, off int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.streamLocked(name)
	if p, ok := s.groups[groupName].pending[off]; ok {
		p.inFlight = false
		p.readyAt = time.Time{}
		s.notify()
	}
}
