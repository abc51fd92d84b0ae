package config

import "testing"

func TestSuggest(t *testing.T) {
	t.Parallel()
	keys := []string{"listen", "max_batch", "max_len", "min_id_age", "retry_schedule", "stream", "url"}
	for word, want := range map[string]string{
		"maxlen":  "max_len", // the separator left out
		"max-len": "max_len",
		"Max_Len": "max_len",
		"max_lne": "max_len", // two letters swapped
		"strem":   "stream",
		"ur":      "url",
		"retry":   "retry_schedule", // the first part of one key
		"max":     "",               // the first part of three: no guess
		"queue":   "",               // nothing close: no guess
		"addr":    "listen",         // another tool's name for the key
		"dsn":     "url",
		"topic":   "stream",
		"url":     "", // itself is not a suggestion
	} {
		if got := suggest(word, keys); got != want {
			t.Errorf("suggest(%q) = %q, want %q", word, got, want)
		}
	}
}

func FuzzEditDistance(f *testing.F) {
	f.Add("max_len", "maxlen")
	f.Add("", "abc")
	f.Add("héllo", "hello")
	f.Fuzz(func(t *testing.T, a, b string) {
		d := editDistance(a, b)
		if d != editDistance(b, a) {
			t.Fatalf("not symmetric: %q %q", a, b)
		}
		la, lb := len([]rune(a)), len([]rune(b))
		if d < max(la, lb)-min(la, lb) || d > max(la, lb) {
			t.Fatalf("editDistance(%q, %q) = %d out of [%d, %d]", a, b, d, max(la, lb)-min(la, lb), max(la, lb))
		}
		if (d == 0) != (string([]rune(a)) == string([]rune(b))) { // invalid UTF-8 reads as U+FFFD
			t.Fatalf("editDistance(%q, %q) = %d", a, b, d)
		}
	})
}
