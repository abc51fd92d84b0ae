package streams

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
)

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	t.Run("R4Values", func(t *testing.T) {
		t.Parallel()
		c := streams.ConsumerConfig{Stream: "koder:events:id", Group: "auth-erasure-cascade", Consumer: "c1"}
		setDefaults(&c)
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		if c.Start != "$" || c.Count != 100 || c.Block != 5*time.Second || c.MaxDeliveries != 3 ||
			c.DLQStream != "koder:events:id:dlq" || c.Concurrency != 1 || c.IdempotencyTTL != 24*time.Hour {
			t.Fatalf("defaults %+v", c)
		}
	})
	t.Run("ValidateNamesTheField", func(t *testing.T) {
		t.Parallel()
		for field, c := range map[string]streams.ConsumerConfig{
			"Stream":      {Group: "g", Consumer: "c"},
			"Group":       {Stream: "s", Consumer: "c"},
			"Consumer":    {Stream: "s", Group: "g"},
			"Count":       {Stream: "s", Group: "g", Consumer: "c", Count: -1},
			"Concurrency": {Stream: "s", Group: "g", Consumer: "c", Concurrency: -2},
			"DLQStream":   {Stream: "s", Group: "g", Consumer: "c", DLQStream: "s"},
		} {
			_, err := New(nopBackend{}, c)
			if hub.Code(err) != hub.InvalidArgument || !strings.Contains(err.Error(), field) {
				t.Errorf("%s: %v", field, err)
			}
		}
	})
}

func TestEntryMillis(t *testing.T) {
	t.Parallel()
	if ms, ok := entryMillis("1715690096000-3"); !ok || ms != 1715690096000 {
		t.Fatalf("entryMillis = %d, %v", ms, ok)
	}
	if _, ok := entryMillis("bogus"); ok {
		t.Fatal("entryMillis accepted a bogus id")
	}
}

func TestCloseBeforeStart(t *testing.T) {
	t.Parallel()
	c, err := New(nopBackend{}, streams.ConsumerConfig{Stream: "s", Group: "g", Consumer: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background(), func(context.Context, *cloudevent.Event) error { return nil }); hub.Code(err) != hub.FailedPrecondition {
		t.Fatalf("Start after Close: %v", err)
	}
}

// nopBackend is a Backend that is never reached.
type nopBackend struct{}

func (nopBackend) CreateGroup(context.Context, string, string, string) error { return nil }
func (nopBackend) ReadGroup(context.Context, string, string, string, string, int, time.Duration) ([]Entry, error) {
	return nil, nil
}
func (nopBackend) Ack(context.Context, string, string, ...string) error { return nil }
func (nopBackend) AutoClaim(context.Context, string, string, string, time.Duration, string, int) (string, []Entry, error) {
	return "0-0", nil, nil
}
func (nopBackend) DeadLetter(context.Context, string, string, string, string, []string) error {
	return nil
}
