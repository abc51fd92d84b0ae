package transporttest

import (
	"testing"

	"github.com/koder/eventhub/cloudevent"
)

func TestEventsAreValid(t *testing.T) {
	t.Parallel()
	for _, ev := range append([]*cloudevent.Event{FullEvent(), BinaryEvent(), MinimalEvent()}, NewEvents(3)...) {
		if err := ev.Validate(); err != nil {
			t.Errorf("%s: %v", ev.Type, err)
		}
	}
	full := FullEvent()
	if d := Diff(full, full.Clone()); d != "" {
		t.Errorf("Diff of a clone: %s", d)
	}
	changed := full.Clone()
	changed.Extensions["count"] = "-7"
	changed.Time = changed.Time.Add(1)
	if d := Diff(full, changed); d == "" {
		t.Error("Diff missed a changed extension type and time")
	}
}
