package resp

import (
	"strconv"
	"strings"

	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// appendReply encodes v, a reply in engine.Do's shapes, for a client speaking proto (2
// or 3). Redis's rules: a null is "$-1" (bulk) or "*-1" (array) in RESP2 and "_" in
// RESP3; maps are flat arrays in RESP2 (XREAD's stream map an array of pairs).
func appendReply(b []byte, v any, proto int) []byte {
	switch x := v.(type) {
	case nil:
		if proto == 3 {
			return append(b, "_\r\n"...)
		}
		return append(b, "$-1\r\n"...)
	case engine.NilArray:
		if proto == 3 {
			return append(b, "_\r\n"...)
		}
		return append(b, "*-1\r\n"...)
	case int64:
		b = strconv.AppendInt(append(b, ':'), x, 10)
		return append(b, '\r', '\n')
	case int:
		return appendReply(b, int64(x), proto)
	case string:
		return appendBulk(b, x)
	case engine.Status:
		return appendLine(b, '+', string(x))
	case []any:
		b = appendHeader(b, '*', len(x))
		for _, e := range x {
			b = appendReply(b, e, proto)
		}
		return b
	case engine.Map:
		if proto == 3 {
			b = appendHeader(b, '%', len(x)/2)
		} else {
			b = appendHeader(b, '*', len(x))
		}
		for _, e := range x {
			b = appendReply(b, e, proto)
		}
		return b
	case engine.StreamMap:
		if proto == 3 {
			b = appendHeader(b, '%', len(x)/2)
			for _, e := range x {
				b = appendReply(b, e, proto)
			}
			return b
		}
		b = appendHeader(b, '*', len(x)/2)
		for i := 0; i+1 < len(x); i += 2 {
			b = appendHeader(b, '*', 2)
			b = appendReply(b, x[i], proto)
			b = appendReply(b, x[i+1], proto)
		}
		return b
	case engine.Entries:
		b = appendHeader(b, '*', len(x))
		for _, en := range x {
			var id [41]byte
			b = appendBulk(append(b, "*2\r\n"...), en.ID.Append(id[:0]))
			if en.Fields == nil {
				b = appendReply(b, engine.NilArray{}, proto)
				continue
			}
			b = appendHeader(b, '*', len(en.Fields))
			for _, f := range en.Fields {
				b = appendBulk(b, f)
			}
		}
		return b
	case error:
		return appendError(b, x.Error())
	}
	return appendError(b, "ERR internal: reply of unknown shape")
}

// appendBulk writes a bulk string.
func appendBulk[T string | []byte](b []byte, s T) []byte {
	b = strconv.AppendInt(append(b, '$'), int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

func appendHeader(b []byte, kind byte, n int) []byte {
	b = strconv.AppendInt(append(b, kind), int64(n), 10)
	return append(b, '\r', '\n')
}

// appendLine writes a simple string or error; CR and LF would end the line early, so
// they become spaces (Redis does the same for error texts).
func appendLine(b []byte, kind byte, s string) []byte {
	if strings.ContainsAny(s, "\r\n") {
		s = strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
	}
	b = append(b, kind)
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// appendError writes an error reply; a text without an upper-case code word gets
// Redis's generic "ERR" prefix.
func appendError(b []byte, msg string) []byte {
	code, _, _ := strings.Cut(msg, " ")
	if code == "" || strings.ToUpper(code) != code || strings.ContainsAny(code, ":.,'") {
		msg = "ERR " + msg
	}
	return appendLine(b, '-', msg)
}
