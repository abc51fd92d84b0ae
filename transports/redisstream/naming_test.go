package redisstream

import (
	"testing"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
)

// TestR1_NamingEnforced: the transport applies the shared naming rules (package
// streams, TestR1_Naming there) to its Config.
func TestR1_NamingEnforced(t *testing.T) {
	t.Parallel()
	if _, err := New(newNilClient(), Config{Stream: "koder:events:a:b"}); hub.Code(err) != hub.InvalidArgument {
		t.Errorf("New with a reserved-prefix misuse: %v", err)
	}
}

// TestR3_GroupNamesEnforced: NewConsumer refuses a group that breaks R3 (the rule
// itself is pinned by TestR3_GroupNames in package streams).
func TestR3_GroupNamesEnforced(t *testing.T) {
	t.Parallel()
	if _, err := NewConsumer(newNilClient(), streams.ConsumerConfig{Stream: "s", Group: "nogroupdash", Consumer: "c"}); hub.Code(err) != hub.InvalidArgument {
		t.Errorf("NewConsumer with a group breaking R3: %v", err)
	}
}
