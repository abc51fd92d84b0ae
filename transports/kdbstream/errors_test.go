package kdbstream

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// TestErrorCode pins classify: engine replies keep their code, context errors pass
// unwrapped, anything else is Unknown.
func TestErrorCode(t *testing.T) {
	t.Parallel()
	eng := openEngine(t, engine.DriverSQLite)
	ctx := context.Background()
	if err := eng.GroupCreate(ctx, "s", "g", "$", true, -1); err != nil {
		t.Fatal(err)
	}
	busy := eng.GroupCreate(ctx, "s", "g", "$", true, -1)
	_, noGroup := eng.XPendingSummary(ctx, "s", "nope")
	_, badID := eng.XAck(ctx, "s", "g", "not-an-id")
	cases := []struct {
		name string
		err  error
		want hub.ErrorCode
	}{
		{"BusyGroup", classify(busy), hub.AlreadyExists},
		{"NoGroup", classify(noGroup), hub.NotFound},
		{"BadID", classify(badID), hub.InvalidArgument},
		{"Canceled", classify(context.Canceled), hub.Canceled},
		{"Deadline", classify(context.DeadlineExceeded), hub.DeadlineExceeded},
		{"Other", classify(errors.New("boom")), hub.Unknown},
		{"Nil", classify(nil), hub.OK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := hub.Code(c.err); got != c.want {
				t.Fatalf("code of %v = %v, want %v", c.err, got, c.want)
			}
		})
	}
	if classify(context.Canceled) != context.Canceled {
		t.Fatal("context errors must pass unwrapped")
	}
}

// TestURL pins the opener's URL forms and parameters.
func TestURL(t *testing.T) {
	t.Parallel()
	cases := []struct {
		url             string
		driver, dsn     string
		service, naming string
		bad             bool
	}{
		{url: "kdbstream:///var/lib/hub/events.db?service=id", driver: "sqlite", dsn: "/var/lib/hub/events.db", service: "id"},
		{url: "sqlite:///tmp/e.db?naming=category&synchronous=NORMAL", driver: "sqlite", dsn: "/tmp/e.db", naming: "category"},
		{url: "sqlite://rel.db?stream=x", driver: "sqlite", dsn: "rel.db"},
		{url: "postgres://u:secret@db/hub?sslmode=disable&schema=ev&service=id", driver: "postgres", dsn: "postgres://u:secret@db/hub?sslmode=disable", service: "id"},
		{url: "kdbstream:///x.db?bogus=1", bad: true},
		{url: "kdbstream:///x.db?max_len=many", bad: true},
		{url: "redis://localhost/0", bad: true},
		{url: "kdbstream://?service=id", bad: true},
	}
	for _, c := range cases {
		t.Run(c.url, func(t *testing.T) {
			ec, cfg, err := ParseURL(c.url, Config{})
			if c.bad {
				if hub.Code(err) != hub.InvalidArgument {
					t.Fatalf("ParseURL(%q) = %v, want InvalidArgument", c.url, err)
				}
				return
			}
			if err != nil || ec.Driver != c.driver || ec.DSN != c.dsn || cfg.Service != c.service || cfg.Naming != c.naming {
				t.Fatalf("ParseURL(%q) = %+v, %+v, %v", c.url, ec, cfg, err)
			}
		})
	}
	t.Run("PasswordNotInErrors", func(t *testing.T) {
		_, err := Open(context.Background(), "postgres://u:hunter2@127.0.0.1:1/x?connect_timeout=1&service=id")
		if err == nil || contains(err.Error(), "hunter2") {
			t.Fatalf("error %v leaks the password or is nil", err)
		}
	})
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
