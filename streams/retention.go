package streams

import (
	"fmt"
	"strings"
	"time"
)

// RetentionE8 is seed 001's stream retention (E8): per-category streams keep 7 days.
const RetentionE8 = 7 * 24 * time.Hour

// IsCategoryStream reports whether stream follows seed 001's per-category convention
// ("events.user"), whose retention is by age (E8) rather than by length (R6).
func IsCategoryStream(stream string) bool { return strings.HasPrefix(stream, CategoryPrefix) }

// Retention is the trimming part of a publisher Config, shared by both transports so
// that switching buses (R9) changes no retention. Each seed states its own: R1's
// per-service streams keep about the newest 100000 entries (R6: XADD MAXLEN ~ 100000);
// seed 001's per-category streams keep 7 days (E8), trimmed by age (MINID ~). A zero
// field means the default of the stream's convention, so one transport writing both
// kinds of stream (a Namer) trims each by its own rule.
type Retention struct {
	// MaxLen caps each stream at about this many entries. 0: DefaultMaxLen for R1 and
	// other streams, no cap for per-category ones; negative: no cap.
	MaxLen int64
	// MinIDAge trims entries older than this. 0: RetentionE8 for per-category streams,
	// no age trim for others. Negative values are refused (Selection.Validate).
	MinIDAge time.Duration
}

// For returns the trimming of stream: maxLen 0 means no length cap, age 0 no age trim.
func (r Retention) For(stream string) (maxLen int64, age time.Duration) {
	category := IsCategoryStream(stream)
	switch {
	case r.MaxLen > 0:
		maxLen = r.MaxLen
	case r.MaxLen == 0 && !category:
		maxLen = DefaultMaxLen
	}
	switch {
	case r.MinIDAge > 0:
		age = r.MinIDAge
	case r.MinIDAge == 0 && category:
		age = RetentionE8
	}
	return maxLen, age
}

// Resolve returns r with its defaults filled in for the streams sel writes, when those
// are known without an event (every selection but a Namer): a MaxLen of -1 then means
// no cap. For a Namer r is returned as is and For decides per stream.
func (r Retention) Resolve(sel Selection) Retention {
	stream := sel.probeStream()
	if stream == "" || r.MinIDAge < 0 { // a negative age is left for Validate to report
		return r
	}
	maxLen, age := r.For(stream)
	if maxLen == 0 {
		maxLen = -1
	}
	return Retention{MaxLen: maxLen, MinIDAge: age}
}

// Describe says in one line how sel's streams are trimmed, for operators (`hub lint`,
// docs): "MAXLEN ~ 100000 (R6)", "MINID ~ 7 days (E8)", both, or "none".
func (r Retention) Describe(sel Selection) string {
	stream := sel.probeStream()
	if stream == "" {
		return fmt.Sprintf("per stream: %s for per-category streams, %s for others",
			describe(r.For(CategoryPrefix+"x")), describe(r.For(ReservedPrefix+"x")))
	}
	return describe(r.For(stream))
}

func describe(maxLen int64, age time.Duration) string {
	var parts []string
	if maxLen > 0 {
		s := fmt.Sprintf("MAXLEN ~ %d", maxLen)
		if maxLen == DefaultMaxLen {
			s += " (R6)"
		}
		parts = append(parts, s)
	}
	if age > 0 {
		s := "MINID ~ " + age.String()
		if age == RetentionE8 {
			s = "MINID ~ 7 days (E8)"
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "none (streams grow until trimmed by hand)"
	}
	return strings.Join(parts, " and ")
}

// probeStream is a stream sel writes, standing for all of them: its fixed stream, any
// per-category stream under category naming, or "" when a Namer decides per event.
func (s Selection) probeStream() string {
	if fixed := s.FixedStream(); fixed != "" {
		return fixed
	}
	if s.Namer == nil && s.Naming == NamingCategory {
		return CategoryPrefix + "x"
	}
	return ""
}
