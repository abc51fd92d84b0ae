package resp

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/transports/kdbstream"
)

// TestRESP_MigrationThenForeignClient is the cutover of docs/kdbstream.md ("Move a
// polyglot fleet off Redis") end to end: state built in the machine's Redis by a plain
// client (entries, a group, pending entries of two consumers with delivery counts 1
// and 2, acked and never-delivered entries) is migrated with kdbstream.Migrate, then a
// go-redis client with no eventhub code, pointed at the front instead of Redis,
// continues: the pending list is Redis's (ids, owners, counts), the consumer re-reads
// its own pending entries, reads the never-delivered ones with ">", acks everything,
// and nothing is left pending.
func TestRESP_MigrationThenForeignClient(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, db testDB) {
		ctx := testenv.Context(t, time.Minute)
		rdb := realRedis(t, 2)
		stream := "migrate:" + testenv.Name(t)
		t.Cleanup(func() { rdb.Del(context.Background(), stream) })
		const group = "billing-ledger"
		var ids []string
		for i := 0; i < 12; i++ {
			id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{"type", "billing.invoice.paid", "n", strconv.Itoa(i)}}).Result()
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(rdb.XGroupCreate(ctx, stream, group, "0").Err())
		// c1 takes 6 and acks 2; c2 takes 2 more, one of them is read twice (count 2).
		must(rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: group, Consumer: "c1", Streams: []string{stream, ">"}, Count: 6, Block: -1}).Err())
		must(rdb.XAck(ctx, stream, group, ids[0], ids[1]).Err())
		must(rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: group, Consumer: "c2", Streams: []string{stream, ">"}, Count: 2, Block: -1}).Err())
		must(rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: group, Consumer: "c2", Streams: []string{stream, ids[6]}, Count: 1, Block: -1}).Err())
		before, err := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: stream, Group: group, Start: "-", End: "+", Count: 100}).Result()
		must(err)

		eng := db.open(t)
		rep, err := kdbstream.Migrate(ctx, rdb, eng, kdbstream.MigrateOptions{Streams: []string{stream}})
		if err != nil {
			t.Fatalf("Migrate: %v (%+v)", err, rep)
		}
		_, addr := startServer(t, eng, Config{Users: map[string]string{"default": "pw"}})
		front := dial(t, addr, 3, func(o *redis.Options) { o.Password = "pw" })

		after, err := front.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: stream, Group: group, Start: "-", End: "+", Count: 100}).Result()
		must(err)
		if fmt.Sprint(pelView(before)) != fmt.Sprint(pelView(after)) {
			t.Fatalf("pending list through the front:\n %v\nin Redis before:\n %v", pelView(after), pelView(before))
		}
		own, err := front.XReadGroup(ctx, &redis.XReadGroupArgs{Group: group, Consumer: "c1", Streams: []string{stream, "0"}, Block: -1}).Result()
		must(err)
		if got := msgIDs(own); fmt.Sprint(got) != fmt.Sprint(ids[2:6]) {
			t.Fatalf("c1's own pending entries %v, want %v", got, ids[2:6])
		}
		fresh, err := front.XReadGroup(ctx, &redis.XReadGroupArgs{Group: group, Consumer: "c1", Streams: []string{stream, ">"}, Block: time.Second}).Result()
		must(err)
		if got := msgIDs(fresh); fmt.Sprint(got) != fmt.Sprint(ids[8:]) {
			t.Fatalf("c1's new entries %v, want the never-delivered %v", got, ids[8:])
		}
		claimed, _, err := front.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: stream, Group: group, Consumer: "c1", MinIdle: 0, Start: "0", Count: 100}).Result()
		must(err)
		var all []string
		for _, m := range claimed {
			all = append(all, m.ID)
		}
		if n, err := front.XAck(ctx, stream, group, all...).Result(); err != nil || n != 10 {
			t.Fatalf("XACK of every un-acked entry: %d, %v; want 10", n, err)
		}
		if p, err := front.XPending(ctx, stream, group).Result(); err != nil || p.Count != 0 {
			t.Fatalf("pending after the foreign client's acks: %+v, %v", p, err)
		}
	})
}

func pelView(ps []redis.XPendingExt) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = fmt.Sprintf("%s:%s:%d", p.ID, p.Consumer, p.RetryCount)
	}
	return out
}

func msgIDs(xs []redis.XStream) []string {
	var out []string
	for _, x := range xs {
		for _, m := range x.Messages {
			out = append(out, m.ID)
		}
	}
	return out
}
