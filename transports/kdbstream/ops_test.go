package kdbstream

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/streams/streamtest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// The operator views W3 asks for, through the suite the Redis transport shares, on both
// databases.

func TestW3_DLQOperations(t *testing.T) {
	runContract(t, func(t *testing.T, h streamtest.Harness) {
		eng := h.Backend.(*engine.Engine)
		streamtest.W3DLQOperations(t, h,
			func(dlq string) streams.DLQ[DeadLetter] { return NewDLQ(eng, dlq) },
			func(dl DeadLetter) streamtest.DeadLetterView {
				return streamtest.DeadLetterView{ID: dl.ID, Error: dl.Error, Reason: dl.Reason, SourceStream: dl.SourceStream,
					Group: dl.Group, OriginalID: dl.OriginalID, Fields: dl.Fields, Deliveries: dl.Deliveries}
			})
	})
}

func TestW3_StreamStatus(t *testing.T) {
	runContract(t, func(t *testing.T, h streamtest.Harness) {
		eng := h.Backend.(*engine.Engine)
		streamtest.W3StreamStatus(t, h, func(ctx context.Context, stream string) (streams.StreamStatus, error) {
			return ReadStatus(ctx, eng, stream)
		})
	})
}

func TestW3_TransportStatus(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, time.Minute)
	tr, err := OpenWith(ctx, "kdbstream://"+filepath.Join(t.TempDir(), "events.db"), Config{Service: "id"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	if err := tr.Send(ctx, []*cloudevent.Event{streamtest.NewEvent(t, "user.created", "u1")}); err != nil {
		t.Fatal(err)
	}
	st, err := tr.Status(ctx)
	if err != nil || st == nil || st.Stream != "koder:events:id" || st.Length != 1 || st.Groups != nil {
		t.Fatalf("Status = %+v, %v", st, err)
	}
	byCategory, err := New(tr.Engine(), Config{Naming: streams.NamingCategory})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := byCategory.Status(ctx); st != nil || err != nil {
		t.Fatalf("Status under category naming = %+v, %v; want nil (no single stream)", st, err)
	}
}

func TestW3_TransportDLQ(t *testing.T) {
	t.Parallel()
	eng := openEngine(t, engine.DriverSQLite)
	for cfg, want := range map[*Config]string{
		{Stream: "orders"}:               "orders:dlq",
		{Service: "id"}:                  "koder:events:id:dlq",
		{Naming: streams.NamingCategory}: "events.dlq",
	} {
		tr, err := New(eng, *cfg)
		if err != nil {
			t.Fatal(err)
		}
		if d := tr.DLQ(); d == nil || d.Stream() != want {
			t.Errorf("%+v: DLQ = %v, want stream %q", *cfg, d, want)
		}
	}
}
