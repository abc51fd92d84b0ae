package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/internal/testenv"
)

// TestR9_DifferentialAgainstRedis drives the same seeded random command sequences
// against the machine's Redis and kdbstream on each database of testDialects (subtests
// SQLite/seedN, Postgres/seedN) and compares every reply. Only idle times are
// normalised (they depend on the wall clock).
func TestR9_DifferentialAgainstRedis(t *testing.T) {
	t.Parallel()
	rdb := realRedisT(t)
	seeds := differentialSeeds
	forEachDialect(t, func(t *testing.T, d testDialect) {
		eng := d.open(t, nil)
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
				runDifferential(t, rdb, eng, seed, 400)
			})
		}
		// The generator reads at most 3 entries at a time: with runs of at most 2 ids,
		// reads become several runs and acks cross them.
		small := d.open(t, nil)
		small.runIDs = 2
		for _, seed := range seeds[:3] {
			t.Run(fmt.Sprintf("runs2/seed%d", seed), func(t *testing.T) {
				runDifferential(t, rdb, small, seed, 400)
			})
		}
	})
}

// differentialSeeds are the sequences every differential mode runs.
var differentialSeeds = []uint64{1, 2, 3, 42, 2026, 7}

func runDifferential(t *testing.T, rdb *redis.Client, eng *Engine, seed uint64, n int) {
	RunDifferential(t, func(ctx context.Context, cmd []string) (any, error) { return RedisDo(ctx, rdb, cmd) },
		func(ctx context.Context, cmd []string) (any, error) {
			v, err := eng.Do(ctx, cmd...)
			return RESP2(v), err
		}, func(keys ...string) { rdb.Del(context.Background(), keys...) }, seed, n)
}

// Doer runs one command and returns its reply as a go-redis client decodes it.
type Doer func(ctx context.Context, cmd []string) (any, error)

// RunDifferential drives the seeded sequence of n commands against want (a real
// Redis) and got, comparing every reply; cleanup deletes the test's keys from the real
// Redis. The Redis protocol front's test runs it with go-redis on both sides.
func RunDifferential(t *testing.T, want, got Doer, cleanup func(keys ...string), seed uint64, n int) {
	t.Helper()
	ctx := testenv.Context(t, 2*time.Minute)
	key := "kdbdiff:" + testenv.Name(t)
	t.Cleanup(func() { cleanup(key, key+":b", key+":str") })
	g := newGen(seed, key)
	var hist []string
	for i := 0; i < n; i++ {
		cmd := g.next()
		want := canon(want(ctx, cmd))
		got := canon(got(ctx, cmd))
		hist = append(hist, fmt.Sprintf("#%d %s -> %s", i, strings.Join(cmd, " "), want))
		if got != want {
			t.Fatalf("seed %d, command #%d diverges: %s\n redis:     %s\n kdbstream: %s\nhistory:\n%s", seed, i, strings.Join(cmd, " "), want, got,
				strings.ReplaceAll(strings.Join(hist[max(0, len(hist)-25):], "\n"), key, "K"))
		}
		g.observe(cmd, want)
	}
}

// RedisDo runs cmd through go-redis's generic Do; redis.Nil becomes a nil reply.
func RedisDo(ctx context.Context, rdb *redis.Client, cmd []string) (any, error) {
	args := make([]any, len(cmd))
	for i, c := range cmd {
		args[i] = c
	}
	v, err := rdb.Do(ctx, args...).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return v, err
}

// canon renders a reply; XPENDING and XINFO CONSUMERS idle times become "~idle" and
// XINFO STREAM drops the radix-tree fields (internal node counts kdbstream has no
// equivalent for). RESP3 maps (go-redis: map[any]any) render with sorted keys.
func canon(v any, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	render(&b, v)
	return b.String()
}

func render(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("nil")
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case string:
		b.WriteString(strconv.Quote(x))
	case map[any]any:
		keys := make([]string, 0, len(x))
		byKey := map[string]any{}
		for k, v := range x {
			ks := fmt.Sprint(k)
			switch ks {
			case "radix-tree-keys", "radix-tree-nodes":
				continue
			case "idle":
				v = "~idle"
			}
			keys = append(keys, ks)
			byKey[ks] = v
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.Quote(k) + ":")
			render(b, byKey[k])
		}
		b.WriteByte('}')
	case []any:
		if len(x) >= 2 && x[0] == "length" {
			x = dropFields(x, "radix-tree-keys", "radix-tree-nodes")
		}
		if len(x) == 4 && isID(x[0]) && isStr(x[1]) && isInt(x[2]) && isInt(x[3]) {
			x = []any{x[0], x[1], "~idle", x[3]} // XPENDING extended row
		}
		if len(x) == 6 && x[0] == "name" && x[4] == "idle" {
			x = []any{x[0], x[1], x[2], x[3], x[4], "~idle"} // XINFO CONSUMERS row
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(' ')
			}
			render(b, e)
		}
		b.WriteByte(']')
	default:
		fmt.Fprintf(b, "%T(%v)", v, v)
	}
}

func dropFields(kv []any, names ...string) []any {
	out := make([]any, 0, len(kv))
	for i := 0; i+1 < len(kv); i += 2 {
		drop := false
		for _, n := range names {
			if kv[i] == n {
				drop = true
			}
		}
		if !drop {
			out = append(out, kv[i], kv[i+1])
		}
	}
	return out
}

func isStr(v any) bool { _, ok := v.(string); return ok }
func isInt(v any) bool { _, ok := v.(int64); return ok }
func isID(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	_, err := ParseStrictID(s)
	return err == nil && strings.Contains(s, "-")
}

// gen produces commands with explicit ids so both sides agree on every id.
type gen struct {
	r       *rand.Rand
	key     string
	ms      int64
	ids     []string // ids ever added (some deleted or trimmed since)
	groups  []string
	cons    []string
	started bool
}

func newGen(seed uint64, key string) *gen {
	return &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), key: key, ms: 1000,
		groups: []string{"ga", "gb", "gc"}, cons: []string{"alice", "bob", "carol"}}
}

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) someIDs(max int) []string {
	n := 1 + g.r.IntN(max)
	out := make([]string, 0, n)
	for range n {
		if len(g.ids) == 0 || g.r.IntN(8) == 0 {
			out = append(out, fmt.Sprintf("%d-%d", g.r.IntN(3000), g.r.IntN(3)))
			continue
		}
		out = append(out, g.ids[g.r.IntN(len(g.ids))])
	}
	return out
}

func (g *gen) anyID() string {
	if len(g.ids) > 0 && g.r.IntN(4) > 0 {
		return g.ids[g.r.IntN(len(g.ids))]
	}
	return fmt.Sprintf("%d-%d", g.ms-int64(g.r.IntN(500)), g.r.IntN(2))
}

func (g *gen) next() []string {
	k := g.key
	if !g.started {
		g.started = true
		return []string{"XGROUP", "CREATE", k, "ga", "$", "MKSTREAM"}
	}
	if g.r.IntN(4) == 0 {
		return g.extra()
	}
	switch p := g.r.IntN(100); {
	case p < 30:
		g.ms += int64(g.r.IntN(3))
		var id string
		switch g.r.IntN(10) {
		case 0:
			id = fmt.Sprintf("%d-%d", g.ms-int64(g.r.IntN(3)), g.r.IntN(3)) // often too small
		case 1:
			id = fmt.Sprintf("%d-*", g.ms+1)
			g.ms++
		default:
			g.ms++
			id = fmt.Sprintf("%d-%d", g.ms, g.r.IntN(5))
		}
		cmd := []string{"XADD", k}
		if g.r.IntN(8) == 0 {
			cmd = append(cmd, "MAXLEN", "=", strconv.Itoa(5+g.r.IntN(30)))
		}
		cmd = append(cmd, id, "f", strconv.Itoa(g.r.IntN(1000)), "\x00bin\xff", "é")
		return cmd
	case p < 34:
		start := []string{"$", "0", g.anyID()}[g.r.IntN(3)]
		return []string{"XGROUP", "CREATE", k, g.pick(g.groups), start, "MKSTREAM"}
	case p < 52:
		id := ">"
		if g.r.IntN(4) == 0 {
			id = []string{"0", g.anyID()}[g.r.IntN(2)]
		}
		grp := g.pick(g.groups)
		if g.r.IntN(30) == 0 {
			grp = "nogroup"
		}
		return []string{"XREADGROUP", "GROUP", grp, g.pick(g.cons), "COUNT", strconv.Itoa(1 + g.r.IntN(6)), "STREAMS", k, id}
	case p < 62:
		return append([]string{"XACK", k, g.pick(g.groups)}, g.someIDs(4)...)
	case p < 67:
		return []string{"XPENDING", k, g.pick(g.groups)}
	case p < 72:
		cmd := []string{"XPENDING", k, g.pick(g.groups)}
		if g.r.IntN(3) == 0 {
			cmd = append(cmd, "IDLE", []string{"0", "100000000"}[g.r.IntN(2)])
		}
		start, end := "-", "+"
		if g.r.IntN(3) == 0 {
			start = "(" + g.anyID()
		}
		cmd = append(cmd, start, end, strconv.Itoa(1+g.r.IntN(10)))
		if g.r.IntN(2) == 0 {
			cmd = append(cmd, g.pick(g.cons))
		}
		return cmd
	case p < 78:
		cmd := append([]string{"XCLAIM", k, g.pick(g.groups), g.pick(g.cons), "0"}, g.someIDs(3)...)
		switch g.r.IntN(5) {
		case 0:
			cmd = append(cmd, "JUSTID")
		case 1:
			cmd = append(cmd, "FORCE")
		case 2:
			cmd = append(cmd, "RETRYCOUNT", "7")
		}
		return cmd
	case p < 84:
		cmd := []string{"XAUTOCLAIM", k, g.pick(g.groups), g.pick(g.cons), []string{"0", "100000000"}[g.r.IntN(2)], []string{"0", "0-0", g.anyID()}[g.r.IntN(3)], "COUNT", strconv.Itoa(1 + g.r.IntN(5))}
		if g.r.IntN(4) == 0 {
			cmd = append(cmd, "JUSTID")
		}
		return cmd
	case p < 88:
		return append([]string{"XDEL", k}, g.someIDs(2)...)
	case p < 90:
		if g.r.IntN(2) == 0 {
			return []string{"XTRIM", k, "MAXLEN", strconv.Itoa(3 + g.r.IntN(25))}
		}
		return []string{"XTRIM", k, "MINID", "=", g.anyID()}
	case p < 92:
		return []string{"XLEN", k}
	case p < 95:
		cmd := []string{"XRANGE", k, []string{"-", "(" + g.anyID(), g.anyID()}[g.r.IntN(3)], "+"}
		if g.r.IntN(2) == 0 {
			cmd = append(cmd, "COUNT", strconv.Itoa(1+g.r.IntN(8)))
		}
		return cmd
	case p < 97:
		return []string{"XINFO", "STREAM", k}
	default:
		return []string{"XINFO", "GROUPS", k}
	}
}

// observe records ids Redis accepted.
func (g *gen) observe(cmd []string, reply string) {
	if cmd[0] == "XADD" && !strings.HasPrefix(reply, "error") && reply != "nil" {
		id, _ := strconv.Unquote(reply)
		g.ids = append(g.ids, id)
		if p, err := ParseStrictID(id); err == nil && p.Ms > g.ms {
			g.ms = p.Ms
		}
	}
	sort.Strings(g.cons)
}

// TestR9_ExtremeCountsLikeRedis: the largest counts clients can send give Redis's
// replies on both databases (a COUNT past XAUTOCLAIM's LONG_MAX/16 is its "must be > 0"
// error; XPENDING and XREADGROUP with LONG_MAX answer normally), with entries pending in
// a run, in rows, and none.
func TestR9_ExtremeCountsLikeRedis(t *testing.T) {
	t.Parallel()
	rdb := realRedisT(t)
	forEachDialect(t, func(t *testing.T, d testDialect) {
		eng := d.open(t, nil)
		ctx := testenv.Context(t, time.Minute)
		key := "kdbdiff:" + testenv.Name(t)
		t.Cleanup(func() { rdb.Del(context.Background(), key) })
		top := strconv.FormatInt(math.MaxInt64, 10)
		cmds := [][]string{
			{"XGROUP", "CREATE", key, "g", "$", "MKSTREAM"},
			{"XAUTOCLAIM", key, "g", "c", "0", "0", "COUNT", strconv.FormatInt(math.MaxInt64/16+1, 10)},
			{"XAUTOCLAIM", key, "g", "c", "0", "0", "COUNT", top},
			{"XPENDING", key, "g", "-", "+", top},
			{"XADD", key, "1-1", "f", "v"}, {"XADD", key, "1-2", "f", "v"}, {"XADD", key, "2-1", "f", "v"},
			{"XREADGROUP", "GROUP", "g", "c", "COUNT", top, "STREAMS", key, ">"},
			{"XPENDING", key, "g", "-", "+", top},
			{"XPENDING", key, "g", "IDLE", "0", "(1-1", "+", top, "c"},
			{"XREADGROUP", "GROUP", "g", "c", "COUNT", top, "STREAMS", key, "0"},
			{"XAUTOCLAIM", key, "g", "d", "0", "0", "COUNT", "1000"},
			{"XPENDING", key, "g", "-", "+", top},
		}
		for i, cmd := range cmds {
			want := canon(RedisDo(ctx, rdb, cmd))
			v, err := eng.Do(ctx, cmd...)
			if got := canon(RESP2(v), err); got != want {
				t.Fatalf("command #%d %v:\n redis:     %s\n kdbstream: %s", i, cmd, want, got)
			}
		}
	})
}
