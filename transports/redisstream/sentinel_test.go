package redisstream

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/internal/testenv/redisproc"
)

// TestHA_RedisSentinel connects through a Sentinel, as a redis+sentinel:// URL does:
// a master of the test's own, one redis-sentinel monitoring it (both on spare loopback
// ports), and the consumer, dead-letter and replay path over go-redis's failover client.
func TestHA_RedisSentinel(t *testing.T) {
	master := redisproc.Start(t)
	dir := t.TempDir()
	port := redisproc.SparePort(t)
	conf := filepath.Join(dir, "sentinel.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor hatest 127.0.0.1 %d 1\nsentinel down-after-milliseconds hatest 5000\n",
		port, dir, master.Port), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("redis-server", conf, "--sentinel", "--logfile", filepath.Join(dir, "sentinel.log"))
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-sentinel: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	testenv.WaitFor(t, 10*time.Second, "the sentinel to listen", func() bool {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	})

	opts, _, err := ParseClientURL(fmt.Sprintf("%s://127.0.0.1:%d/0?master_name=hatest", SchemeSentinel, port), Config{})
	if err != nil {
		t.Fatal(err)
	}
	c := opts.NewClient()
	t.Cleanup(func() { _ = c.Close() })
	if IsCluster(c) {
		t.Fatal("a Sentinel URL made a cluster client")
	}
	ctx := testenv.Context(t, time.Minute)
	sc := redis.NewSentinelClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port)})
	t.Cleanup(func() { _ = sc.Close() })
	if addr, err := sc.GetMasterAddrByName(ctx, "hatest").Result(); err != nil || len(addr) != 2 || addr[1] != strconv.Itoa(master.Port) {
		t.Fatalf("the sentinel names master %v (%v), want port %d", addr, err, master.Port)
	}
	testDLQOperations(t, c)
}
