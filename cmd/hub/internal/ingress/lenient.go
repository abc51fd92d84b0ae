package ingress

import (
	"encoding/json"
	"net/http"

	"github.com/koder/eventhub/cloudevent"
)

// dataProblems finds the schema violations of events whose envelope failed to parse, so
// one 400 names every invalid field, data included. It decodes structured and batch
// bodies without validating the envelope (Event.UnmarshalJSON keeps what it could read)
// and validates the data of each event whose type is known. Binary mode needs no such
// pass: its data is the body, validated once the headers are fixed.
func dataProblems(h http.Header, body []byte, v Validator) []FieldError {
	var raws []json.RawMessage
	batch := false
	switch mediaType(h.Get("Content-Type")) {
	case ContentTypeStructured:
		raws = []json.RawMessage{body}
	case ContentTypeBatch:
		if json.Unmarshal(body, &raws) != nil {
			return nil
		}
		batch = true
	default:
		return nil
	}
	var out []FieldError
	for i, raw := range raws {
		var ev cloudevent.Event
		_ = ev.UnmarshalJSON(raw) // fills what decodes; envelope problems are reported already
		if ev.Type == "" || len(ev.Data) == 0 {
			continue
		}
		idx := -1
		if batch {
			idx = i
		}
		if err := v.Validate(&ev); err != nil {
			out = append(out, fieldErrors(err, idx)...)
		}
	}
	return out
}
