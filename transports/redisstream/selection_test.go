package redisstream_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/redisstream"
)

// TestR1_Selection pins the shared naming rules: both transports report the same
// field, prefixed by their own name.
func TestR1_Selection(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		sel  redisstream.Selection
		want string // substring of the error, "" when valid
	}{
		{"Service", redisstream.Selection{Service: "identity", Naming: redisstream.NamingService}, ""},
		{"Category", redisstream.Selection{Naming: redisstream.NamingCategory}, ""},
		{"Stream", redisstream.Selection{Stream: "events.user"}, ""},
		{"None", redisstream.Selection{}, "one of Config.Service"},
		{"Two", redisstream.Selection{Stream: "events.user", Naming: redisstream.NamingCategory}, "exclusive"},
		{"BadNaming", redisstream.Selection{Naming: "topic"}, "Config.Naming"},
		{"BadService", redisstream.Selection{Service: "Bad Name", Naming: redisstream.NamingService}, "Config.Service"},
		{"ReservedStream", redisstream.Selection{Stream: "koder:events:"}, "Config.Stream"},
		{"NegativeAge", redisstream.Selection{Stream: "s", MinIDAge: -1}, "Config.MinIDAge"},
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
		if got := redisstream.DefaultNaming("", "identity"); got != redisstream.NamingService {
			t.Fatalf("DefaultNaming = %q", got)
		}
		if got := redisstream.DefaultNaming(redisstream.NamingCategory, "identity"); got != redisstream.NamingCategory {
			t.Fatalf("DefaultNaming = %q", got)
		}
	})
}

func ExampleSelection() {
	sel := redisstream.Selection{Service: "identity", Naming: redisstream.DefaultNaming("", "identity")}
	if err := sel.Validate("redisstream"); err != nil {
		panic(err)
	}
	stream, _, err := redisstream.EncodeEvent("redisstream", sel.Resolve(), 0, cloudevent.New("/identity", "identity.user.created").SetTenantID("tenant-A").SetActor("system").SetSubject("user-u1"))
	fmt.Println(stream, err)
	// Output: koder:events:identity <nil>
}

func TestR1_SelectionFixedStreamAndDLQ(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sel        redisstream.Selection
		fixed, dlq string
	}{
		{redisstream.Selection{Service: "id"}, "koder:events:id", "koder:events:id:dlq"},
		{redisstream.Selection{Service: "id", Naming: redisstream.NamingService}, "koder:events:id", "koder:events:id:dlq"},
		{redisstream.Selection{Stream: "orders"}, "orders", "orders:dlq"},
		{redisstream.Selection{Naming: redisstream.NamingCategory}, "", "events.dlq"},
		{redisstream.Selection{Stream: "events.user"}, "events.user", "events.dlq"},
		{redisstream.Selection{Namer: redisstream.PerCategory()}, "", ""},
	} {
		if got := tc.sel.FixedStream(); got != tc.fixed {
			t.Errorf("%+v FixedStream = %q, want %q", tc.sel, got, tc.fixed)
		}
		if got := tc.sel.DLQStream(); got != tc.dlq {
			t.Errorf("%+v DLQStream = %q, want %q", tc.sel, got, tc.dlq)
		}
	}
}
