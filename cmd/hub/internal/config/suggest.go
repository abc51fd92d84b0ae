package config

import (
	"fmt"
	"slices"
	"strings"
)

// DidYouMean is ` (did you mean "x"?)` for the candidate closest to word, or "" when
// none is close: a misspelt key (maxlen, max-len, max_lne) or name names its fix
// instead of leaving the reader to scan the list of known keys.
func DidYouMean(word string, candidates []string) string {
	if s := suggest(word, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// synonyms are the names other tools give a few of our keys, tried when no key is
// spelt close to the word.
var synonyms = map[string]string{
	"addr": "listen", "address": "listen", "bind": "listen", "listen_addr": "listen",
	"dsn": "url", "uri": "url", "endpoint": "url",
	"topic": "stream",
}

// suggest returns the candidate closest to word: equal once case, "_" and "-" are
// ignored, else the nearest by edit distance within a third of word's length (at least
// 1), ties to the first in candidates' order, else the key synonyms names for word when
// it is a candidate, else the one key word is the first part of; "" when none is that
// close.
func suggest(word string, candidates []string) string {
	if s := closest(word, candidates); s != "" {
		return s
	}
	if s, ok := synonyms[strings.ToLower(word)]; ok && slices.Contains(candidates, s) {
		return s
	}
	// A word that is the first part of exactly one key ("retry" for retry_schedule).
	var only string
	for _, c := range candidates {
		if strings.HasPrefix(c, strings.ToLower(word)+"_") {
			if only != "" {
				return ""
			}
			only = c
		}
	}
	return only
}

// closest is suggest's spelling part.
func closest(word string, candidates []string) string {
	norm := func(s string) string {
		return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(s))
	}
	w := norm(word)
	best, bestD := "", max(1, len([]rune(w))/3)+1
	for _, c := range candidates {
		if c == word {
			continue
		}
		if d := editDistance(w, norm(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (two rows; config keys are
// short, so a library for it would be a dependency for a dozen lines).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
