package streams

import (
	"log/slog"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
)

// setDefaults fills every zero optional field of c with its default (the Default*
// constants of the public streams package, R4's values). The dead-letter stream
// defaults to "<Stream>:dlq" here; the transports set the convention-aware name
// (streams.DLQStreamFor) before, in ForTransport.
func setDefaults(c *streams.ConsumerConfig) {
	if c.Start == "" {
		c.Start = streams.DefaultStart
	}
	if c.Count == 0 {
		c.Count = streams.DefaultCount
	}
	if c.Block == 0 {
		c.Block = streams.DefaultBlock
	}
	if c.ClaimMinIdle == 0 {
		c.ClaimMinIdle = streams.DefaultClaimMinIdle
	}
	if c.ClaimInterval == 0 {
		c.ClaimInterval = streams.DefaultClaimInterval
	}
	if c.MaxDeliveries == 0 {
		c.MaxDeliveries = streams.DefaultMaxDeliveries
	}
	if c.DLQStream == "" && c.Stream != "" {
		c.DLQStream = c.Stream + streams.DLQSuffix
	}
	if c.Concurrency == 0 {
		c.Concurrency = streams.DefaultConcurrency
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = streams.DefaultDrainTimeout
	}
	if c.IdempotencyTTL == 0 {
		c.IdempotencyTTL = hub.DefaultIdempotencyTTL
	}
	if c.Transport == "" {
		c.Transport = "streams"
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics = hub.NewStreamMetrics(nil)
	}
}
