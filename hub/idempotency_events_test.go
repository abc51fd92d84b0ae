package hub

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
)

func digestEvent() *cloudevent.Event {
	ev := cloudevent.New("/shop", "shop.order.placed")
	ev.ID = "evt_01JV2Q5P3B8M6X4T9K7R2D1C0A"
	ev.Time = time.Date(2026, 5, 14, 12, 34, 56, 789000000, time.UTC)
	ev.SetTenantID("acme").SetActor("system")
	ev.Data = []byte(`{"order":"o1","lines":[1,2]}`)
	return ev
}

// TestR5_ContentDigest pins what "identical content" means for the publish-side window.
func TestR5_ContentDigest(t *testing.T) {
	t.Parallel()
	base := ContentDigest(digestEvent())
	same := map[string]func(*cloudevent.Event){
		"Clone":                   func(*cloudevent.Event) {},
		"JSONWhitespace":          func(e *cloudevent.Event) { e.Data = []byte("{ \"order\": \"o1\",\n \"lines\": [1, 2] }") },
		"AbsentContentTypeIsJSON": func(e *cloudevent.Event) { e.DataContentType = "" },
		"TraceContextIgnored": func(e *cloudevent.Event) {
			e.SetExtension(cloudevent.ExtTraceParent, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
		},
		"TimeZoneIsTheSameInstant": func(e *cloudevent.Event) { e.Time = e.Time.In(time.FixedZone("x", 3600)) },
	}
	for name, mutate := range same {
		ev := digestEvent()
		mutate(ev)
		if ContentDigest(ev) != base {
			t.Errorf("%s: digest changed, want identical", name)
		}
	}
	differ := map[string]func(*cloudevent.Event){
		"Data":           func(e *cloudevent.Event) { e.Data = []byte(`{"order":"o2","lines":[1,2]}`) },
		"DataKeyOrder":   func(e *cloudevent.Event) { e.Data = []byte(`{"lines":[1,2],"order":"o1"}`) },
		"Type":           func(e *cloudevent.Event) { e.Type = "shop.order.paid" },
		"Source":         func(e *cloudevent.Event) { e.Source = "/other" },
		"Subject":        func(e *cloudevent.Event) { e.Subject = "o1" },
		"Time":           func(e *cloudevent.Event) { e.Time = e.Time.Add(time.Microsecond) },
		"NoTime":         func(e *cloudevent.Event) { e.Time = time.Time{} },
		"Tenant":         func(e *cloudevent.Event) { e.SetTenantID("globex") },
		"NewExtension":   func(e *cloudevent.Event) { e.SetExtension("region", "eu") },
		"ExtensionType":  func(e *cloudevent.Event) { e.SetExtension("actor", int32(1)) },
		"ContentType":    func(e *cloudevent.Event) { e.DataContentType = "application/vnd.x+json" },
		"BinaryData":     func(e *cloudevent.Event) { e.DataContentType = "application/octet-stream"; e.Data = []byte{1, 2} },
		"DataSchema":     func(e *cloudevent.Event) { e.DataSchema = "https://example.com/s" },
		"NameValueShift": func(e *cloudevent.Event) { e.SetExtension("actor", ""); e.SetExtension("actorx", "system") },
	}
	for name, mutate := range differ {
		ev := digestEvent()
		mutate(ev)
		if ContentDigest(ev) == base {
			t.Errorf("%s: digest unchanged, want different", name)
		}
	}
}

// TestR5_MemoryEventDeduper: accepted once per (tenant, id) within the window; other
// content under the id is a Conflict that publishes nothing; a failed publish records
// nothing; concurrent identical requests publish once; the window expires and is bounded.
func TestR5_MemoryEventDeduper(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	key := func(tenant, id, content string) EventKey {
		ev := digestEvent()
		ev.SetTenantID(tenant)
		ev.ID = id
		ev.Data = []byte(`"` + content + `"`)
		return KeyOf(ev)
	}
	admit := func(d EventDeduper, keys ...EventKey) ([]Admission, []int, error) {
		var got []int
		as, err := d.Admit(ctx, keys, time.Hour, func(_ context.Context, fresh []int) error { got = fresh; return nil })
		return as, got, err
	}
	t.Run("DuplicateAndConflict", func(t *testing.T) {
		t.Parallel()
		d := NewMemoryEventDeduper(0)
		as, fresh, _ := admit(d, key("a", "e1", "x"), key("a", "e2", "y"))
		if !reflect.DeepEqual(as, []Admission{Admitted, Admitted}) || !reflect.DeepEqual(fresh, []int{0, 1}) {
			t.Fatalf("first: %v %v", as, fresh)
		}
		as, fresh, _ = admit(d, key("a", "e1", "x"), key("a", "e3", "z"), key("b", "e1", "x"))
		if !reflect.DeepEqual(as, []Admission{Duplicate, Admitted, Admitted}) || !reflect.DeepEqual(fresh, []int{1, 2}) {
			t.Fatalf("second: %v %v (tenants are separate windows)", as, fresh)
		}
		as, fresh, _ = admit(d, key("a", "e4", "n"), key("a", "e2", "CHANGED"))
		if !reflect.DeepEqual(as, []Admission{Admitted, Conflict}) || fresh != nil {
			t.Fatalf("conflict: %v, published %v (want nothing)", as, fresh)
		}
		if _, fresh, _ := admit(d, key("a", "e4", "n")); !reflect.DeepEqual(fresh, []int{0}) {
			t.Fatalf("the refused request recorded e4: %v", fresh)
		}
	})
	t.Run("RepeatInsideOneBatch", func(t *testing.T) {
		t.Parallel()
		d := NewMemoryEventDeduper(0)
		as, fresh, _ := admit(d, key("a", "e1", "x"), key("a", "e1", "x"))
		if !reflect.DeepEqual(as, []Admission{Admitted, Duplicate}) || !reflect.DeepEqual(fresh, []int{0}) {
			t.Fatalf("%v %v", as, fresh)
		}
		as, fresh, _ = admit(d, key("a", "e2", "x"), key("a", "e2", "y"))
		if !reflect.DeepEqual(as, []Admission{Admitted, Conflict}) || fresh != nil {
			t.Fatalf("%v %v", as, fresh)
		}
	})
	t.Run("FailedPublishRecordsNothing", func(t *testing.T) {
		t.Parallel()
		d := NewMemoryEventDeduper(0)
		boom := errors.New("store down")
		_, err := d.Admit(ctx, []EventKey{key("a", "e1", "x")}, time.Hour, func(context.Context, []int) error { return boom })
		if !errors.Is(err, boom) {
			t.Fatalf("err %v", err)
		}
		if as, fresh, _ := admit(d, key("a", "e1", "x")); as[0] != Admitted || len(fresh) != 1 {
			t.Fatalf("retry after a failed publish: %v", as)
		}
	})
	t.Run("ConcurrentIdenticalPublishOnce", func(t *testing.T) {
		t.Parallel()
		d := NewMemoryEventDeduper(0)
		var published atomic.Int32
		release := make(chan struct{})
		var wg sync.WaitGroup
		results := make([]Admission, 8)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				as, err := d.Admit(ctx, []EventKey{key("a", "e1", "x")}, time.Hour, func(context.Context, []int) error {
					published.Add(1)
					<-release
					return nil
				})
				if err != nil {
					t.Error(err)
				}
				results[i] = as[0]
			}()
		}
		testWait(t, func() bool { return published.Load() == 1 })
		close(release)
		wg.Wait()
		dups := 0
		for _, a := range results {
			if a == Duplicate {
				dups++
			}
		}
		if published.Load() != 1 || dups != 7 {
			t.Fatalf("published %d times, %d duplicates: %v", published.Load(), dups, results)
		}
	})
	t.Run("WindowExpiresAndIsBounded", func(t *testing.T) {
		t.Parallel()
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		d := NewMemoryEventDeduper(2)
		d.now = func() time.Time { return now }
		admit(d, key("a", "e1", "x"))
		now = now.Add(time.Hour)
		if as, _, _ := admit(d, key("a", "e1", "other")); as[0] != Admitted {
			t.Fatalf("at the window's end: %v, want Admitted", as)
		}
		admit(d, key("a", "e2", "x"), key("a", "e3", "x"))
		if d.Len() != 2 {
			t.Fatalf("Len %d, want the bound 2", d.Len())
		}
		if as, _, _ := admit(d, key("a", "e1", "x")); as[0] != Admitted {
			t.Fatalf("the oldest id was not forgotten first: %v", as)
		}
	})
	t.Run("WaiterGivesUpWithItsContext", func(t *testing.T) {
		t.Parallel()
		d := NewMemoryEventDeduper(0)
		hold, release := make(chan struct{}), make(chan struct{})
		go d.Admit(ctx, []EventKey{key("a", "e1", "x")}, time.Hour, func(context.Context, []int) error { close(hold); <-release; return nil })
		<-hold
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := d.Admit(cctx, []EventKey{key("a", "e1", "x")}, time.Hour, func(context.Context, []int) error { return nil }); !errors.Is(err, context.Canceled) {
			t.Errorf("err %v", err)
		}
		close(release)
	})
}

func testWait(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}
