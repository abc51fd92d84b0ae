package hub

import "github.com/koder/eventhub/cloudevent"

// Validator checks an event's payload (V1). *schema.Registry implements it; hub depends
// on this interface, not on the schema package, so the hub core stays free of JSON Schema
// and tests can pass a stub. Errors should be typed and coded (HubCode 3, InvalidArgument).
type Validator interface {
	Validate(ev *cloudevent.Event) error
}

// VersionSource supplies the newest payload version of a type (E5) so Publish can stamp
// dataversion on events that lack it.
type VersionSource interface {
	Latest(typ string) (version string, ok bool)
}

// Registry is a Validator that also knows versions: what *schema.Registry offers.
type Registry interface {
	Validator
	VersionSource
}

// ValidatorFunc adapts a function to Validator.
type ValidatorFunc func(ev *cloudevent.Event) error

// Validate calls f.
func (f ValidatorFunc) Validate(ev *cloudevent.Event) error { return f(ev) }
