package filter

import (
	"math"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/koder/eventhub/cloudevent"
)

// dataRef is one `data.<path>` of an expression, renamed to a synthetic identifier of
// the same length (so error positions still point into the text the user wrote) and
// supplied at evaluation as an extension of that name.
type dataRef struct {
	name string // the synthetic identifier, lowercase
	path string // gjson path: segments joined by dots, as written (case kept)
}

// lookup reads the path from JSON data. The CESQL type of the value:
//   - a JSON string is a String;
//   - a JSON integer within int32 is an Integer (CESQL's only number type); any other
//     number is a String of its JSON text (compare it as text, or INT() it);
//   - true and false are Booleans;
//   - an object or array is a String of its JSON text;
//   - null, a missing path, non-JSON data or no data: the attribute is absent (EXISTS
//     is false; using it is a missing-attribute error, so the filter does not match).
func (r dataRef) lookup(contentType string, data []byte) (any, bool) {
	if len(data) == 0 || !cloudevent.IsJSON(contentType) {
		return nil, false
	}
	v := gjson.GetBytes(data, r.path)
	switch v.Type {
	case gjson.String:
		return v.Str, true
	case gjson.True:
		return true, true
	case gjson.False:
		return false, true
	case gjson.Number:
		if i, err := strconv.ParseInt(v.Raw, 10, 64); err == nil && i >= math.MinInt32 && i <= math.MaxInt32 {
			return int32(i), true
		}
		return v.Raw, true
	case gjson.JSON:
		return v.Raw, true
	}
	return nil, false
}

// rewriteData renames every `data.<path>` outside string literals (a word starting
// with "data." in any case, then segments of letters, digits and underscores separated
// by dots) to a synthetic identifier of the same length that the expression does not
// already use. The SDK grammar has no dotted identifiers, so this is how data is reached
// without forking it.
func rewriteData(expr string) (string, []dataRef, error) {
	lower := strings.ToLower(expr)
	var (
		out   []byte
		refs  []dataRef
		names = map[string]string{} // path -> name
		quote byte
	)
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		if quote != 0 {
			switch {
			case c == '\\' && i+1 < len(expr):
				i++
			case c == quote:
				quote = 0
			}
			continue
		}
		if c == '\'' || c == '"' {
			quote = c
			continue
		}
		if !strings.HasPrefix(lower[i:], "data.") || (i > 0 && isWord(expr[i-1])) {
			continue
		}
		end := i + len("data.")
		for end < len(expr) && (isWord(expr[end]) || expr[end] == '.' && end+1 < len(expr) && isWord(expr[end+1]) && expr[end-1] != '.') {
			end++
		}
		path := expr[i+len("data.") : end]
		if path == "" || path[len(path)-1] == '.' {
			return "", nil, &Error{Expr: expr, Line: line(expr, i), Col: col(expr, i), Msg: "data. needs a path: data.field or data.a.b"}
		}
		name, ok := names[path]
		if !ok {
			if name, ok = syntheticName(lower, len(refs), end-i); !ok {
				return "", nil, &Error{Expr: expr, Line: line(expr, i), Col: col(expr, i), Msg: "too many distinct data paths in one expression"}
			}
			names[path] = name
			refs = append(refs, dataRef{name: name, path: path})
		}
		if out == nil {
			out = []byte(expr)
		}
		copy(out[i:end], name)
		i = end - 1
	}
	if out == nil {
		return expr, nil, nil
	}
	return string(out), refs, nil
}

// syntheticName returns an identifier of exactly n (>= 6) bytes for the i-th data path,
// absent from the expression: "zq<i>d" padded with "d"; false when none fits (only
// with hundreds of paths each as short as "data.x").
func syntheticName(lower string, i, n int) (string, bool) {
	for prefix := byte('q'); prefix <= 'z'; prefix++ {
		name := "z" + string(prefix) + strconv.Itoa(i) + "d"
		if len(name) > n {
			return "", false
		}
		name += strings.Repeat("d", n-len(name))
		if !strings.Contains(lower, name) {
			return name, true
		}
	}
	return "", false
}

func isWord(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func line(s string, off int) int { return strings.Count(s[:off], "\n") + 1 }

func col(s string, off int) int { return off - strings.LastIndexByte(s[:off], '\n') }
