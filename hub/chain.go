package hub

import "github.com/ThreeDotsLabs/watermill/message"

// namedMiddleware is a middleware with the name the order test pins.
type namedMiddleware struct {
	name string
	fn   message.HandlerMiddleware
}

// chain is the direct-delivery middleware chain of a route, outermost first (Watermill
// runs the first added outermost). TestDeliveryChainOrder pins it.
func (r *route) chain() []namedMiddleware {
	return []namedMiddleware{
		// 1. failure: sees only the final outcome. After the last attempt it emits
		//    hub.transport.failed (bus, sink, metric, event_dlq log) and acks: an
		//    in-memory batch cannot be redelivered, so the failure event is its record.
		{"failure", r.failureMiddleware},
		// 2. retry: repeats what is inside while the error IsRetryable and attempts
		//    remain, with backoff. Outside attempt so each try gets its own span, metric
		//    and event_failed log.
		{"retry", r.retryMiddleware},
		// 3. attempt: one span, one hub_delivery_seconds observation and outcome count
		//    per Send.
		{"attempt", r.attemptMiddleware},
		// 4. recoverer: innermost, so a panicking transport is an ordinary failed
		//    attempt (Internal, retryable) that attempt records and retry repeats.
		{"recoverer", recovererMiddleware},
	}
}

// DeliveryChainNames returns the names of the direct-delivery middleware, outermost
// first; it documents (and lets a test pin) the chain's order.
func DeliveryChainNames() []string {
	var r route
	chain := r.chain()
	names := make([]string, len(chain))
	for i, m := range chain {
		names[i] = m.name
	}
	return names
}
