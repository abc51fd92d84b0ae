package cloudevent

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Unlike encoding/json it does not escape
// <, > and & (the output is never embedded in HTML), which keeps text data readable in
// Redis and byte-for-byte stable. Invalid UTF-8 becomes U+FFFD, as in encoding/json;
// Validate rejects such strings before they get here.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' { // valid JSON, but not valid JavaScript
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// unquoteJSONString decodes a JSON string token strictly. encoding/json replaces bytes
// that are not UTF-8, and \u escapes of unpaired UTF-16 surrogates, with U+FFFD: a
// tenantid or id would be silently rewritten on parse. Both are refused here instead
// (ok false), so the caller reports the member (see stringProblem). The fast path handles
// strings without escapes; the rest goes through encoding/json once checked.
func unquoteJSONString(b []byte) (string, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", false
	}
	inner := b[1 : len(b)-1]
	simple := true
	for _, c := range inner {
		if c == '\\' || c == '"' || c < 0x20 {
			simple = false
			break
		}
	}
	if !utf8.Valid(inner) {
		return "", false
	}
	if simple {
		return string(inner), true
	}
	if !pairedSurrogates(inner) {
		return "", false
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return "", false
	}
	return s, true
}

// unquoteJSONStr is unquoteJSONString for a string token: without escapes it returns
// a substring of s, so parsing many members of one document costs no allocation each.
func unquoteJSONStr(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", false
	}
	inner := s[1 : len(s)-1]
	for i := 0; i < len(inner); i++ {
		if c := inner[i]; c == '\\' || c == '"' || c < 0x20 {
			return unquoteJSONString([]byte(s))
		}
	}
	if !utf8.ValidString(inner) {
		return "", false
	}
	return inner, true
}

// msgNotUTF8 is the problem of a string that is not valid UTF-8 (raw bytes or a \u
// escape of an unpaired surrogate).
const msgNotUTF8 = "not valid UTF-8"

// stringProblem explains why unquoteJSONString refused raw, a value of a document that
// json.Valid accepted: a string token can only fail on its encoding.
func stringProblem(raw string) string {
	if len(raw) > 0 && raw[0] == '"' {
		return msgNotUTF8
	}
	return "must be a string"
}

// validJSONText reports whether b, a JSON document json.Valid accepted, is UTF-8 text
// whose escapes decode to Unicode scalar values. json.Valid accepts both invalid bytes
// and lone surrogate escapes inside strings, which every decoder downstream would turn
// into U+FFFD.
func validJSONText(b []byte) bool { return utf8.Valid(b) && pairedSurrogates(b) }

// pairedSurrogates reports whether every \u escape in b (a JSON string body, or a whole
// document: outside strings a backslash cannot occur) that encodes a UTF-16 surrogate
// is a high surrogate followed by an escaped low one.
func pairedSurrogates(b []byte) bool {
	for i := bytes.IndexByte(b, '\\'); i >= 0 && i+1 < len(b); {
		if b[i+1] != 'u' {
			i = next(b, i+2)
			continue
		}
		r, ok := hex4(b, i+2)
		if !ok {
			return true // not JSON; json.Valid reports it
		}
		switch {
		case r >= 0xdc00 && r <= 0xdfff:
			return false
		case r >= 0xd800 && r <= 0xdbff:
			lo, ok := -1, false
			if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
				lo, ok = hex4(b, i+8)
			}
			if !ok || lo < 0xdc00 || lo > 0xdfff {
				return false
			}
			i = next(b, i+12)
		default:
			i = next(b, i+6)
		}
	}
	return true
}

// next is the index of the next backslash at or after from, or -1.
func next(b []byte, from int) int {
	if from >= len(b) {
		return -1
	}
	if j := bytes.IndexByte(b[from:], '\\'); j >= 0 {
		return from + j
	}
	return -1
}

// hex4 decodes the four hex digits at b[i:i+4].
func hex4(b []byte, i int) (int, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	r := 0
	for _, c := range b[i : i+4] {
		d := unhex(c)
		if d < 0 {
			return 0, false
		}
		r = r<<4 | d
	}
	return r, true
}
