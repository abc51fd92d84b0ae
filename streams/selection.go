package streams

import (
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

// Validate reports the first invalid field by name, prefixed by transport ("redisstream").
// Exactly one of Namer, Stream, Naming "category" or Naming "service" (with Service)
// must pick the stream.
func (s Selection) Validate(transport string) error {
	sources := 0
	for _, set := range []bool{s.Namer != nil, s.Stream != "", s.Naming == NamingCategory, s.Naming == NamingService} {
		if set {
			sources++
		}
	}
	switch {
	case s.Naming != "" && s.Naming != NamingService && s.Naming != NamingCategory:
		return hub.Errorf(hub.InvalidArgument, "%s: Config.Naming must be %q or %q, got %q", transport, NamingService, NamingCategory, s.Naming)
	case sources == 0:
		return hub.Errorf(hub.InvalidArgument, "%s: one of Config.Service, Config.Stream, Config.Naming=category or Config.Namer is required", transport)
	case sources > 1:
		return hub.Errorf(hub.InvalidArgument, "%s: Config.Service/Naming, Config.Stream and Config.Namer are exclusive; set one", transport)
	case s.Naming == NamingService && ValidateService(s.Service) != nil:
		return hub.Errorf(hub.InvalidArgument, "%s: Config.Service: %v", transport, ValidateService(s.Service))
	case s.Stream != "" && ValidateStream(s.Stream) != nil:
		return hub.Errorf(hub.InvalidArgument, "%s: Config.Stream: %v", transport, ValidateStream(s.Stream))
	case s.MinIDAge < 0:
		return hub.Errorf(hub.InvalidArgument, "%s: Config.MinIDAge must not be negative, got %s", transport, s.MinIDAge)
	}
	return nil
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
