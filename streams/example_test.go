package streams_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/streams"
)

// Namers map events to streams: per origin service (R1) or per category (E8).
func ExampleNamer() {
	ev := cloudevent.New("/identity", "user.created")
	perService, _ := streams.PerService("id")(ev)
	perCategory, _ := streams.PerCategory()(ev)
	fmt.Println(perService, streams.DLQStreamFor(perService))
	fmt.Println(perCategory, streams.DLQStreamFor(perCategory))
	fmt.Println(streams.ValidateGroup("auth-erasure-cascade") == nil, streams.ValidateGroup("auth") == nil)
	// Output:
	// koder:events:id koder:events:id:dlq
	// events.user events.dlq
	// true false
}

// One ConsumerConfig configures a consumer on either bus: redisstream.NewConsumer,
// kdbstream.NewConsumer and eventbus.Bus.NewConsumer all take it. Validate checks the
// loop's settings without opening anything.
func ExampleConsumerConfig() {
	cfg := streams.ConsumerConfig{
		Stream:   "koder:events:id",
		Group:    "auth-erasure-cascade", // R3: <service>-<purpose>
		Consumer: "auth-7f9c",            // stable across restarts
		Start:    "0",                    // a new group reads the whole stream
	}
	fmt.Println(cfg.Validate(), streams.DLQStreamFor(cfg.Stream))
	cfg.Concurrency = -1
	fmt.Println(cfg.Validate())
	// Output:
	// <nil> koder:events:id:dlq
	// streams: ConsumerConfig.Concurrency must be positive, got -1
}

// ApplyURLParams sets the fields its table knows, one value each, and leaves the rest
// of the query to the driver; errors show the URL with its password redacted.
func ExampleApplyURLParams() {
	type config struct {
		Stream string
		MaxLen int64
	}
	params := map[string]func(*config, string) error{
		"stream":  func(c *config, v string) error { c.Stream = v; return nil },
		"max_len": func(c *config, v string) (err error) { c.MaxLen, err = strconv.ParseInt(v, 10, 64); return err },
	}
	u, _ := url.Parse("redis://alice:s3cret@host:6379/0?stream=orders&max_len=500&dial_timeout=2s")
	q := u.Query()
	var cfg config
	err := streams.ApplyURLParams("mytransport", u, q, params, &cfg)
	fmt.Println(cfg, q.Encode(), err)

	u, _ = url.Parse("redis://alice:s3cret@host:6379/0?max_len=many")
	err = streams.ApplyURLParams("mytransport", u, u.Query(), params, &cfg)
	fmt.Println(err)
	// Output:
	// {orders 500} dial_timeout=2s <nil>
	// mytransport: URL redis://alice:xxxxx@host:6379/0?max_len=many: parameter max_len: strconv.ParseInt: parsing "many": invalid syntax
}

// Redact and ScrubPassword keep a URL's password out of logs and errors, including
// errors a driver built by quoting the DSN.
func ExampleScrubPassword() {
	raw := "postgres://hub:s3cret@db.internal/hub"
	driverErr := errors.New(`cannot connect to "postgres://hub:s3cret@db.internal/hub"`)
	fmt.Println(streams.Redact(raw))
	fmt.Println(streams.ScrubPassword(driverErr.Error(), raw))
	// Output:
	// postgres://hub:xxxxx@db.internal/hub
	// cannot connect to "postgres://hub:xxxxx@db.internal/hub"
}

// Wire is the entry format both transports write: R2 by default, never an empty field,
// or seed 001's envelope as fields.
func ExampleWire() {
	ev := cloudevent.New("/identity", "user.created").SetTenantID("tenant-A")
	ev.Data = nil // no subject, no actor, no data

	_, err := streams.Wire{}.Fields(context.Background(), ev)
	fmt.Println(err)

	w := streams.Wire{DefaultSubject: "unspecified"}
	fields, _ := w.Fields(context.Background(), ev)
	fmt.Println(w.RequiresSubject(), fields[8:14], fields[len(fields)-2:])

	e1, _ := streams.Wire{Encoding: streams.EncodingSeed001}.Fields(context.Background(), ev)
	fmt.Println(e1[0], e1[2], e1[4], e1[6])
	// Output:
	// cloudevent: invalid event: subject_id: missing: R2 requires a subject; set the event's subject or configure a default subject
	// false [subject_id unspecified actor system data {}] [ce_defaulted subject_id,actor,data]
	// event_id correlation_id event_type version
}

// Retention is each seed's: R1 streams by length (R6), per-category streams by age (E8).
func ExampleRetention() {
	var r streams.Retention // the defaults
	fmt.Println(r.For("koder:events:id"))
	fmt.Println(r.For("events.user"))
	fmt.Println(r.Describe(streams.Selection{Naming: streams.NamingCategory}))
	// Output:
	// 100000 0s
	// 0 168h0m0s
	// MINID ~ 7 days (E8)
}
