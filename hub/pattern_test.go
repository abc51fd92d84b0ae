package hub

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestF1_PatternMatch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		pattern, typ string
		want         bool
	}{
		// `#` matches zero or more words.
		{"a.#", "a", true},
		{"a.#", "a.b", true},
		{"a.#", "a.b.c", true},
		{"a.#", "b.a", false},
		{"a.#", "ab", false},
		{"#.created", "created", true},
		{"#.created", "user.created", true},
		{"#.created", "identity.user.created", true},
		{"#.created", "user.created.v2", false},
		{"#.created", "user.createdx", false},
		// `*` matches exactly one word.
		{"a.*.c", "a.b.c", true},
		{"a.*.c", "a.b.b.c", false},
		{"a.*.c", "a.c", false},
		{"a.*", "a", false},
		{"a.*", "a.b", true},
		{"*.*", "a.b", true},
		{"*.*", "a.b.c", false},
		// `#` alone matches every type, the hub's own events included.
		{"#", "a", true},
		{"#", "a.b.c", true},
		{"#", "hub.transport.failed", true},
		// A bare `*` is the catch-all: everything except the hub's own `hub.*` events.
		{"*", "user.created", true},
		{"*", "a", true},
		{"*", "a.b.c.d", true},
		{"*", "hub.transport.failed", false},
		{"*", "hub", false},
		{"*", "hubx.created", true},
		{"*", "github.push", true},
		// Literals and mixes.
		{"user.created", "user.created", true},
		{"user.created", "user.deleted", false},
		{"user.#.done", "user.done", true},
		{"user.#.done", "user.a.b.done", true},
		{"user.#.done", "user.a.b.done.x", false},
		{"#.b.#", "a.b.c", true},
		{"#.b.#", "b", true},
		{"#.b.#", "a.c", false},
		{"#.#", "a", true},
		{"a.#.#.b", "a.b", true},
		{"a.#.*", "a", false},
		{"a.#.*", "a.b", true},
		{"*.#", "a", true},
		{"hub.#", "hub.transport.failed", true},
	}
	for _, c := range cases {
		p, err := CompilePattern(c.pattern)
		if err != nil {
			t.Fatalf("CompilePattern(%q): %v", c.pattern, err)
		}
		if got := p.Match(c.typ); got != c.want {
			t.Errorf("Pattern(%q).Match(%q) = %v, want %v", c.pattern, c.typ, got, c.want)
		}
		if got := Match(c.pattern, c.typ); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pattern, c.typ, got, c.want)
		}
	}

	t.Run("InvalidPatterns", func(t *testing.T) {
		for _, p := range []string{"", ".", "a..b", ".a", "a.", "a*", "#b", "a.b*c", "a b", "**"} {
			_, err := CompilePattern(p)
			if err == nil {
				t.Errorf("CompilePattern(%q) accepted an invalid pattern", p)
				continue
			}
			if Code(err) != InvalidArgument {
				t.Errorf("CompilePattern(%q) code = %v, want InvalidArgument", p, Code(err))
			}
			if Match(p, "a.b") {
				t.Errorf("Match(%q, ...) = true for an invalid pattern", p)
			}
		}
	})

	t.Run("LongTypes", func(t *testing.T) {
		typ := strings.Repeat("a.", 200) + "z"
		if !MustCompilePattern("#.a.#.z").Match(typ) {
			t.Error("#.a.#.z should match a long type")
		}
		if MustCompilePattern("#.a.#.y").Match(typ) {
			t.Error("#.a.#.y should not match")
		}
	})
}

// TestPatternMatchNoAllocation is not parallel: testing.AllocsPerRun refuses to run
// beside parallel tests, whose allocations it would count.
func TestPatternMatchNoAllocation(t *testing.T) {
	p := MustCompilePattern("identity.#.*.created")
	typ := "identity.user.account.created"
	if n := testing.AllocsPerRun(100, func() { p.Match(typ) }); n != 0 {
		t.Errorf("Match allocates %v times per call, want 0", n)
	}
}

// TestPatternMatchProperty compares the allocation-free matcher with the obvious
// split-and-recurse definition (splitMatch, pattern_bench_test.go) on random patterns and
// types over a small alphabet, where `#` backtracking cases are dense.
func TestPatternMatchProperty(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		words := rapid.SliceOfN(rapid.SampledFrom([]string{"a", "b", "*", "#"}), 1, 6).Draw(t, "pattern")
		typ := rapid.SliceOfN(rapid.SampledFrom([]string{"a", "b", "hub"}), 0, 7).Draw(t, "type")
		pattern, typeStr := strings.Join(words, "."), strings.Join(typ, ".")
		if pattern == "*" {
			return // the catch-all is not RabbitMQ's `*`; covered by the table
		}
		p := MustCompilePattern(pattern)
		if got, want := p.Match(typeStr), splitMatch(words, typ); got != want {
			t.Fatalf("Pattern(%q).Match(%q) = %v, want %v", pattern, typeStr, got, want)
		}
	})
}
