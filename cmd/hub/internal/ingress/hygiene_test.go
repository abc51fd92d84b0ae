package ingress

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// withDedupe is setup with an in-memory dedupe window on the handler.
func withDedupe(t *testing.T) *testBundle {
	t.Helper()
	b := setup(t)
	b.handler.Deduper = hub.NewMemoryEventDeduper(0)
	b.handler.MaxBodyBytes = 1 << 16
	return b
}

// TestR5_IngressAcceptsAnEventIDOnce: the same event id twice within the window is
// accepted once (the answer lists it as a duplicate, nothing is published again);
// other content under the id is a 409 and nothing of that request is published.
func TestR5_IngressAcceptsAnEventIDOnce(t *testing.T) {
	t.Parallel()
	changed := strings.Replace(validErased, `"user_id":"u1"`, `"user_id":"u2"`, 1)
	t.Run("SameEventTwiceIsADuplicate", func(t *testing.T) {
		t.Parallel()
		b := withDedupe(t)
		for i := 0; i < 2; i++ {
			w, _ := post(t, b.handler, ContentTypeStructured, nil, validErased)
			if w.Code != http.StatusAccepted {
				t.Fatalf("POST %d: status %d %s", i, w.Code, w.Body)
			}
			var a Accepted
			_ = json.Unmarshal(w.Body.Bytes(), &a)
			if i == 1 && (a.Accepted != 0 || strings.Join(a.Duplicates, ",") != "evt_1" || strings.Join(a.IDs, ",") != "evt_1") {
				t.Errorf("second answer %s, want accepted 0 and evt_1 a duplicate", w.Body)
			}
		}
		if len(b.received) != 1 {
			t.Errorf("published %d times, want once", len(b.received))
		}
	})
	t.Run("SameEventInBinaryModeIsADuplicate", func(t *testing.T) {
		t.Parallel()
		b := withDedupe(t)
		post(t, b.handler, ContentTypeStructured, nil, validErased)
		w, _ := post(t, b.handler, "application/json", map[string]string{
			"ce-specversion": "1.0", "ce-id": "evt_1", "ce-source": "/id", "ce-type": "identity.user.erased", "ce-tenantid": "acme",
		}, `{ "erasure_id": "e1", "user_id": "u1" }`)
		if w.Code != http.StatusAccepted || !strings.Contains(w.Body.String(), `"duplicates":["evt_1"]`) {
			t.Errorf("binary repeat: %d %s", w.Code, w.Body)
		}
		if len(b.received) != 1 {
			t.Errorf("published %d times", len(b.received))
		}
	})
	t.Run("OtherContentIs409", func(t *testing.T) {
		t.Parallel()
		b := withDedupe(t)
		post(t, b.handler, ContentTypeStructured, nil, validErased)
		w, p := post(t, b.handler, ContentTypeStructured, nil, changed)
		if w.Code != http.StatusConflict || len(p.Errors) != 1 || p.Errors[0].Pointer != "/id" || p.Errors[0].Code != CodeIDConflict ||
			!strings.Contains(p.Errors[0].Detail, `"acme"`) || p.Type != ProblemTypeBase+"conflict" {
			t.Errorf("status %d problem %+v", w.Code, p)
		}
		if len(b.received) != 1 {
			t.Errorf("published %d times, want once", len(b.received))
		}
	})
	t.Run("BatchWithARepeat", func(t *testing.T) {
		t.Parallel()
		b := withDedupe(t)
		post(t, b.handler, ContentTypeStructured, nil, validErased)
		third := strings.Replace(validErased, "evt_1", "evt_3", 1)
		w, _ := post(t, b.handler, ContentTypeBatch, nil, "["+validErased+","+third+","+third+"]")
		var a Accepted
		_ = json.Unmarshal(w.Body.Bytes(), &a)
		if w.Code != http.StatusAccepted || a.Accepted != 1 || strings.Join(a.IDs, ",") != "evt_1,evt_3,evt_3" || strings.Join(a.Duplicates, ",") != "evt_1,evt_3" {
			t.Errorf("status %d body %s", w.Code, w.Body)
		}
		if len(b.received) != 2 {
			t.Errorf("published %d events, want 2", len(b.received))
		}
	})
	t.Run("BatchWithAConflictStoresNothing", func(t *testing.T) {
		t.Parallel()
		b := withDedupe(t)
		post(t, b.handler, ContentTypeStructured, nil, validErased)
		fresh := strings.Replace(validErased, "evt_1", "evt_4", 1)
		w, p := post(t, b.handler, ContentTypeBatch, nil, "["+fresh+","+changed+"]")
		if w.Code != http.StatusConflict || len(p.Errors) != 1 || p.Errors[0].Pointer != "/1/id" {
			t.Fatalf("status %d problem %+v", w.Code, p)
		}
		if len(b.received) != 1 {
			t.Fatalf("part of a refused batch was published")
		}
		// evt_4 was not recorded either: it is new next time.
		w, _ = post(t, b.handler, ContentTypeStructured, nil, fresh)
		if w.Code != http.StatusAccepted || strings.Contains(w.Body.String(), "duplicates") {
			t.Errorf("evt_4 after the refused batch: %d %s", w.Code, w.Body)
		}
	})
	t.Run("TenantsHaveTheirOwnIDs", func(t *testing.T) {
		t.Parallel()
		b := withDedupe(t)
		post(t, b.handler, ContentTypeStructured, nil, validErased)
		other := strings.Replace(changed, `"tenantid":"acme"`, `"tenantid":"globex"`, 1)
		if w, _ := post(t, b.handler, ContentTypeStructured, nil, other); w.Code != http.StatusAccepted || strings.Contains(w.Body.String(), "duplicates") {
			t.Errorf("the same id under another tenant: %d %s", w.Code, w.Body)
		}
	})
	t.Run("FailedPublishIsNotRemembered", func(t *testing.T) {
		t.Parallel()
		b := withDedupe(t)
		b.hub.Close()
		if w, _ := post(t, b.handler, ContentTypeStructured, nil, validErased); w.Code != http.StatusServiceUnavailable {
			t.Fatalf("status %d", w.Code)
		}
		h2 := setup(t)
		h2.handler.Deduper = b.handler.Deduper // the same window, a live hub
		if w, _ := post(t, h2.handler, ContentTypeStructured, nil, validErased); w.Code != http.StatusAccepted || strings.Contains(w.Body.String(), "duplicates") {
			t.Errorf("retry after a 503: %d %s, want accepted as new", w.Code, w.Body)
		}
	})
	t.Run("WithoutDeduperEveryRepeatIsPublished", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		post(t, b.handler, ContentTypeStructured, nil, validErased)
		if w, _ := post(t, b.handler, ContentTypeStructured, nil, changed); w.Code != http.StatusAccepted {
			t.Errorf("status %d", w.Code)
		}
		if len(b.received) != 2 {
			t.Errorf("published %d", len(b.received))
		}
	})
}

// TestC1_IngressIDRules: ids are at most MaxIDLength characters; with RequireULIDIDs only
// evt_<ULID>; each a 400 naming the id's pointer, together with every other problem.
func TestC1_IngressIDRules(t *testing.T) {
	t.Parallel()
	withID := func(id string) string { return strings.Replace(validErased, `"evt_1"`, `"`+id+`"`, 1) }
	t.Run("AtMost256Characters", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.handler.MaxBodyBytes = 1 << 16
		if w, _ := post(t, b.handler, ContentTypeStructured, nil, withID(strings.Repeat("é", MaxIDLength))); w.Code != http.StatusAccepted {
			t.Errorf("256 characters: %d %s", w.Code, w.Body)
		}
		long := withID(strings.Repeat("x", MaxIDLength+1))
		w, p := post(t, b.handler, ContentTypeStructured, nil, long)
		if w.Code != http.StatusBadRequest || strings.Join(pointers(p), " ") != "/id" || !strings.Contains(p.Errors[0].Detail, "at most 256") {
			t.Errorf("257 characters: %d %+v", w.Code, p)
		}
		badData := strings.Replace(long, `"erasure_id":"e1",`, ``, 1)
		w, p = post(t, b.handler, ContentTypeBatch, nil, "["+validErased+","+badData+"]")
		if w.Code != http.StatusBadRequest || strings.Join(pointers(p), " ") != "/1/id /1/data/erasure_id" {
			t.Errorf("batch: %d pointers %v", w.Code, pointers(p))
		}
		if len(b.received) != 1 {
			t.Errorf("published %d, want only the valid single event", len(b.received))
		}
	})
	t.Run("RequireULIDIDs", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.handler.RequireULIDIDs = true
		ulid := cloudevent.NewID()
		for _, id := range []string{"evt_1", strings.TrimPrefix(ulid, "evt_"), "evt_" + strings.Repeat("Z", 26), "EVT_" + ulid[4:], ulid + "x"} {
			if w, p := post(t, b.handler, ContentTypeStructured, nil, withID(id)); w.Code != http.StatusBadRequest || strings.Join(pointers(p), " ") != "/id" {
				t.Errorf("%s: %d %+v", id, w.Code, p)
			}
		}
		if w, _ := post(t, b.handler, ContentTypeStructured, nil, withID(ulid)); w.Code != http.StatusAccepted {
			t.Errorf("%s: %d %s", ulid, w.Code, w.Body)
		}
		// Ids the hub generates have the form it requires.
		ev := cloudevent.New("/id", "identity.user.erased")
		if !isHubID(ev.ID) {
			t.Errorf("cloudevent.New id %q is not evt_<ULID>", ev.ID)
		}
	})
	t.Run("InvalidUTF8NamesTheField", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		bad := strings.Replace(validErased, `"tenantid":"acme"`, `"tenantid":"ac`+"\xff"+`me"`, 1)
		w, p := post(t, b.handler, ContentTypeStructured, nil, bad)
		if w.Code != http.StatusBadRequest || strings.Join(pointers(p), " ") != "/tenantid" || !strings.Contains(p.Errors[0].Detail, "UTF-8") {
			t.Errorf("structured: %d %+v", w.Code, p)
		}
		bad = strings.Replace(validErased, `"user_id":"u1"`, `"user_id":"\udc00"`, 1)
		if w, p := post(t, b.handler, ContentTypeBatch, nil, "["+validErased+","+bad+"]"); w.Code != http.StatusBadRequest || strings.Join(pointers(p), " ") != "/1/data" {
			t.Errorf("batch data: %d %v", w.Code, pointers(p))
		}
		w, p = post(t, b.handler, "application/json", map[string]string{
			"ce-specversion": "1.0", "ce-id": "evt_b", "ce-source": "/id", "ce-type": "identity.user.erased", "ce-tenantid": "ac%FFme",
		}, `{"erasure_id":"e1","user_id":"u1"}`)
		if w.Code != http.StatusBadRequest || strings.Join(pointers(p), " ") != "/tenantid" {
			t.Errorf("binary header: %d %+v", w.Code, p)
		}
		if len(b.received) != 0 {
			t.Error("an event with invalid UTF-8 was published")
		}
	})
}
