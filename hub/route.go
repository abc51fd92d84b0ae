package hub

import (
	"fmt"
	"time"

	"github.com/koder/eventhub/filter"
)

// DeliveryMode says how a route hands events to its transport.
type DeliveryMode int

const (
	// Direct delivery: Publish queues the event and returns; a Watermill router sends
	// it off the caller's path with retries, and a final failure becomes a
	// hub.transport.failed event (F1). An event still queued when the process dies is
	// lost; that is the price of not needing a database.
	Direct DeliveryMode = iota
	// OutboxMode: Publish stores the event in the hub's Outbox before returning (O1);
	// the outbox relay delivers it. Needs WithOutbox.
	OutboxMode
)

func (m DeliveryMode) String() string {
	switch m {
	case Direct:
		return "direct"
	case OutboxMode:
		return "outbox"
	}
	return fmt.Sprintf("DeliveryMode(%d)", int(m))
}

// Route defaults.
const (
	DefaultAttempts       = 3 // F1: 3 attempts
	DefaultBackoffInitial = 100 * time.Millisecond
	DefaultBackoffMax     = 5 * time.Second
	DefaultBatchSize      = 100
	DefaultConcurrency    = 1
	DefaultQueueSize      = 10000
)

// RouteOption configures one route (Forward).
type RouteOption func(*routeConfig)

type routeConfig struct {
	name           string
	mode           DeliveryMode
	attempts       int
	backoffInitial time.Duration
	backoffMax     time.Duration
	batchSize      int
	concurrency    int
	queueSize      int
	dropWhenFull   bool
	defaultSubject string
	filterExpr     string         // WithFilter, as given
	filter         *filter.Filter // compiled by validate; nil = none (filter.go)
}

func (c *routeConfig) setDefaults(t Transport, index int) {
	if c.name == "" {
		if n, ok := t.(Named); ok && n.Name() != "" {
			c.name = n.Name()
		} else {
			c.name = fmt.Sprintf("route-%d", index)
		}
	}
	if c.attempts == 0 {
		c.attempts = DefaultAttempts
	}
	if c.backoffInitial == 0 {
		c.backoffInitial = DefaultBackoffInitial
	}
	if c.backoffMax == 0 {
		// Never below the first delay: a long initial backoff alone is a valid policy.
		c.backoffMax = max(DefaultBackoffMax, c.backoffInitial)
	}
	if c.batchSize == 0 {
		c.batchSize = DefaultBatchSize
	}
	if c.concurrency == 0 {
		c.concurrency = DefaultConcurrency
	}
	if c.queueSize == 0 {
		c.queueSize = DefaultQueueSize
	}
}

func (c *routeConfig) validate() error {
	switch {
	case c.attempts < 1:
		return Errorf(InvalidArgument, "hub: route %q: WithRetry attempts must be at least 1", c.name)
	case c.backoffInitial < 0 || c.backoffMax < c.backoffInitial:
		return Errorf(InvalidArgument, "hub: route %q: WithRetry backoff must satisfy 0 <= initial <= max", c.name)
	case c.batchSize < 1:
		return Errorf(InvalidArgument, "hub: route %q: WithBatchSize must be at least 1", c.name)
	case c.concurrency < 1:
		return Errorf(InvalidArgument, "hub: route %q: WithConcurrency must be at least 1", c.name)
	case c.queueSize < 1:
		return Errorf(InvalidArgument, "hub: route %q: WithQueueSize must be at least 1", c.name)
	case c.mode != Direct && c.mode != OutboxMode:
		return Errorf(InvalidArgument, "hub: route %q: unknown delivery mode %v", c.name, c.mode)
	}
	return c.compileFilter()
}

// WithName names the route: the outbox destination, the route label of metrics, logs
// and failure events. Default: the transport's Name() (Named), else "route-<n>".
// Names are unique per Hub.
func WithName(name string) RouteOption { return func(c *routeConfig) { c.name = name } }

// WithDelivery selects Direct (default) or OutboxMode.
func WithDelivery(m DeliveryMode) RouteOption { return func(c *routeConfig) { c.mode = m } }

// WithRetry sets the direct-delivery attempts (default 3) and the exponential backoff
// between them (doubling from initial, capped at max, ±20% jitter; defaults 100ms, 5s).
// A zero argument keeps its default (a zero max is at least initial), so a
// configuration file's unset fields can be passed as they are. Only errors
// IsRetryable accepts are retried.
func WithRetry(attempts int, initial, max time.Duration) RouteOption {
	return func(c *routeConfig) { c.attempts, c.backoffInitial, c.backoffMax = attempts, initial, max }
}

// WithBatchSize caps how many queued events one Send carries (default 100). Batches
// form from what is queued when a sender is free: under load they grow to the cap,
// idle they are single events, and no event waits for a batch to fill.
func WithBatchSize(n int) RouteOption { return func(c *routeConfig) { c.batchSize = n } }

// WithConcurrency sets how many batches of the route are in flight at once (default 1).
// With 1, the route delivers in publish order; above 1 order is not kept.
func WithConcurrency(n int) RouteOption { return func(c *routeConfig) { c.concurrency = n } }

// WithQueueSize bounds the events waiting for direct delivery (default 10000). When the
// queue is full, Publish waits for room (backpressure), bounded by its context and by
// Close: an event Publish accepted is never dropped for lack of room. WithDropWhenFull
// trades that for a publisher that never waits.
func WithQueueSize(n int) RouteOption { return func(c *routeConfig) { c.queueSize = n } }

// WithDropWhenFull makes Publish fail an event at once, as a hub.transport.failed event
// with outcome "dropped", when the route's queue is full, instead of waiting for room:
// for best-effort routes (metrics, analytics) that must never slow the publisher.
func WithDropWhenFull() RouteOption { return func(c *routeConfig) { c.dropWhenFull = true } }
