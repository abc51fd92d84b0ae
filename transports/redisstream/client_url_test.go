package redisstream

import (
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/hub"
)

func TestHA_ClientURL(t *testing.T) {
	t.Parallel()
	t.Run("ClusterSeedList", func(t *testing.T) {
		t.Parallel()
		o, cfg, err := ParseClientURL("rediss+cluster://alice:s3cret@r1:7000,r2:7001,r3:7002/?service=id&max_redirects=5&dial_timeout=2s", Config{})
		if err != nil {
			t.Fatal(err)
		}
		c := o.Cluster
		if c == nil || o.Single != nil || o.Failover != nil {
			t.Fatalf("options %+v", o)
		}
		if strings.Join(c.Addrs, ",") != "r1:7000,r2:7001,r3:7002" || c.Username != "alice" || c.Password != "s3cret" ||
			c.TLSConfig == nil || c.MaxRedirects != 5 || c.DialTimeout != 2*time.Second {
			t.Fatalf("cluster options %+v", c)
		}
		if cfg.Service != "id" {
			t.Fatalf("config %+v", cfg)
		}
	})
	t.Run("ClusterGoRedisShape", func(t *testing.T) {
		t.Parallel()
		o, _, err := ParseClientURL("redis+cluster://r1:7000?addr=r2:7001&addr=r3:7002", Config{})
		if err != nil || o.Cluster == nil || len(o.Cluster.Addrs) != 3 || o.Cluster.TLSConfig != nil {
			t.Fatalf("%+v, %v", o.Cluster, err)
		}
	})
	t.Run("Sentinel", func(t *testing.T) {
		t.Parallel()
		o, cfg, err := ParseClientURL("redis+sentinel://:pw@s1:26379,s2:26379/3?master_name=mymaster&stream=orders", Config{})
		if err != nil {
			t.Fatal(err)
		}
		f := o.Failover
		if f == nil || f.MasterName != "mymaster" || strings.Join(f.SentinelAddrs, ",") != "s1:26379,s2:26379" ||
			f.DB != 3 || f.Password != "pw" || f.SentinelPassword != "pw" || cfg.Stream != "orders" {
			t.Fatalf("failover options %+v, config %+v", f, cfg)
		}
	})
	t.Run("SingleUnchanged", func(t *testing.T) {
		t.Parallel()
		o, _, err := ParseClientURL("redis://127.0.0.1:6379/1", Config{})
		if err != nil || o.Single == nil || o.Single.DB != 1 {
			t.Fatalf("%+v, %v", o, err)
		}
	})
	t.Run("ClientKinds", func(t *testing.T) {
		t.Parallel()
		for raw, cluster := range map[string]bool{
			"redis://127.0.0.1:1/0":                          false,
			"redis+cluster://127.0.0.1:1,127.0.0.1:2/":       true,
			"redis+sentinel://127.0.0.1:1/0?master_name=m":   false,
			"rediss+sentinel://127.0.0.1:1/0?master_name=mm": false,
		} {
			o, _, err := ParseClientURL(raw, Config{})
			if err != nil {
				t.Fatalf("%s: %v", raw, err)
			}
			c := o.NewClient()
			if IsCluster(c) != cluster {
				t.Errorf("%s: IsCluster = %v", raw, !cluster)
			}
			_ = c.Close()
		}
	})
	t.Run("ErrorsAreClearAndRedacted", func(t *testing.T) {
		t.Parallel()
		for raw, want := range map[string]string{
			"redis+cluster://alice:s3cret@r1:7000,r2:7001/2":            "database 0",
			"redis+cluster://alice:s3cret@r1:7000,,r2:7001/":            "empty host",
			"redis+cluster://alice:s3cret@r1:7000/?bogus=1":             "bogus",
			"redis+cluster://alice:s3cret@r1:7000/?max_len=many":        "max_len",
			"redis+sentinel://alice:s3cret@s1:26379/0":                  "master_name",
			"redis+sentinel://alice:s3cret@s1:26379/x?master_name=m":    "database",
			"redis+nonsense://alice:s3cret@h:1/":                        "scheme",
			"alice:s3cret@h:1":                                          "no scheme",
			"redis+cluster://alice:s3cret@r1:7000/?service=a&service=b": "2 times",
		} {
			_, _, err := ParseClientURL(raw, Config{})
			if hub.Code(err) != hub.InvalidArgument || !strings.Contains(err.Error(), want) {
				t.Errorf("ParseClientURL(%q): %v, want InvalidArgument mentioning %q", redactSeedURL(raw), err, want)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error shows the password: %v", err)
			}
		}
	})
}

func TestHA_KeySlot(t *testing.T) {
	t.Parallel()
	// The hash-tag rules of the cluster specification; TestHA_RedisCluster compares
	// with CLUSTER KEYSLOT on a server.
	if KeySlot("foo") != 12182 || KeySlot("bar") != 5061 {
		t.Errorf("KeySlot(foo), KeySlot(bar) = %d, %d; want 12182, 5061", KeySlot("foo"), KeySlot("bar"))
	}
	for key, hashed := range map[string]string{
		"{user1000}.following": "user1000", "foo{}{bar}": "foo{}{bar}", "foo{{bar}}zap": "{bar", "foo{bar}{zap}": "bar", "{": "{", "a{b": "a{b",
	} {
		if KeySlot(key) != KeySlot(hashed) || hashTag(key) != hashed {
			t.Errorf("%q hashes %q, want %q", key, hashTag(key), hashed)
		}
	}
	for _, s := range []string{"koder:events:id", "events.user", "orders:{eu}", "{x}"} {
		if KeySlot(s) != KeySlot(ClusterDLQStreamFor(s)) {
			t.Errorf("%q and %q are in different slots", s, ClusterDLQStreamFor(s))
		}
	}
	if got := ClusterDLQStreamFor("orders:{eu}"); got != "orders:{eu}:dlq" {
		t.Errorf("a tagged stream's DLQ = %q", got)
	}
	if got := ClusterDLQStreamFor("koder:events:id"); got != "{koder:events:id}:dlq" {
		t.Errorf("an R1 stream's DLQ = %q", got)
	}
}

// FuzzParseClientURL: any input gives options or an InvalidArgument error, never a
// panic, and an error never quotes the password.
func FuzzParseClientURL(f *testing.F) {
	for _, s := range []string{
		"redis://127.0.0.1:6379/0", "rediss+cluster://u:p@a:1,b:2/?max_redirects=3",
		"redis+sentinel://:pw@s1:26379,s2:26379/0?master_name=m", "redis+cluster://a:1,,b:2/",
		"redis+cluster://@/", "redis+sentinel://x@y@z/?master_name=", "redis+cluster://a:1/?addr=b:2&service=id",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		o, _, err := ParseClientURL(raw, Config{})
		if err != nil {
			if hub.Code(err) != hub.InvalidArgument {
				t.Fatalf("%q: %v, want InvalidArgument", raw, err)
			}
			return
		}
		if n := btoi(o.Single != nil) + btoi(o.Cluster != nil) + btoi(o.Failover != nil); n != 1 {
			t.Fatalf("%q: %d kinds of options", raw, n)
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
