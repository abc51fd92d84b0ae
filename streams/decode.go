package streams

import "github.com/koder/eventhub/cloudevent"

// Decode reads one entry's fields into an event, in c's encoding: DecodeFields for R2
// (DefaultSource for entries without a source, AllowEmptyFields), DecodeEnvelopeFields
// for seed 001 (DefaultSource, DefaultTenant). The error is a *cloudevent.ValidationError
// listing every problem; the consumer loop dead-letters the entry with it (N2).
func (c *ConsumerConfig) Decode(values map[string]string) (*cloudevent.Event, error) {
	if c.Encoding == EncodingSeed001 {
		return cloudevent.DecodeEnvelopeFields(values,
			cloudevent.WithEnvelopeSource(c.DefaultSource), cloudevent.WithEnvelopeTenant(c.DefaultTenant))
	}
	if c.AllowEmptyFields {
		return cloudevent.DecodeFields(values, c.DefaultSource, cloudevent.AllowEmptyFields())
	}
	return cloudevent.DecodeFields(values, c.DefaultSource)
}

// EntryIdentity returns the type and event id an entry claims in c's encoding, for
// logs and metrics, whether or not the entry decodes.
func (c *ConsumerConfig) EntryIdentity(values map[string]string) (typ, eventID string) {
	if c.Encoding == EncodingSeed001 {
		return values[cloudevent.E1EventType], values[cloudevent.E1EventID]
	}
	return values[cloudevent.FieldType], values[cloudevent.FieldEventID]
}
