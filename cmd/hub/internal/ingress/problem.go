package ingress

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/schema"
)

// ProblemTypeBase prefixes the RFC 9457 "type" URIs of the ingress's problems; each
// points at the section of docs/hub-binary.md that explains it.
const ProblemTypeBase = "https://github.com/koder/eventhub/blob/main/docs/hub-binary.md#"

// Problem is an RFC 9457 problem-details body. Errors is the extension member listing
// every invalid field (the RFC's own example of an extension), so a producer fixes all
// of them in one round trip.
type Problem struct {
	Type   string       `json:"type"`
	Title  string       `json:"title"`
	Status int          `json:"status"`
	Detail string       `json:"detail,omitempty"`
	Errors []FieldError `json:"errors,omitempty"`
}

// FieldError is one invalid field. Field is the CloudEvents attribute ("type",
// "tenantid", "data") or a data path; Pointer is a JSON pointer into the request body
// (batch: "/2/source"; schema violations: "/data/user_id").
type FieldError struct {
	Field   string `json:"field"`
	Pointer string `json:"pointer"`
	Detail  string `json:"detail"`
	Code    string `json:"code,omitempty"` // INVALID_EVENT_DATA for schema violations
}

func writeProblem(w http.ResponseWriter, p Problem) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

// fieldErrors flattens the parse and validation errors of the codecs and the schema
// registry into field errors. index is the event's position in a batch (-1: not a batch).
func fieldErrors(err error, index int) []FieldError {
	prefix := ""
	if index >= 0 {
		prefix = "/" + strconv.Itoa(index)
	}
	var out []FieldError
	var ce *cloudevent.ValidationError
	var se *schema.ValidationError
	var ve *schema.VersionError
	switch {
	case errors.As(err, &ce):
		for _, p := range ce.Problems {
			field := p.Field
			ptr := prefix
			// a batch parse prefixes fields with "[i]."
			if strings.HasPrefix(field, "[") {
				if i := strings.Index(field, "]."); i > 0 {
					ptr = "/" + field[1:i]
					field = field[i+2:]
				}
			}
			if field != "" {
				ptr += "/" + field
			}
			if ptr == "" {
				ptr = ""
			}
			out = append(out, FieldError{Field: field, Pointer: ptr, Detail: p.Message})
		}
	case errors.As(err, &se):
		for _, f := range se.Fields {
			out = append(out, FieldError{Field: "data" + f.Pointer, Pointer: prefix + "/data" + f.Pointer, Detail: f.Message, Code: se.Code})
		}
		if len(se.Fields) == 0 {
			out = append(out, FieldError{Field: "data", Pointer: prefix + "/data", Detail: se.Error(), Code: se.Code})
		}
	case errors.As(err, &ve):
		out = append(out, FieldError{Field: cloudevent.ExtDataVersion, Pointer: prefix + "/" + cloudevent.ExtDataVersion, Detail: ve.Reason + " (known majors: " + joinInts(ve.Known) + ")"})
	default:
		out = append(out, FieldError{Field: "", Pointer: prefix, Detail: err.Error()})
	}
	return out
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
