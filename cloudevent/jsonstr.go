package cloudevent

import (
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

// unquoteJSONString decodes a JSON string token. The fast path handles strings
// without escapes; the rest goes through encoding/json.
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
	if simple && utf8.Valid(inner) {
		return string(inner), true
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
		return unquoteJSONString([]byte(s))
	}
	return inner, true
}
