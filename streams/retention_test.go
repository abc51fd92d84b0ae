package streams_test

import (
	"testing"
	"time"

	"github.com/koder/eventhub/streams"
)

// TestE8_RetentionDefaults pins each seed's retention: R1 streams MAXLEN ~ 100000 (R6),
// per-category streams 7 days by MINID (E8); explicit values win, a negative MaxLen
// disables the cap.
func TestE8_RetentionDefaults(t *testing.T) {
	t.Parallel()
	week := 7 * 24 * time.Hour
	for _, tc := range []struct {
		name   string
		r      streams.Retention
		stream string
		maxLen int64
		age    time.Duration
	}{
		{"R1Default", streams.Retention{}, "koder:events:id", 100000, 0},
		{"OtherDefault", streams.Retention{}, "orders", 100000, 0},
		{"CategoryDefault", streams.Retention{}, "events.user", 0, week},
		{"CategoryWithCap", streams.Retention{MaxLen: 5000}, "events.user", 5000, week},
		{"CategoryLonger", streams.Retention{MinIDAge: 30 * 24 * time.Hour}, "events.user", 0, 30 * 24 * time.Hour},
		{"R1WithAge", streams.Retention{MinIDAge: time.Hour}, "koder:events:id", 100000, time.Hour},
		{"NoCap", streams.Retention{MaxLen: -1}, "koder:events:id", 0, 0},
	} {
		if maxLen, age := tc.r.For(tc.stream); maxLen != tc.maxLen || age != tc.age {
			t.Errorf("%s: For(%s) = %d, %s; want %d, %s", tc.name, tc.stream, maxLen, age, tc.maxLen, tc.age)
		}
	}
	t.Run("Resolve", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			sel  streams.Selection
			want streams.Retention
		}{
			{streams.Selection{Service: "id", Naming: streams.NamingService}, streams.Retention{MaxLen: 100000}},
			{streams.Selection{Naming: streams.NamingCategory}, streams.Retention{MaxLen: -1, MinIDAge: week}},
			{streams.Selection{Stream: "events.session"}, streams.Retention{MaxLen: -1, MinIDAge: week}},
			{streams.Selection{Namer: streams.PerCategory()}, streams.Retention{}}, // decided per stream
		} {
			if got := (streams.Retention{}).Resolve(tc.sel); got != tc.want {
				t.Errorf("Resolve(%+v) = %+v, want %+v", tc.sel, got, tc.want)
			}
		}
	})
	t.Run("Describe", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			sel  streams.Selection
			want string
		}{
			{streams.Selection{Service: "id", Naming: streams.NamingService}, "MAXLEN ~ 100000 (R6)"},
			{streams.Selection{Naming: streams.NamingCategory}, "MINID ~ 7 days (E8)"},
			{streams.Selection{Namer: streams.PerCategory()}, "per stream: MINID ~ 7 days (E8) for per-category streams, MAXLEN ~ 100000 (R6) for others"},
		} {
			if got := (streams.Retention{}).Describe(tc.sel); got != tc.want {
				t.Errorf("Describe(%+v) = %q, want %q", tc.sel, got, tc.want)
			}
		}
		if got := (streams.Retention{MaxLen: -1}).Describe(streams.Selection{Stream: "s"}); got != "none (streams grow until trimmed by hand)" {
			t.Errorf("Describe without trimming = %q", got)
		}
	})
}
