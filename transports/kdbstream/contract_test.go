package kdbstream

import (
	"testing"

	"github.com/koder/eventhub/internal/streams/streamtest"
)

// Seed 000's test contract (T1-T5, N2 and the R4 recovery cases), the same suite the
// Redis transport passes, on both databases.

func runContract(t *testing.T, fn func(*testing.T, streamtest.Harness)) {
	t.Parallel()
	for _, db := range databases {
		t.Run(db, func(t *testing.T) {
			t.Parallel()
			fn(t, harness(t, db))
		})
	}
}

func TestT1_RoundTrip(t *testing.T)        { runContract(t, streamtest.T1RoundTrip) }
func TestT1_HandWrittenEntry(t *testing.T) { runContract(t, streamtest.T1HandWrittenEntry) }
func TestT2_Idempotency(t *testing.T)      { runContract(t, streamtest.T2Idempotency) }
func TestT3_RetryAfterClaim(t *testing.T)  { runContract(t, streamtest.T3RetryAfterClaim) }
func TestT4_DeadLetter(t *testing.T)       { runContract(t, streamtest.T4DeadLetter) }
func TestT5_ConcurrentConsumers(t *testing.T) {
	runContract(t, streamtest.T5ConcurrentConsumers)
}
func TestN2_Malformed(t *testing.T)    { runContract(t, streamtest.N2Malformed) }
func TestE5_UnknownMajor(t *testing.T) { runContract(t, streamtest.E5UnknownMajor) }
func TestR4_RestartRereadsOwnPending(t *testing.T) {
	runContract(t, streamtest.RestartRereadsOwnPending)
}
func TestR4_ClaimFromDeadConsumer(t *testing.T) { runContract(t, streamtest.ClaimFromDeadConsumer) }
func TestR4_CloseDrains(t *testing.T)           { runContract(t, streamtest.CloseDrains) }

// The wire contract: R2 never empty, seed 001's encoding, E4 through the consumer.

func TestE4_PublishFromHandler(t *testing.T)  { runContract(t, streamtest.E4PublishFromHandler) }
func TestR2_NeverEmpty(t *testing.T)          { runContract(t, streamtest.R2NeverEmpty) }
func TestR2_EmptyFieldMalformed(t *testing.T) { runContract(t, streamtest.R2EmptyFieldMalformed) }
func TestE1_Seed001RoundTrip(t *testing.T)    { runContract(t, streamtest.E1Seed001RoundTrip) }
func TestE1_HandWrittenEntry(t *testing.T)    { runContract(t, streamtest.E1HandWrittenEntry) }
