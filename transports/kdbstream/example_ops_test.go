package kdbstream_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// A dead-letter stream on the engine, operated as redisstream.DLQ operates Redis's:
// list, inspect, replay one or all, purge (W3).
func ExampleNewDLQ() {
	dir, _ := os.MkdirTemp("", "kdbstream")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	eng, err := engine.Open(ctx, engine.Config{Driver: engine.DriverSQLite, DSN: filepath.Join(dir, "events.db")})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	// What a consumer writes when it gives up on an entry of koder:events:id.
	orig := map[string]string{"type": "user.created", "event_id": "evt_1", "occurred_at": "2026-01-01T00:00:00Z",
		"tenant_id": "t1", "subject_id": "u1", "actor": "system", "data": `{}`}
	fields := streams.DeadLetterFields(orig, "downstream is broken", 4, "koder:events:id", "auth-erasure-cascade", "1-1", streams.ReasonMaxDeliveries)
	if _, _, err := eng.XAdd(ctx, engine.Add{Stream: "koder:events:id:dlq", Values: fields}); err != nil {
		log.Fatal(err)
	}

	dlq := kdbstream.NewDLQ(eng, "koder:events:id:dlq")
	letters, err := dlq.List(ctx, "", 10)
	if err != nil {
		log.Fatal(err)
	}
	for _, dl := range letters {
		fmt.Println(dl.Fields["event_id"], dl.Reason, dl.Error, dl.Deliveries)
	}
	n, err := dlq.ReplayAll(ctx)
	if err != nil {
		log.Fatal(err)
	}
	st, _ := kdbstream.ReadStatus(ctx, eng, "koder:events:id")
	fmt.Println("replayed", n, "- source stream length", st.Length)
	// Output:
	// evt_1 max_deliveries downstream is broken 4
	// replayed 1 - source stream length 1
}

// The stream a transport writes, with its groups' pending counts and lag.
func ExampleTransport_Status() {
	var tr *kdbstream.Transport // from kdbstream.Open or New
	st, err := tr.Status(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	if st != nil { // nil: category naming writes no single stream
		for _, g := range st.Groups {
			fmt.Println(st.Stream, st.Length, g.Name, g.Pending, g.Lag)
		}
	}
}
