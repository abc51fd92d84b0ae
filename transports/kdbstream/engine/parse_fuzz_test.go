package engine

import (
	"strings"
	"testing"
)

// FuzzParseXAdd: XADD's word parser never panics, and what it accepts has an even,
// non-empty field list and a stream name.
func FuzzParseXAdd(f *testing.F) {
	for _, s := range []string{"s * k v", "s NOMKSTREAM MAXLEN ~ 10 LIMIT 5 * k v", "s MINID = 5-1 5-* a b", "s MAXLEN -1 * k v", "s 1-1 k", "s MAXLEN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		a, err := ParseXAdd(strings.Fields(line))
		if err == nil && (a.Stream == "" || len(a.Values) == 0 || len(a.Values)%2 != 0) {
			t.Fatalf("accepted %q as %+v", line, a)
		}
	})
}

// FuzzParseXRead: the XREAD/XREADGROUP option parser never panics, and keys and ids
// it returns pair up.
func FuzzParseXRead(f *testing.F) {
	for _, s := range []string{"COUNT 5 BLOCK 0 STREAMS a b 0 $", "GROUP g c NOACK STREAMS s >", "BLOCK -1 STREAMS s 0", "STREAMS a", "COUNT x STREAMS s 0"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, line string, group bool) {
		x, err := parseXRead(strings.Fields(line), group)
		if err == nil && len(x.keys) != len(x.ids) {
			t.Fatalf("%q: %d keys, %d ids", line, len(x.keys), len(x.ids))
		}
	})
}
