package streams

import (
	"errors"
	"time"

	"github.com/koder/eventhub/hub"
)

// Naming conventions selectable by name in a publisher Config's Naming field (and the
// URL's naming= parameter) of either transport.
const (
	NamingService  = "service"  // koder:events:<Service> (R1)
	NamingCategory = "category" // events.<first word of type> (E8)
)

// Selection is the stream-selection part of a publisher Config: which stream each
// event goes to and the age trim. The Redis and kdbstream transports share it (and
// so one validation and one naming rule), because R9 requires that switching buses
// changes no stream name. Each Config keeps its own flat fields (yaml keys and
// composite literals stay as they are) and hands them over through a Selection.
type Selection struct {
	Service  string
	Naming   string
	Stream   string
	Namer    Namer
	MinIDAge time.Duration
}

// DefaultNaming returns the Naming a Config defaults to: "service" when only Service
// is set, else naming unchanged.
func DefaultNaming(naming, service string) string {
	if naming == "" && service != "" {
		return NamingService
	}
	return naming
}

// Validate reports every invalid field by name (joined), each prefixed by transport ("redisstream").
// Exactly one of Namer, Stream, Naming "category" or Naming "service" (with Service)
// must pick the stream.
func (s Selection) Validate(transport string) error {
	sources := 0
	for _, set := range []bool{s.Namer != nil, s.Stream != "", s.Naming == NamingCategory, s.Naming == NamingService} {
		if set {
			sources++
		}
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, hub.Errorf(hub.InvalidArgument, "%s: "+format, append([]any{transport}, args...)...))
	}
	switch {
	case s.Naming != "" && s.Naming != NamingService && s.Naming != NamingCategory:
		bad("Config.Naming must be %q or %q, got %q", NamingService, NamingCategory, s.Naming)
	case sources == 0:
		bad("one of Config.Service, Config.Stream, Config.Naming=category or Config.Namer is required")
	case sources > 1:
		bad("Config.Service/Naming, Config.Stream and Config.Namer are exclusive; set one")
	}
	if s.Naming == NamingService && ValidateService(s.Service) != nil {
		bad("Config.Service: %v", ValidateService(s.Service))
	}
	if s.Stream != "" && ValidateStream(s.Stream) != nil {
		bad("Config.Stream: %v", ValidateStream(s.Stream))
	}
	if s.MinIDAge < 0 {
		bad("Config.MinIDAge must not be negative, got %s", s.MinIDAge)
	}
	return errors.Join(errs...)
}

// Resolve turns a valid Selection into one Namer.
func (s Selection) Resolve() Namer {
	switch {
	case s.Namer != nil:
		return s.Namer
	case s.Stream != "":
		return Fixed(s.Stream)
	case s.Naming == NamingCategory:
		return PerCategory()
	}
	return PerService(s.Service)
}

// FixedStream is the one stream every event goes to, or "" when the stream depends on
// the event (category naming, a Namer): what operators' status and tail views show.
func (s Selection) FixedStream() string {
	switch {
	case s.Namer != nil:
		return ""
	case s.Stream != "":
		return s.Stream
	case DefaultNaming(s.Naming, s.Service) == NamingService:
		return ReservedPrefix + s.Service
	}
	return ""
}

// DLQStream is the dead-letter stream of the selection: DLQStreamFor(FixedStream()), or
// CategoryDLQ under category naming; "" for a Namer, whose streams are its own.
func (s Selection) DLQStream() string {
	if fixed := s.FixedStream(); fixed != "" {
		return DLQStreamFor(fixed)
	}
	if s.Namer == nil && s.Naming == NamingCategory {
		return CategoryDLQ
	}
	return ""
}
