package streams_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
)

// TestR1_Selection pins the shared naming rules: both transports report the same
// field, prefixed by their own name.
func TestR1_Selection(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		sel  streams.Selection
		want string // substring of the error, "" when valid
	}{
		{"Service", streams.Selection{Service: "identity", Naming: streams.NamingService}, ""},
		{"Category", streams.Selection{Naming: streams.NamingCategory}, ""},
		{"Stream", streams.Selection{Stream: "events.user"}, ""},
		{"None", streams.Selection{}, "one of Config.Service"},
		{"Two", streams.Selection{Stream: "events.user", Naming: streams.NamingCategory}, "exclusive"},
		{"BadNaming", streams.Selection{Naming: "topic"}, "Config.Naming"},
		{"BadService", streams.Selection{Service: "Bad Name", Naming: streams.NamingService}, "Config.Service"},
		{"ReservedStream", streams.Selection{Stream: "koder:events:"}, "Config.Stream"},
		{"NegativeAge", streams.Selection{Stream: "s", MinIDAge: -1}, "Config.MinIDAge"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := c.sel.Validate("kdbstream")
			if c.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "kdbstream: ") || hub.Code(err) != hub.InvalidArgument {
				t.Fatalf("Validate = %v, want InvalidArgument kdbstream: ...%s...", err, c.want)
			}
		})
	}
	t.Run("DefaultNaming", func(t *testing.T) {
		t.Parallel()
		if got := streams.DefaultNaming("", "identity"); got != streams.NamingService {
			t.Fatalf("DefaultNaming = %q", got)
		}
		if got := streams.DefaultNaming(streams.NamingCategory, "identity"); got != streams.NamingCategory {
			t.Fatalf("DefaultNaming = %q", got)
		}
	})
}

func ExampleSelection() {
	sel := streams.Selection{Service: "identity", Naming: streams.DefaultNaming("", "identity")}
	if err := sel.Validate("redisstream"); err != nil {
		panic(err)
	}
	stream, _, err := streams.EncodeEvent("redisstream", sel.Resolve(), 0, cloudevent.New("/identity", "identity.user.created").SetTenantID("tenant-A").SetActor("system").SetSubject("user-u1"))
	fmt.Println(stream, err)
	// Output: koder:events:identity <nil>
}

func TestR1_SelectionFixedStreamAndDLQ(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sel        streams.Selection
		fixed, dlq string
	}{
		{streams.Selection{Service: "id"}, "koder:events:id", "koder:events:id:dlq"},
		{streams.Selection{Service: "id", Naming: streams.NamingService}, "koder:events:id", "koder:events:id:dlq"},
		{streams.Selection{Stream: "orders"}, "orders", "orders:dlq"},
		{streams.Selection{Naming: streams.NamingCategory}, "", "events.dlq"},
		{streams.Selection{Stream: "events.user"}, "events.user", "events.dlq"},
		{streams.Selection{Namer: streams.PerCategory()}, "", ""},
	} {
		if got := tc.sel.FixedStream(); got != tc.fixed {
			t.Errorf("%+v FixedStream = %q, want %q", tc.sel, got, tc.fixed)
		}
		if got := tc.sel.DLQStream(); got != tc.dlq {
			t.Errorf("%+v DLQStream = %q, want %q", tc.sel, got, tc.dlq)
		}
	}
}
