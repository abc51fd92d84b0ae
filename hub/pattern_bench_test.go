package hub

import (
	"strings"
	"testing"
)

// BenchmarkMatch compares a compiled pattern with the obvious split-and-recurse matcher.
func BenchmarkMatch(b *testing.B) {
	const typ = "identity.user.account.created"
	b.Run("hub", func(b *testing.B) {
		p := MustCompilePattern("identity.#.*.created")
		b.ReportAllocs()
		for b.Loop() {
			if !p.Match(typ) {
				b.Fatal("no match")
			}
		}
	})
	b.Run("base_split", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !splitMatch(strings.Split("identity.#.*.created", "."), strings.Split(typ, ".")) {
				b.Fatal("no match")
			}
		}
	})
}

func splitMatch(p, t []string) bool {
	if len(p) == 0 {
		return len(t) == 0
	}
	if p[0] == "#" {
		for i := 0; i <= len(t); i++ {
			if splitMatch(p[1:], t[i:]) {
				return true
			}
		}
		return false
	}
	if len(t) == 0 || (p[0] != "*" && p[0] != t[0]) {
		return false
	}
	return splitMatch(p[1:], t[1:])
}
