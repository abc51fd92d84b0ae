package rabbitmq

import (
	"testing"
	"time"
)

// WithDefaults is what New and NewConsumer apply, on a copy: set fields stay, unset
// ones get the defaults, and the receiver is untouched.
func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	in := Config{URL: "amqp://guest:guest@127.0.0.1:5672/", ReconnectMax: time.Hour}
	got := in.WithDefaults()
	if in.Mode != "" || in.Mandatory != nil || in.Logger != nil || in.Metrics != nil {
		t.Fatalf("WithDefaults changed its receiver: %+v", in)
	}
	if got.ReconnectMax != time.Hour || got.Exchange != DefaultExchange || got.Mode != DefaultMode ||
		got.QueueType != DefaultQueueType || got.ReconnectMin != DefaultReconnectMin || !got.mandatory() ||
		got.Prefetch != DefaultPrefetch || len(got.Patterns) != 1 || got.Logger == nil || got.Metrics == nil {
		t.Fatalf("defaults not applied: %+v", got)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
}
