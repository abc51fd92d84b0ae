package cloudevent

import (
	"encoding/json"
	"mime"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// Validate checks the event against CloudEvents 1.0 and the hub's rules and returns a
// *ValidationError listing every problem, or nil:
//   - id, source, specversion ("1.0"), type are required, and so is the tenantid
//     extension (C1), as a non-empty string;
//   - every string is valid UTF-8 (so the JSON codecs cannot alter it), and so is JSON
//     data (no invalid bytes, no \u escape of an unpaired surrogate): a decoder would
//     otherwise turn either into U+FFFD;
//   - source is a URI reference, dataschema an absolute URI, datacontenttype a media
//     type, time within years 0000-9999;
//   - extension names obey ^[a-z0-9]{1,20}$ and shadow no core attribute; values are
//     string, bool, int32, []byte, time.Time, URI or URIRef, and not empty;
//   - data is valid JSON when the content type is JSON.
func (e *Event) Validate() error {
	var p problems
	e.validate(&p)
	return p.err()
}

func (e *Event) validate(p *problems) { e.check(p, true) }

// check is validate; checkData false skips the JSON check of data for callers that
// have done it already (it is the costliest check).
func (e *Event) check(p *problems, checkData bool) {
	requiredString(p, "id", e.ID)
	requiredString(p, "type", e.Type)
	if requiredString(p, "source", e.Source) {
		if !plainURI(e.Source) && !validURIRef(e.Source) {
			p.add("source", "not a URI reference")
		}
	}
	switch e.SpecVersion {
	case SpecVersion:
	case "":
		if !p.has("specversion") {
			p.add("specversion", "required")
		}
	default:
		p.add("specversion", "unsupported version "+e.SpecVersion+" (want 1.0)")
	}
	if e.DataContentType != "" {
		if !utf8.ValidString(e.DataContentType) {
			p.add("datacontenttype", "not valid UTF-8")
		} else if e.DataContentType != ContentTypeJSON && !validMediaType(e.DataContentType) {
			p.add("datacontenttype", "not a media type (RFC 2045)")
		}
	}
	if e.DataSchema != "" {
		if u, err := url.Parse(e.DataSchema); err != nil || !u.IsAbs() || !utf8.ValidString(e.DataSchema) {
			p.add("dataschema", "not an absolute URI")
		}
	}
	if e.Subject != "" && !utf8.ValidString(e.Subject) {
		p.add("subject", "not valid UTF-8")
	}
	if !e.Time.IsZero() {
		if msg := checkTime(e.Time); msg != "" {
			p.add("time", msg)
		}
	}
	if _, ok := e.Extensions[ExtTenantID]; !ok {
		if !p.has(ExtTenantID) { // a parse problem (not UTF-8) said it already
			p.add(ExtTenantID, "required (C1)")
		}
	} else if _, ok := e.Extensions[ExtTenantID].(string); !ok {
		p.add(ExtTenantID, "must be a string")
	}
	from := len(p.list)
	for name := range e.Extensions {
		if !ValidName(name) {
			p.add(name, "extension name must match ^[a-z0-9]{1,20}$")
			continue
		}
		if reservedName(name) {
			p.add(name, "extension name shadows a core attribute")
			continue
		}
		if msg := checkValue(e.Extensions[name]); msg != "" {
			p.add(name, msg)
		}
	}
	if ext := p.list[from:]; len(ext) > 1 { // map order: sort for a stable message
		slices.SortStableFunc(ext, func(a, b Problem) int { return strings.Compare(a.Field, b.Field) })
	}
	if len(e.Data) > 0 && IsJSON(e.DataContentType) {
		switch {
		case checkData && !json.Valid(e.Data):
			p.add("data", "not valid JSON (datacontenttype is JSON)")
		case !validJSONText(e.Data):
			p.add("data", msgNotUTF8+" (invalid bytes, or a \\u escape of an unpaired surrogate)")
		}
	}
}

// requiredString adds a problem when s is empty or not UTF-8; it reports whether s is
// present and well-formed.
func requiredString(p *problems, field, s string) bool {
	if s == "" {
		if !p.has(field) { // a parse problem (wrong type, not UTF-8) said it already
			p.add(field, "required")
		}
		return false
	}
	if !utf8.ValidString(s) {
		p.add(field, "not valid UTF-8")
		return false
	}
	return true
}

// plainURI reports whether s is certainly a valid URI reference without calling
// url.Parse, for the usual "urn:koder:identity" or "/tenants/a" sources on the hot
// path: only letters, digits and "-._~:/", no authority ("//", whose host and port
// url.Parse checks), and a colon before the first "/" only after a well-formed scheme.
func plainURI(s string) bool {
	schemeOK, seenSlash := len(s) > 0 && isLetter(s[0]), false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isLetter(c) || (c >= '0' && c <= '9') || c == '-' || c == '.':
		case c == '_' || c == '~':
			schemeOK = false
		case c == '/':
			if i+1 < len(s) && s[i+1] == '/' {
				return false
			}
			seenSlash = true
		case c == ':':
			if !seenSlash && !schemeOK {
				return false
			}
			seenSlash = true // the scheme is done; later colons are path or opaque data
		default:
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func validURIRef(s string) bool {
	_, err := url.Parse(s)
	return err == nil
}

func validMediaType(ct string) bool {
	_, _, err := mime.ParseMediaType(ct)
	return err == nil
}

// has reports whether a problem about field was added already, so a field the parser
// refused (wrong type, not UTF-8) does not also get "required". A linear scan: it runs
// only on the error path, where the list is short.
func (p *problems) has(field string) bool {
	for _, q := range p.list {
		if q.Field == field {
			return true
		}
	}
	return false
}
