package app_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// TestR2_RouteDefaultSubject: routes[].default_subject reaches the hub route: an event
// without a subject to a kdbstream (R2) route with it is accepted and written with it;
// to a route without it, refused with a problem on subject naming that route.
func TestR2_RouteDefaultSubject(t *testing.T) {
	t.Parallel()
	a, err := start(t, `store: {sqlite: hub.db}
transports:
  events: {type: kdbstream, stream: events}
routes:
  - {pattern: "a.#", to: events, default_subject: unspecified}
  - {pattern: "b.#", to: events}
admin: {listen: "off"}
`)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	ctx := context.Background()
	if err := a.Hub().Publish(ctx, cloudevent.New("/t", "a.created").SetTenantID("t1")); err != nil {
		t.Fatalf("route with default_subject: %v", err)
	}
	err = a.Hub().Publish(ctx, cloudevent.New("/t", "b.created").SetTenantID("t1"))
	var ve *cloudevent.ValidationError
	if hub.Code(err) != hub.InvalidArgument || !errors.As(err, &ve) || !ve.Has("subject") || !strings.Contains(err.Error(), `"events:b.#"`) {
		t.Fatalf("route without default_subject: %v, want a problem on subject naming route events:b.#", err)
	}
}
