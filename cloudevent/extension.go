package cloudevent

import (
	"encoding/base64"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// MaxNameLength is the longest attribute or extension name allowed. CloudEvents 1.0
// says SHOULD NOT exceed 20; the hub makes it a MUST so every binding (HTTP headers,
// AMQP properties, R2 fields) can carry every name.
const MaxNameLength = 20

// ValidName reports whether name obeys ^[a-z0-9]{1,20}$, the CloudEvents naming rule
// the hub enforces for extensions.
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > MaxNameLength {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// reservedName reports whether name is a core attribute (or `data`): an extension must
// not shadow one, or the flat codecs could not tell them apart.
func reservedName(name string) bool {
	switch name {
	case "id", "source", "specversion", "type", "datacontenttype", "dataschema",
		"subject", "time", "data":
		return true
	}
	return false
}

// Kind is the CloudEvents type of an extension value.
type Kind uint8

// The CloudEvents type system, as Go types: String string, Boolean bool, Integer
// int32, Binary []byte, Timestamp time.Time, URI URI, URIRef URIRef.
const (
	KindInvalid Kind = iota
	KindString
	KindBoolean
	KindInteger
	KindBinary
	KindTimestamp
	KindURI
	KindURIRef
)

var kindNames = [...]string{"invalid", "string", "boolean", "integer", "binary", "timestamp", "uri", "urireference"}

// String returns the lowercase CloudEvents type name (the form used in type lists).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

func kindByName(s string) Kind {
	for i, n := range kindNames {
		if i > 0 && n == s {
			return Kind(i)
		}
	}
	return KindInvalid
}

// KindOf returns the CloudEvents type of an extension value, KindInvalid for a Go
// type outside the type system.
func KindOf(v any) Kind {
	switch v.(type) {
	case string:
		return KindString
	case bool:
		return KindBoolean
	case int32:
		return KindInteger
	case []byte:
		return KindBinary
	case time.Time:
		return KindTimestamp
	case URI:
		return KindURI
	case URIRef:
		return KindURIRef
	}
	return KindInvalid
}

// FormatValue returns the canonical string form of an extension value (CloudEvents
// "Type System"): the form used by HTTP headers and the R2 and Watermill codecs.
func FormatValue(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		if x {
			return "true", true
		}
		return "false", true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case []byte:
		return base64.StdEncoding.EncodeToString(x), true
	case time.Time:
		return formatTime(x), true
	case URI:
		return string(x), true
	case URIRef:
		return string(x), true
	}
	return "", false
}

// ParseValue converts a canonical string back to a value of kind k.
func ParseValue(k Kind, s string) (any, error) {
	switch k {
	case KindString:
		return s, nil
	case KindBoolean:
		switch s {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, errors.New("not a boolean (true or false)")
	case KindInteger:
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return nil, errors.New("not a 32-bit integer")
		}
		return int32(n), nil
	case KindBinary:
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, errors.New("not base64")
		}
		return b, nil
	case KindTimestamp:
		t, err := parseTime(s)
		if err != nil {
			return nil, err
		}
		return t, nil
	case KindURI:
		return URI(s), nil
	case KindURIRef:
		return URIRef(s), nil
	}
	return nil, errors.New("unknown type")
}

// formatTime writes t as RFC 3339 in UTC with as many fraction digits as needed:
// lossless to the nanosecond and what R2's occurred_at asks for.
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, errors.New("not an RFC 3339 timestamp")
	}
	return t.UTC(), nil
}

// isoLocalLayout is ISO 8601 without a zone, as Python's datetime.utcnow().isoformat()
// writes it.
const isoLocalLayout = "2006-01-02T15:04:05.999999999"

// parseUTCTime parses R2's occurred_at and E1's timestamp, both specified as "ISO 8601
// UTC": RFC 3339, or the same without a zone, which is then read as UTC. Producers in
// other languages often omit the zone; rejecting their events would dead-letter them.
func parseUTCTime(s string) (time.Time, error) {
	if t, err := parseTime(s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(isoLocalLayout, s); err == nil {
		return t, nil
	}
	return time.Time{}, errors.New("not an ISO 8601 / RFC 3339 timestamp")
}

// checkValue reports what is wrong with an extension value, "" when nothing.
func checkValue(v any) string {
	switch x := v.(type) {
	case string:
		return checkString(x)
	case bool, int32:
		return ""
	case []byte:
		if len(x) == 0 {
			return "empty binary value (remove the extension instead)"
		}
		return ""
	case time.Time:
		return checkTime(x)
	case URI:
		if msg := checkString(string(x)); msg != "" {
			return msg
		}
		if u, err := url.Parse(string(x)); err != nil || !u.IsAbs() {
			return "not an absolute URI"
		}
		return ""
	case URIRef:
		if msg := checkString(string(x)); msg != "" {
			return msg
		}
		if _, err := url.Parse(string(x)); err != nil {
			return "not a URI reference"
		}
		return ""
	case nil:
		return "nil value"
	}
	return "unsupported type (want string, bool, int32, []byte, time.Time, URI or URIRef)"
}

func checkString(s string) string {
	if s == "" {
		return "empty value (remove the extension instead)"
	}
	if !utf8.ValidString(s) {
		return "not valid UTF-8"
	}
	return ""
}

func checkTime(t time.Time) string {
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		return "year outside 0000-9999 (RFC 3339)"
	}
	return ""
}

// sortedExtNames returns the extension names in order, so encodings are deterministic.
// With skipR2 it leaves out tenantid and actor, which the R2 codec writes as fields of
// their own.
func sortedExtNames(exts map[string]any, skipR2 bool) []string {
	names := make([]string, 0, len(exts))
	for name := range exts {
		if skipR2 && (name == ExtTenantID || name == ExtActor) {
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
