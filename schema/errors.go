package schema

import (
	"errors"
	"fmt"
	"strings"
)

// CodeInvalidEventData is the code every payload validation failure carries (V1, and the
// seed's TENANCY_INVALID_EVENT_DATA): callers branch on it, never on the message.
const CodeInvalidEventData = "INVALID_EVENT_DATA"

// ErrUnknownMajor matches (errors.Is) a VersionError: the event's payload has a MAJOR
// version no schema is registered for (E5), so no consumer can rely on its shape.
var ErrUnknownMajor = errors.New("schema: unknown major version")

// FieldError is one failing field: a JSON pointer into the event's data and what is wrong.
type FieldError struct {
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

// ValidationError reports every field of an event's data that breaks its schema, so a
// producer fixes them all in one round trip instead of one per attempt.
type ValidationError struct {
	Code    string       `json:"code"` // always CodeInvalidEventData
	Type    string       `json:"type"`
	Version string       `json:"version,omitempty"`
	Fields  []FieldError `json:"fields"`
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", e.Code, e.Type)
	if e.Version != "" {
		fmt.Fprintf(&b, " v%s", e.Version)
	}
	for i, f := range e.Fields {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		p := f.Pointer
		if p == "" {
			p = "(data)"
		}
		b.WriteString("data" + strings.TrimPrefix(p, "(data)") + ": " + f.Message)
	}
	return b.String()
}

// HubCode classifies the error as hub.InvalidArgument without importing hub.
func (e *ValidationError) HubCode() int { return 3 }

// VersionError says the event's dataversion cannot be processed: not semver, or a MAJOR
// version with no registered schema (E5: consumers reject unknown MAJOR versions).
type VersionError struct {
	Type    string
	Version string
	Known   []int // the MAJOR versions registered for Type
	Reason  string
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("schema: %s: dataversion %q: %s (known majors: %v)", e.Type, e.Version, e.Reason, e.Known)
}

// Is makes errors.Is(err, ErrUnknownMajor) true for every VersionError.
func (e *VersionError) Is(target error) bool { return target == ErrUnknownMajor }

// HubCode classifies the error as hub.InvalidArgument without importing hub.
func (e *VersionError) HubCode() int { return 3 }
