package redisstream

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/hub/transporttest"
	"github.com/koder/eventhub/internal/streams/streamtest"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/internal/testenv/redisproc"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// startCluster starts a Redis Cluster of masters redis-servers on spare loopback ports
// (client and cluster-bus ports both picked free, so nothing else on the machine is
// touched), joins them with redis-cli --cluster create and waits until every slot is
// served. It returns the seed addresses.
func startCluster(t *testing.T, masters int) []string {
	t.Helper()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		if testenv.InCI() {
			t.Fatal("redis-cli is not installed (CI=true: this test needs it)")
		}
		t.Skip("SKIPPING: redis-cli is not installed")
	}
	addrs := make([]string, masters)
	for i := range addrs {
		s := redisproc.StartWith(t, func(port int) []string {
			return []string{"--port", strconv.Itoa(port), "--cluster-enabled", "yes",
				"--cluster-port", strconv.Itoa(redisproc.SparePort(t)), "--cluster-config-file", "nodes.conf",
				"--appendonly", "no", "--cluster-node-timeout", "2000"}
		})
		addrs[i] = "127.0.0.1:" + strconv.Itoa(s.Port)
	}
	args := append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	ctx := testenv.Context(t, 30*time.Second)
	testenv.WaitFor(t, 30*time.Second, "every cluster node reports cluster_state:ok", func() bool {
		for _, a := range addrs {
			c := redis.NewClient(&redis.Options{Addr: a})
			info, err := c.ClusterInfo(ctx).Result()
			_ = c.Close()
			if err != nil || !strings.Contains(info, "cluster_state:ok") {
				return false
			}
		}
		return true
	})
	return addrs
}

// clusterURL is the redis+cluster URL of the seed addresses.
func clusterURL(addrs []string) string {
	return SchemeCluster + "://" + strings.Join(addrs, ",") + "/"
}

// newClusterClient connects to the cluster the way the hub does: from its URL.
func newClusterClient(t *testing.T, addrs []string) *redis.ClusterClient {
	t.Helper()
	opts, _, err := ParseClientURL(clusterURL(addrs), Config{})
	if err != nil {
		t.Fatal(err)
	}
	c, ok := opts.NewClient().(*redis.ClusterClient)
	if !ok {
		t.Fatalf("%s did not make a cluster client", clusterURL(addrs))
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestHA_RedisCluster runs the transport on a three-master Redis Cluster: the
// conformance suite, the shared stream contract, DLQ operations (the Lua scripts touch a
// stream and its dead-letter stream, which share a slot), the idempotency store and the
// migration to kdbstream.
func TestHA_RedisCluster(t *testing.T) {
	addrs := startCluster(t, 3)
	c := newClusterClient(t, addrs)

	t.Run("slots", func(t *testing.T) {
		ctx := testenv.Context(t, time.Minute)
		// KeySlot agrees with the server, and the streams the tests use really are
		// spread over the masters (the cluster is not one node in disguise).
		nodes := map[string]bool{}
		for _, key := range []string{"koder:events:id", "koder:events:auth", "events.user", "{koder:events:id}:dlq", "orders:{eu}", "foo", "foo{{bar}}zap", "foo{}{bar}", "a", "b", "c"} {
			want, err := c.ClusterKeySlot(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			if got := KeySlot(key); int64(got) != want {
				t.Errorf("KeySlot(%q) = %d, CLUSTER KEYSLOT = %d", key, got, want)
			}
			node, err := c.MasterForKey(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			nodes[node.Options().Addr] = true
		}
		if len(nodes) < 2 {
			t.Errorf("the sample keys all live on %v", nodes)
		}
		if KeySlot("koder:events:id") != KeySlot(DLQStreamFor(c, "koder:events:id")) {
			t.Error("a stream and its default cluster DLQ are in different slots")
		}
	})

	t.Run("conformance", func(t *testing.T) {
		transporttest.Run(t, func(t *testing.T) transporttest.Harness {
			return newConfHarnessOn(t, c, testenv.Name(t))
		}, transporttest.Features{Ordered: true, Persistent: true, ConsumerGroups: true, Redelivery: true})
	})

	t.Run("contract", func(t *testing.T) {
		streamtest.Run(t, harnessOn(c))
	})

	t.Run("dlq", func(t *testing.T) { testDLQOperations(t, c) })

	t.Run("idempotency", func(t *testing.T) { testIdempotencyStore(t, c) })

	t.Run("cross_slot_dlq_refused", func(t *testing.T) {
		_, err := NewConsumer(c, streams.ConsumerConfig{Stream: "koder:events:id", Group: "id-cluster", DLQStream: "koder:events:id:dlq"})
		if err == nil || !strings.Contains(err.Error(), "hash slot") {
			t.Fatalf("a DLQ in another slot: %v, want a hash-slot error", err)
		}
		if _, err := NewConsumer(c, streams.ConsumerConfig{Stream: "orders:{eu}", Group: "orders-cluster", DLQStream: "dead:{eu}"}); err != nil {
			t.Fatalf("a DLQ sharing the hash tag: %v", err)
		}
	})

	t.Run("migrate", func(t *testing.T) {
		ctx := testenv.Context(t, time.Minute)
		stream := "koder:events:" + sanitize(strings.ToLower(testenv.Name(t)))
		t.Cleanup(func() { c.Del(context.Background(), stream) })
		tr, err := New(c, Config{Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tr.Close() })
		if err := tr.Send(ctx, newEvents(t, 20)); err != nil {
			t.Fatal(err)
		}
		if err := c.XGroupCreate(ctx, stream, "hub-migration", "0").Err(); err != nil {
			t.Fatal(err)
		}
		eng, err := engine.Open(ctx, engine.Config{Driver: engine.DriverSQLite, DSN: filepath.Join(t.TempDir(), "hub.db")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = eng.Close() })
		rep, err := kdbstream.Migrate(ctx, c, eng, kdbstream.MigrateOptions{Streams: []string{stream}})
		if err != nil || !rep.OK() {
			t.Fatalf("Migrate from the cluster: %+v, %v", rep, err)
		}
		if len(rep.Streams) != 1 || rep.Streams[0].Copied != 20 || len(rep.Streams[0].Groups) != 1 {
			t.Fatalf("report: %+v", rep.Streams)
		}
	})
}
