package hub

import (
	"fmt"
	"strings"
)

// Pattern is a compiled route pattern with RabbitMQ topic semantics on the event type:
// dot-separated words, `*` matches exactly one word, `#` matches zero or more words.
//
// A bare `*` is the catch-all of seed 002 (F1): every event except the hub's own
// lifecycle events (`hub.*`, e.g. hub.transport.failed). This deliberately differs from
// RabbitMQ, where a bare `*` means "exactly one word": a route written as `*` must not
// forward the failure events the hub emits about that very route. `#` keeps its
// RabbitMQ meaning and matches everything, hub events included, for callers who really
// want them. Every other pattern can be handed unchanged to a RabbitMQ topic exchange.
//
// Patterns are compiled once (Forward, Subscribe) so matching an event costs a walk over
// the type's bytes and allocates nothing.
type Pattern struct {
	raw      string
	words    []string // "*", "#" or a literal word
	catchAll bool
	// literal is set when the pattern has no wildcard: matching is then a string compare.
	literal bool
}

// hubTypePrefix is the first word of the hub's own events, excluded by the catch-all.
const hubTypePrefix = "hub"

// CompilePattern parses p. It rejects an empty pattern, empty words (`a..b`, `.a`),
// whitespace, and wildcards mixed into a word (`a*`, `#b`).
func CompilePattern(p string) (Pattern, error) {
	if p == "" {
		return Pattern{}, Errorf(InvalidArgument, "hub: empty pattern")
	}
	if p == "*" {
		return Pattern{raw: p, words: []string{"*"}, catchAll: true}, nil
	}
	words := strings.Split(p, ".")
	literal := true
	for i, w := range words {
		switch {
		case w == "":
			return Pattern{}, Errorf(InvalidArgument, "hub: pattern %q: empty word at position %d", p, i+1)
		case w == "*" || w == "#":
			literal = false
		case strings.ContainsAny(w, "*#"):
			return Pattern{}, Errorf(InvalidArgument, "hub: pattern %q: wildcard inside word %q (use a whole word * or #)", p, w)
		case strings.ContainsAny(w, " \t\r\n"):
			return Pattern{}, Errorf(InvalidArgument, "hub: pattern %q: whitespace in word %q", p, w)
		}
	}
	return Pattern{raw: p, words: words, literal: literal}, nil
}

// MustCompilePattern is CompilePattern for patterns known at compile time; it panics on
// an invalid one.
func MustCompilePattern(p string) Pattern {
	c, err := CompilePattern(p)
	if err != nil {
		panic(err)
	}
	return c
}

// String returns the pattern as written.
func (p Pattern) String() string { return p.raw }

// Match reports whether the event type typ matches p.
func (p Pattern) Match(typ string) bool {
	if p.catchAll {
		return !(typ == hubTypePrefix || strings.HasPrefix(typ, hubTypePrefix+"."))
	}
	if p.literal {
		return typ == p.raw
	}
	return matchWords(p.words, typ)
}

// matchWords is glob matching over words: `#` plays the role of a glob star (any run of
// words) and `*` that of `?` (one word). The classic greedy scan with backtracking to the
// last `#` needs no allocation: positions in typ are byte offsets of word starts, and
// len(typ)+1 means "no words left" (so "" has no words, while "a." ends in an empty one).
func matchWords(words []string, typ string) bool {
	end := len(typ) + 1
	ti := 0
	if typ == "" {
		ti = end
	}
	pi := 0
	star, mark := -1, 0 // last `#` seen and the typ offset it currently swallows up to
	for ti < end {
		if pi < len(words) && words[pi] == "#" {
			star, mark = pi, ti
			pi++
			continue
		}
		if pi < len(words) {
			w, next := word(typ, ti)
			if words[pi] == "*" || words[pi] == w {
				pi++
				ti = next
				continue
			}
		}
		if star < 0 {
			return false
		}
		// Let the last `#` swallow one more word and retry the rest from there.
		_, mark = word(typ, mark)
		pi, ti = star+1, mark
	}
	for pi < len(words) && words[pi] == "#" {
		pi++
	}
	return pi == len(words)
}

// word returns the word of typ starting at offset i and the offset of the next word
// (len(typ)+1 after the last).
func word(typ string, i int) (w string, next int) {
	j := strings.IndexByte(typ[i:], '.')
	if j < 0 {
		return typ[i:], len(typ) + 1
	}
	return typ[i : i+j], i + j + 1
}

// Match reports whether typ matches pattern; an invalid pattern matches nothing. It
// compiles the pattern on every call: hot paths should keep a compiled Pattern.
func Match(pattern, typ string) bool {
	p, err := CompilePattern(pattern)
	if err != nil {
		return false
	}
	return p.Match(typ)
}

var _ fmt.Stringer = Pattern{}
