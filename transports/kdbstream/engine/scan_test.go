package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/internal/testenv"
)

// TestRESP_GlobMatchesRedis: for random names and random patterns (every special byte
// of Redis's glob: * ? [ ] ^ - \), KEYS on the machine's Redis and globMatch agree.
// Every name and pattern starts with a literal prefix of this run, so other tests' keys
// in the same Redis never match.
func TestRESP_GlobMatchesRedis(t *testing.T) {
	t.Parallel()
	rdb := realRedisT(t)
	ctx := context.Background()
	prefix := "glob" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	r := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	const alphabet = `abcA*?[]^-\`
	word := func(n int) string {
		var b strings.Builder
		for range r.IntN(n + 1) {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	names := map[string]bool{}
	for range 300 {
		names[prefix+word(6)] = true
	}
	p := rdb.Pipeline()
	for n := range names {
		p.Set(ctx, n, "1", time.Minute)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for n := range names {
			rdb.Del(context.Background(), n)
		}
	})
	for range 500 {
		pattern := prefix + word(7)
		want, err := rdb.Keys(ctx, pattern).Result()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for n := range names {
			if globMatch(pattern, n, false) {
				got = append(got, n)
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("pattern %q: globMatch %q, Redis %q", pattern, got, want)
		}
	}
}

// TestRESP_GlobCases pins the cases the port must keep (Redis's util.c behaviour).
func TestRESP_GlobCases(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"*", "", false}, // as in Redis; KEYS * and SCAN without MATCH list the empty name anyway
		{"*", "a/b", true}, {"a*", "a", true}, {"?", "", false}, {"h?llo", "hello", true},
		{"h[ae]llo", "hallo", true}, {"h[^e]llo", "hello", false}, {"h[a-b]llo", "hbllo", true},
		{"h[b-a]llo", "hallo", true}, {`h\*llo`, "h*llo", true}, {`h\*llo`, "hello", false},
		{"[\\]]", "]", true}, {"[a-]]", "]", true}, {"[abc", "c", true}, {"[abc", "cd", false},
		{`ab\`, `ab\`, true}, {"**a", "ba", true}, {"a*b*c", "axxbxxc", true}, {"a*b*c", "axxbxx", false},
	} {
		if got := globMatch(c.p, c.s, false); got != c.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", c.p, c.s, got, c.want)
		}
	}
	if !globMatch("H[A-Z]LLO", "hello", true) || globMatch("H[A-Z]LLO", "hello", false) {
		t.Error("nocase folds ASCII, the default does not")
	}
}

func FuzzGlobMatch(f *testing.F) {
	for _, s := range []string{"*", "a*b?c", "[^a-z]", `\[`, "[", "[]", "[\\", "*[a-"} {
		f.Add(s, "abc")
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		m := globMatch(pattern, s, false) // must end, never panic
		if !strings.ContainsAny(pattern, `*?[\`) && m != (pattern == s) {
			t.Fatalf("a pattern without special bytes is a literal: %q %q %v", pattern, s, m)
		}
		if s != "" && !globMatch("*", s, false) {
			t.Fatal("* matches every non-empty string")
		}
	})
}

// TestRESP_ScanKeysDBSize: KEYS, SCAN (every COUNT from 1, MATCH, TYPE) and DBSIZE see
// streams and live strings, not expired ones; a SCAN iteration returns each key once
// even when keys are added and removed during it; an unknown cursor is an error.
func TestRESP_ScanKeysDBSize(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d testDialect) {
		e := d.open(t, nil)
		ctx := context.Background()
		var want []string
		for i := range 12 {
			name := "s:" + strconv.Itoa(i)
			if _, err := e.Do(ctx, "XADD", name, "*", "f", "v"); err != nil {
				t.Fatal(err)
			}
			want = append(want, name)
		}
		for i := range 9 {
			name := "k:" + strconv.Itoa(i)
			if _, err := e.Do(ctx, "SET", name, "v"); err != nil {
				t.Fatal(err)
			}
			want = append(want, name)
		}
		if _, err := e.Do(ctx, "SET", "gone", "v", "PX", "1"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // "gone" expires
		slices.Sort(want)

		keys, err := e.Keys(ctx, "*")
		if err != nil || !slices.Equal(sorted(keys), want) {
			t.Fatalf("KEYS *: %q %v, want %q", keys, err, want)
		}
		if keys, _ := e.Keys(ctx, "s:1*"); !slices.Equal(sorted(keys), []string{"s:1", "s:10", "s:11"}) {
			t.Fatalf("KEYS s:1*: %q", keys)
		}
		if n, err := e.DBSize(ctx); err != nil || n != int64(len(want)) {
			t.Fatalf("DBSIZE %d %v, want %d", n, err, len(want))
		}
		for _, count := range []int64{1, 2, 5, 100} {
			got := scanAll(t, e, ScanOptions{Count: count}, nil)
			if !slices.Equal(sorted(got), want) {
				t.Fatalf("SCAN COUNT %d: %q, want %q", count, got, want)
			}
		}
		if got := scanAll(t, e, ScanOptions{Type: "string", Match: "k:[1-3]"}, nil); !slices.Equal(sorted(got), []string{"k:1", "k:2", "k:3"}) {
			t.Fatalf("SCAN MATCH k:[1-3] TYPE string: %q", got)
		}
		// Keys changing during the iteration: every key present throughout comes back.
		step := 0
		got := scanAll(t, e, ScanOptions{Count: 3}, func() {
			step++
			if _, err := e.Do(ctx, "DEL", "k:"+strconv.Itoa(step)); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Do(ctx, "SET", "a"+strconv.Itoa(step), "v"); err != nil {
				t.Fatal(err)
			}
		})
		seen := map[string]int{}
		for _, k := range got {
			seen[k]++
		}
		for _, k := range want {
			if strings.HasPrefix(k, "s:") && seen[k] != 1 {
				t.Fatalf("stream %s present throughout returned %d times in %q", k, seen[k], got)
			}
		}
		if _, _, err := e.Scan(ctx, 12345, ScanOptions{}); !errors.Is(err, errInvalidCursor) {
			t.Fatalf("unknown cursor: %v", err)
		}
		if _, err := e.Do(ctx, "SCAN", "x"); err == nil || err.Error() != "ERR invalid cursor" {
			t.Fatalf("SCAN x: %v", err)
		}
		if _, err := e.Do(ctx, "SCAN", "0", "COUNT", "0"); err == nil || err.Error() != "ERR syntax error" {
			t.Fatalf("SCAN 0 COUNT 0: %v", err)
		}
		v, err := e.Do(ctx, "SCAN", "0", "MATCH", "s:1?", "COUNT", "1000")
		if err != nil {
			t.Fatal(err)
		}
		if r := v.([]any); r[0] != "0" || len(r[1].([]any)) != 2 {
			t.Fatalf("SCAN 0 MATCH s:1? COUNT 1000: %v", v)
		}
	})
}

// scanAll runs a SCAN iteration to its end, calling between (if set) after each page.
func scanAll(t *testing.T, e *Engine, o ScanOptions, between func()) []string {
	t.Helper()
	var all []string
	var cursor uint64
	for pages := 0; ; pages++ {
		next, keys, err := e.Scan(context.Background(), cursor, o)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, keys...)
		if next == 0 {
			return all
		}
		if pages > 1000 {
			t.Fatal("SCAN never ends")
		}
		cursor = next
		if between != nil {
			between()
		}
	}
}

func sorted(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return out
}

// TestRESP_ScanCursorOnAnyHub: on PostgreSQL a SCAN iteration may go on through another
// engine of the same database (hubs behind a load balancer): pages alternating between
// two engines return every key once; a cursor past its time is an error on both.
func TestRESP_ScanCursorOnAnyHub(t *testing.T) {
	t.Parallel()
	a := openPostgresT(t, nil)
	b := openT(t, Config{Driver: DriverPostgres, DSN: a.cfg.DSN, Schema: a.cfg.Schema})
	ctx := testenv.Context(t, time.Minute)
	var want []string
	for i := range 25 {
		name := "k:" + strconv.Itoa(i)
		if _, err := a.Do(ctx, "SET", name, "v"); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	slices.Sort(want)
	var got []string
	var cursor uint64
	for page := 0; page == 0 || cursor != 0; page++ {
		e := []*Engine{a, b}[page%2]
		next, keys, err := e.Scan(ctx, cursor, ScanOptions{Count: 4})
		if err != nil {
			t.Fatalf("page %d on engine %d: %v", page, page%2, err)
		}
		got, cursor = append(got, keys...), next
		if page > 100 {
			t.Fatal("SCAN never ends")
		}
	}
	if !slices.Equal(sorted(got), want) {
		t.Fatalf("SCAN over two engines: %q, want %q", got, want)
	}

	next, _, err := a.Scan(ctx, 0, ScanOptions{Count: 4})
	if err != nil || next == 0 {
		t.Fatal(next, err)
	}
	if _, err := a.DB().ExecContext(ctx, a.Rebind(`UPDATE kdb_scan_cursors SET created_ms = created_ms - ?`), 2*scanCursorTTL.Milliseconds()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Scan(ctx, next, ScanOptions{Count: 4}); !errors.Is(err, errInvalidCursor) {
		t.Fatalf("a cursor past its time on another engine: %v, want invalid cursor", err)
	}
}
