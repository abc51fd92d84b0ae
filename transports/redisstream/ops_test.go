package redisstream

import (
	"context"
	"testing"
	"time"

	"github.com/koder/eventhub/internal/streams/streamtest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
)

// The operator views W3 asks for, through the suite kdbstream shares.

func TestW3_DLQReplayAllAndPurge(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	src := testenv.Name(t)
	t.Cleanup(func() { c.Del(context.Background(), src, src+streams.DLQSuffix) })
	streamtest.W3DLQOperations(t, harness(t),
		func(dlq string) streams.DLQ[DeadLetter] { return NewDLQ(c, dlq) },
		func(dl DeadLetter) streamtest.DeadLetterView {
			return streamtest.DeadLetterView{ID: dl.ID, Error: dl.Error, Reason: dl.Reason, SourceStream: dl.SourceStream,
				Group: dl.Group, OriginalID: dl.OriginalID, Fields: dl.Fields, Deliveries: dl.Deliveries}
		})
}

func TestW3_StreamStatus(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	t.Cleanup(func() { c.Del(context.Background(), testenv.Name(t)) })
	streamtest.W3StreamStatus(t, harness(t), func(ctx context.Context, stream string) (streams.StreamStatus, error) {
		return ReadStatus(ctx, c, stream)
	})
}

func TestW3_TransportStatus(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := testenv.Context(t, time.Minute)
	stream := testenv.Name(t)
	t.Cleanup(func() { c.Del(context.Background(), stream) })
	tr, err := New(c, Config{Stream: stream})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	if err := tr.Send(ctx, newEvents(t, 2)); err != nil {
		t.Fatal(err)
	}
	st, err := tr.Status(ctx)
	if err != nil || st == nil || st.Stream != stream || st.Length != 2 {
		t.Fatalf("Status = %+v, %v", st, err)
	}
	byCategory, err := New(c, Config{Naming: streams.NamingCategory})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = byCategory.Close() })
	if st, err := byCategory.Status(ctx); st != nil || err != nil {
		t.Fatalf("Status under category naming = %+v, %v; want nil (no single stream)", st, err)
	}
}

func TestW3_TransportDLQ(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	for cfg, want := range map[*Config]string{
		{Stream: "orders"}:                 "orders:dlq",
		{Service: "id"}:                    "koder:events:id:dlq",
		{Naming: streams.NamingCategory}:   streams.CategoryDLQ,
		{Namer: streams.Fixed("by-namer")}: "",
	} {
		tr, err := New(c, *cfg)
		if err != nil {
			t.Fatal(err)
		}
		d := tr.DLQ()
		if (want == "") != (d == nil) || (d != nil && d.Stream() != want) {
			t.Errorf("%+v: DLQ = %v, want stream %q", *cfg, d, want)
		}
		_ = tr.Close()
	}
}
