package streamtest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/streams"
)

// DeadLetterView is what the suite reads of a backend's DeadLetter type.
type DeadLetterView struct {
	ID, Error, Reason, SourceStream, Group, OriginalID string
	Fields                                             map[string]string
	Deliveries                                         int64
}

// W3DLQOperations fills a dead-letter stream by hand (streams.DeadLetterFields, the
// layout the consumer writes), then pages through it, inspects one entry, replays one
// and then every other (more than streams.DLQPage, so ReplayAll pages), and purges by
// id and whole. open returns the backend's DLQ on a stream; view reads one entry.
func W3DLQOperations[E any](t *testing.T, h Harness, open func(dlqStream string) streams.DLQ[E], view func(E) DeadLetterView) {
	ctx := testenv.Context(t, 2*time.Minute)
	src := testenv.Name(t)
	d := open(src + streams.DLQSuffix)
	add := func(i int) string {
		t.Helper()
		eventID := "evt_" + strconv.Itoa(i)
		orig := map[string]string{"type": "identity.user.erased", "event_id": eventID, "occurred_at": "2026-01-01T00:00:00Z",
			"tenant_id": "t1", "subject_id": "u1", "actor": "system", "data": `{}`}
		fields := streams.DeadLetterFields(orig, "boom", 4, src, "test-dlq", "1-"+strconv.Itoa(i), streams.ReasonMaxDeliveries)
		if err := h.Append(ctx, d.Stream(), fields...); err != nil {
			t.Fatal(err)
		}
		return eventID
	}
	total := streams.DLQPage + 3
	for i := range total {
		add(i)
	}
	if n, err := d.Len(ctx); err != nil || n != int64(total) {
		t.Fatalf("Len = %d, %v; want %d", n, err, total)
	}

	page, err := d.List(ctx, "", 2)
	if err != nil || len(page) != 2 {
		t.Fatalf("List page 1: %d, %v", len(page), err)
	}
	next, err := d.List(ctx, view(page[1]).ID, 10)
	if err != nil || len(next) != 10 || view(next[0]).Fields["event_id"] != "evt_2" {
		t.Fatalf("List page 2: %d entries, %v", len(next), err)
	}
	if all, err := d.List(ctx, "", 0); err != nil || len(all) != streams.DefaultDLQList {
		t.Fatalf("List with no count: %d, %v; want the default page %d", len(all), err, streams.DefaultDLQList)
	}

	got, err := d.Get(ctx, view(page[0]).ID)
	if err != nil {
		t.Fatal(err)
	}
	if v := view(got); v.Fields["event_id"] != "evt_0" || v.Error != "boom" || v.Reason != streams.ReasonMaxDeliveries ||
		v.SourceStream != src || v.Group != "test-dlq" || v.OriginalID != "1-0" || v.Deliveries != 4 {
		t.Fatalf("Get = %+v", v)
	}
	if _, err := d.Get(ctx, "1-1"); hub.Code(err) != hub.NotFound {
		t.Fatalf("Get of a missing id: %v, want NotFound", err)
	}

	if newID, err := d.Replay(ctx, view(got).ID); err != nil || newID == "" {
		t.Fatalf("Replay: %q, %v", newID, err)
	}
	if _, err := d.Replay(ctx, view(got).ID); hub.Code(err) != hub.NotFound {
		t.Fatalf("second Replay: %v, want NotFound", err)
	}
	n, err := d.ReplayAll(ctx)
	if err != nil || n != total-1 {
		t.Fatalf("ReplayAll = %d, %v; want %d", n, err, total-1)
	}
	if n, _ := d.Len(ctx); n != 0 {
		t.Fatalf("Len after ReplayAll = %d", n)
	}
	back, err := h.Range(ctx, src)
	if err != nil || len(back) != total {
		t.Fatalf("source stream after the replays: %d entries, %v; want %d", len(back), err, total)
	}
	if back[0]["event_id"] != "evt_0" || back[1]["event_id"] != "evt_1" || back[0]["error"] != "" {
		t.Fatalf("replayed entries are not the originals, oldest first: %v %v", back[0], back[1])
	}

	add(1000)
	add(1001)
	add(1002)
	page, _ = d.List(ctx, "", 1)
	if n, err := d.Purge(ctx, view(page[0]).ID); err != nil || n != 1 {
		t.Fatalf("Purge one: %d, %v", n, err)
	}
	if n, err := d.Purge(ctx); err != nil || n != 2 {
		t.Fatalf("Purge all: %d, %v", n, err)
	}
	if n, _ := d.Len(ctx); n != 0 {
		t.Fatalf("Len after purge = %d", n)
	}
}

// W3StreamStatus checks a backend's stream status: a missing stream has length 0 and
// no group; a stream with a group that read two of three entries reports them pending
// and one not delivered (lag).
func W3StreamStatus(t *testing.T, h Harness, status func(ctx context.Context, stream string) (streams.StreamStatus, error)) {
	ctx := testenv.Context(t, time.Minute)
	stream := testenv.Name(t)
	st, err := status(ctx, stream)
	if err != nil || st.Stream != stream || st.Length != 0 || st.Groups != nil {
		t.Fatalf("status of a missing stream = %+v, %v", st, err)
	}
	for i := range 3 {
		if err := h.Append(ctx, stream, "n", strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	group := "test-status"
	if err := h.Backend.CreateGroup(ctx, stream, group, "0"); err != nil {
		t.Fatal(err)
	}
	read, err := h.Backend.ReadGroup(ctx, stream, group, "c1", ">", 2, 0)
	if err != nil || len(read) != 2 {
		t.Fatalf("ReadGroup: %d, %v", len(read), err)
	}
	st, err = status(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	want := streams.GroupStatus{Name: group, Consumers: 1, Pending: 2, Lag: 1, LastDeliveredID: read[1].ID}
	if st.Length != 3 || len(st.Groups) != 1 || st.Groups[0] != want {
		t.Fatalf("status = %+v, want length 3 and %+v", st, want)
	}
}
