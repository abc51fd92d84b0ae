package streams

import (
	"regexp"
	"strings"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// Stream naming conventions.
const (
	// ReservedPrefix starts every per-service stream (R1: "koder:events:<service>").
	// It is reserved: a key under it must be exactly a service's stream or its DLQ.
	ReservedPrefix = "koder:events:"
	// CategoryPrefix starts seed 001's per-category streams (E8: "events.user").
	CategoryPrefix = "events."
)

var (
	serviceName = regexp.MustCompile(`^[a-z][a-z0-9]*(?:[_-][a-z0-9]+)*$`)
	// R3: "<service>-<purpose>", lowercase words joined by '-', at least two words.
	groupName = regexp.MustCompile(`^[a-z][a-z0-9]*(?:-[a-z0-9]+)+$`)
	category  = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

// Namer maps an event to the stream it is appended to (R1). It returns an
// InvalidArgument error for an event it cannot name.
type Namer func(ev *cloudevent.Event) (string, error)

// PerService is R1's convention: every event of the origin service goes to
// "koder:events:<service>" (PerService("id") -> "koder:events:id"). A service name that
// is not lowercase words fails every call with InvalidArgument (and Selection.Validate).
func PerService(service string) Namer {
	err := ValidateService(service)
	stream := ReservedPrefix + service
	return func(*cloudevent.Event) (string, error) { return stream, err }
}

// PerCategory is seed 001's convention (E8): the first word of the type picks the
// stream, "user.created" -> "events.user". A type whose first word is "dlq" is refused,
// since "events.dlq" is the dead-letter stream.
func PerCategory() Namer {
	return func(ev *cloudevent.Event) (string, error) {
		word, _, _ := strings.Cut(ev.Type, ".")
		if !category.MatchString(word) || word == "dlq" {
			return "", hub.Errorf(hub.InvalidArgument, "streams: type %q has no usable category word for an events.<category> stream", ev.Type)
		}
		return CategoryPrefix + word, nil
	}
}

// Fixed sends every event to one stream, which must pass ValidateStream.
func Fixed(stream string) Namer {
	err := ValidateStream(stream)
	return func(*cloudevent.Event) (string, error) { return stream, err }
}

// ValidateService checks a service name used in "koder:events:<service>".
func ValidateService(service string) error {
	if !serviceName.MatchString(service) {
		return hub.Errorf(hub.InvalidArgument, "streams: service name %q must be lowercase words (a-z, 0-9) joined by '-' or '_'", service)
	}
	return nil
}

// ValidateStream enforces the reserved prefix: a key under "koder:events:" must be a
// service's stream ("koder:events:<service>") or its dead-letter ("…:dlq").
func ValidateStream(stream string) error {
	if stream == "" {
		return hub.Errorf(hub.InvalidArgument, "streams: empty stream name")
	}
	rest, ok := strings.CutPrefix(stream, ReservedPrefix)
	if !ok {
		return nil
	}
	rest = strings.TrimSuffix(rest, DLQSuffix)
	if ValidateService(rest) != nil {
		return hub.Errorf(hub.InvalidArgument, "streams: %q uses the reserved prefix %q but is not %s<service>[%s]", stream, ReservedPrefix, ReservedPrefix, DLQSuffix)
	}
	return nil
}

// ValidateGroup checks R3's group naming, "<service>-<purpose>" (auth-erasure-cascade).
func ValidateGroup(group string) error {
	if !groupName.MatchString(group) {
		return hub.Errorf(hub.InvalidArgument, "streams: group %q must be <service>-<purpose>: lowercase words joined by '-', e.g. auth-erasure-cascade (R3)", group)
	}
	return nil
}
