// Package hub moves CloudEvents from application code to transports and in-process
// subscribers.
//
// A Hub routes each published event by a pattern on its type (RabbitMQ topic semantics,
// see Pattern) to the transports given to Forward, either directly (queued, batched and
// sent off the caller's path by a Watermill router, 3 attempts, then a
// hub.transport.failed event) or through the transactional Outbox. It validates events
// before anything is sent, stamps tenant and correlation ids from the context, carries
// W3C trace context in the traceparent/tracestate extensions, and exports Prometheus
// metrics and R8 slog records.
//
// Transport is the driver interface every destination implements (Send a batch, Close);
// everything transports would otherwise repeat lives here once. hub/transporttest is the
// conformance suite every transport passes; hub/memtransport is the in-memory reference.
// The hub never imports a transport package.
package hub
