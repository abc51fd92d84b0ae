package redisstream

import (
	"testing"

	"github.com/koder/eventhub/internal/streams/streamtest"
)

// Seed 000's test contract, run through the suite kdbstream shares.

func TestT1_RoundTrip(t *testing.T) { t.Parallel(); streamtest.T1RoundTrip(t, harness(t)) }
func TestT1_HandWrittenEntry(t *testing.T) {
	t.Parallel()
	streamtest.T1HandWrittenEntry(t, harness(t))
}
func TestT2_Idempotency(t *testing.T)     { t.Parallel(); streamtest.T2Idempotency(t, harness(t)) }
func TestT3_RetryAfterClaim(t *testing.T) { t.Parallel(); streamtest.T3RetryAfterClaim(t, harness(t)) }
func TestT4_DeadLetter(t *testing.T)      { t.Parallel(); streamtest.T4DeadLetter(t, harness(t)) }
func TestT5_ConcurrentConsumers(t *testing.T) {
	t.Parallel()
	streamtest.T5ConcurrentConsumers(t, harness(t))
}
func TestN2_Malformed(t *testing.T)    { t.Parallel(); streamtest.N2Malformed(t, harness(t)) }
func TestE5_UnknownMajor(t *testing.T) { t.Parallel(); streamtest.E5UnknownMajor(t, harness(t)) }
func TestR4_RestartRereadsOwnPending(t *testing.T) {
	t.Parallel()
	streamtest.RestartRereadsOwnPending(t, harness(t))
}
func TestR4_ClaimFromDeadConsumer(t *testing.T) {
	t.Parallel()
	streamtest.ClaimFromDeadConsumer(t, harness(t))
}
func TestR4_CloseDrains(t *testing.T) { t.Parallel(); streamtest.CloseDrains(t, harness(t)) }
func TestR4_ConcurrencyOption(t *testing.T) {
	t.Parallel()
	streamtest.ConcurrencyOption(t, harness(t))
}
func TestR4_DeadLetterAfterCrashes(t *testing.T) {
	t.Parallel()
	streamtest.DeadLetterAfterCrashes(t, harness(t))
}

// The wire contract: R2 never empty, seed 001's encoding, E4 through the consumer.

func TestE4_PublishFromHandler(t *testing.T) {
	t.Parallel()
	streamtest.E4PublishFromHandler(t, harness(t))
}
func TestR2_NeverEmpty(t *testing.T) { t.Parallel(); streamtest.R2NeverEmpty(t, harness(t)) }
func TestR2_EmptyFieldMalformed(t *testing.T) {
	t.Parallel()
	streamtest.R2EmptyFieldMalformed(t, harness(t))
}
func TestE1_Seed001RoundTrip(t *testing.T) {
	t.Parallel()
	streamtest.E1Seed001RoundTrip(t, harness(t))
}
func TestE1_HandWrittenEntry(t *testing.T) {
	t.Parallel()
	streamtest.E1HandWrittenEntry(t, harness(t))
}
