package streams

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
)

// Stream encodings: how an event becomes the flat fields of one entry. Both transports
// and their consumers speak both, selected by name in Config.Encoding (publishers) and
// ConsumerConfig.Encoding (consumers, sources).
const (
	// EncodingR2 is seed 000's envelope (R2): type, event_id, occurred_at, tenant_id,
	// subject_id, actor, data, plus what makes it lossless (cloudevent.EncodeFieldsWith).
	// The default.
	EncodingR2 = "r2"
	// EncodingSeed001 is seed 001's envelope (E1) as fields: event_id, correlation_id,
	// event_type, version, timestamp, source, data, metadata
	// (cloudevent.EncodeEnvelopeFields), what products reading events.user expect.
	EncodingSeed001 = "seed001"
)

// ValidateEncoding checks an encoding name ("" is the default, EncodingR2).
func ValidateEncoding(encoding string) error {
	switch encoding {
	case "", EncodingR2, EncodingSeed001:
		return nil
	}
	return hub.Errorf(hub.InvalidArgument, "streams: encoding %q: want %q or %q", encoding, EncodingR2, EncodingSeed001)
}

// UnspecifiedSubject is the subject_id written for events that have none, where the
// writer knows no better one: R2 makes subject_id mandatory and non-empty, and a
// Watermill message, for one, has no subject. Consumers can tell it from a real subject.
const UnspecifiedSubject = "unspecified"

// Wire is the entry-format part of a publisher Config: the encoding and the defaults
// for what R2 requires and CloudEvents leaves optional. Both transports share it, so a
// bus switch (R9) changes no byte of an entry. Each Config keeps its own flat fields
// (yaml keys encoding, default_actor, default_subject) and hands them over through a
// Wire, as with Selection.
type Wire struct {
	// Encoding is EncodingR2 (default) or EncodingSeed001.
	Encoding string
	// DefaultActor is R2's actor for events without one (default "system", seed 000's
	// own example). The seed 001 encoding has no actor field and ignores it.
	DefaultActor string
	// DefaultSubject is R2's subject_id for events without a subject. Empty (the
	// default): such events are refused with InvalidArgument, and the hub refuses them
	// at Publish unless their route has a default (hub.WithDefaultSubject). Unused by
	// the seed 001 encoding, where the subject is optional metadata.
	DefaultSubject string
}

// Validate reports the first invalid field by name, prefixed by transport.
func (w Wire) Validate(transport string) error {
	var errs []error
	if err := ValidateEncoding(w.Encoding); err != nil {
		errs = append(errs, hub.Errorf(hub.InvalidArgument, "%s: Config.Encoding: %v", transport, err))
	}
	for _, f := range []struct{ name, v string }{{"DefaultActor", w.DefaultActor}, {"DefaultSubject", w.DefaultSubject}} {
		if f.v != "" && (strings.TrimSpace(f.v) != f.v || !utf8.ValidString(f.v)) {
			errs = append(errs, hub.Errorf(hub.InvalidArgument, "%s: Config.%s %q must be valid UTF-8 without surrounding spaces", transport, f.name, f.v))
		}
	}
	return errors.Join(errs...)
}

// EncodingName is the effective encoding: EncodingR2 when unset.
func (w Wire) EncodingName() string {
	if w.Encoding == "" {
		return EncodingR2
	}
	return w.Encoding
}

// RequiresSubject reports whether an event without a subject cannot be written: R2
// without a default subject. The transports report it to the hub (hub.SubjectRequirer).
func (w Wire) RequiresSubject() bool {
	return w.EncodingName() == EncodingR2 && w.DefaultSubject == ""
}

// Fields encodes ev in w's encoding. An event without a time gets the hub's
// acceptance time from ctx (hub.AcceptedAtFrom), else the current time.
func (w Wire) Fields(ctx context.Context, ev *cloudevent.Event) ([]string, error) {
	d := cloudevent.FieldDefaults{Actor: w.DefaultActor, Subject: w.DefaultSubject}
	if ev.Time.IsZero() {
		d.Time, _ = hub.AcceptedAtFrom(ctx, ev.ID)
	}
	if w.EncodingName() == EncodingSeed001 {
		return cloudevent.EncodeEnvelopeFields(ev, d)
	}
	return cloudevent.EncodeFieldsWith(ev, d)
}

// EncodeEvent names the stream of the i-th event of a batch and encodes its fields in
// w's encoding, the per-event step of both transports' Send. Errors name transport and
// the event; all are InvalidArgument.
func (w Wire) EncodeEvent(ctx context.Context, transport string, namer Namer, i int, ev *cloudevent.Event) (stream string, fields []string, err error) {
	stream, err = namer(ev)
	if err != nil {
		return "", nil, hub.Wrap(hub.InvalidArgument, err)
	}
	fields, err = w.Fields(ctx, ev)
	if err != nil {
		return "", nil, fmt.Errorf("%s: event %d (%s): %w", transport, i, ev.ID, err)
	}
	return stream, fields, nil
}
