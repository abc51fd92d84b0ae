package resp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/internal/testenv"
)

func TestRESP_ConnectionCommands(t *testing.T) {
	t.Parallel()
	eng := openSQLite(t)
	_, addr := startServer(t, eng, Config{})
	ctx := testenv.Context(t, 30*time.Second)
	for _, proto := range []int{2, 3} {
		c := dial(t, addr, proto, nil)
		check := func(args []any, want string) {
			t.Helper()
			v, err := c.Do(ctx, args...).Result()
			got := ""
			if err != nil {
				got = "error: " + err.Error()
			} else {
				got = strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(toString(v), "\r", ""), "\n", " "))
			}
			if !strings.Contains(got, want) {
				t.Fatalf("RESP%d %v = %q, want it to contain %q", proto, args, got, want)
			}
		}
		check([]any{"PING"}, "PONG")
		check([]any{"PING", "hi"}, "hi")
		check([]any{"ECHO", "x"}, "x")
		check([]any{"SELECT", "0"}, "OK")
		check([]any{"SELECT", "1"}, "ERR DB index is out of range")
		check([]any{"CLIENT", "SETNAME", "svc-a"}, "OK")
		check([]any{"CLIENT", "GETNAME"}, "svc-a")
		check([]any{"CLIENT", "SETNAME", "bad name"}, "cannot contain spaces")
		check([]any{"CLIENT", "LIST"}, "name=svc-a")
		check([]any{"CLIENT", "KILL", "x"}, "ERR unknown subcommand 'KILL'")
		check([]any{"INFO", "server"}, "redis_version:"+Version)
		check([]any{"INFO"}, "loading:0")
		if proto == 2 {
			if v, _ := c.Do(ctx, "INFO", "keyspace").Text(); strings.Contains(v, "db0:") {
				t.Fatalf("INFO keyspace of an empty keyspace has a db0 line: %q", v)
			}
			c.Do(ctx, "XADD", "ks", "*", "f", "v")
			c.Do(ctx, "SET", "ks:ttl", "v", "EX", "100")
		}
		check([]any{"INFO", "keyspace"}, "db0:keys=2,expires=1,avg_ttl=0")
		check([]any{"DBSIZE"}, "2")
		check([]any{"COMMAND", "COUNT"}, "")
		check([]any{"COMMAND", "INFO", "xadd"}, "xadd")
		check([]any{"FLUSHALL"}, "ERR unknown command 'FLUSHALL'")
		check([]any{"SUBSCRIBE", "x"}, "ERR unknown command 'SUBSCRIBE'")
		check([]any{"EVALSHA", strings.Repeat("0", 40), "0"}, "NOSCRIPT")
		check([]any{"EVAL", "return 1", "0"}, "not one of them")
		check([]any{"AUTH", "pw"}, "without any password configured")
		check([]any{"HELLO", "4"}, "NOPROTO")
	}
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var b strings.Builder
		for _, e := range x {
			b.WriteString(toString(e) + " ")
		}
		return b.String()
	case map[any]any:
		var b strings.Builder
		for k, e := range x {
			b.WriteString(toString(k) + "=" + toString(e) + " ")
		}
		return b.String()
	case nil:
		return "nil"
	}
	return fmt.Sprint(v)
}

func TestRESP_Auth(t *testing.T) {
	t.Parallel()
	eng := openSQLite(t)
	tok, tenantTok := auth.GenerateAdminToken(), auth.GenerateAdminToken()
	tokens, err := auth.ParseAdminTokens(tok+"\n"+tenantTok+" tenant=t1\n", "tokens")
	if err != nil {
		t.Fatal(err)
	}
	_, addr := startServer(t, eng, Config{Users: map[string]string{"default": "s3cret", "svc": "pw2"}, Tokens: tokens})
	ctx := testenv.Context(t, 30*time.Second)

	t.Run("NoAuthRefused", func(t *testing.T) {
		c := dial(t, addr, 2, nil)
		if err := c.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"k", "v"}}).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOAUTH") {
			t.Fatalf("XADD without AUTH: %v, want NOAUTH", err)
		}
	})
	t.Run("WrongPassword", func(t *testing.T) {
		for _, proto := range []int{2, 3} {
			c := dial(t, addr, proto, func(o *redis.Options) { o.Password = "nope" })
			if err := c.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
				t.Fatalf("RESP%d with a wrong password: %v, want WRONGPASS", proto, err)
			}
		}
	})
	t.Run("UsersAndToken", func(t *testing.T) {
		for _, o := range []func(*redis.Options){
			func(o *redis.Options) { o.Password = "s3cret" },
			func(o *redis.Options) { o.Username, o.Password = "svc", "pw2" },
			func(o *redis.Options) { o.Username, o.Password = "ops", tok },
			func(o *redis.Options) { o.Password = tok; o.Protocol = 2 },
		} {
			c := dial(t, addr, 3, o)
			if err := c.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"k", "v"}}).Err(); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("TenantTokenRefused", func(t *testing.T) {
		c := dial(t, addr, 3, func(o *redis.Options) { o.Password = tenantTok })
		if err := c.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
			t.Fatalf("a tenant-scoped admin token: %v, want WRONGPASS (stream commands are not tenant-scoped)", err)
		}
	})
}

// TestRESP_BlockingReads: a blocked XREADGROUP is woken by an XADD from another
// client; CLIENT UNBLOCK ends one (TIMEOUT: nil; ERROR: UNBLOCKED); a client that
// disconnects while blocked releases its handler at once; many idle blocked clients
// run no query (the engine's waiters only).
func TestRESP_BlockingReads(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, db testDB) {
		c, _, addr := frontClient(t, db)
		ctx := testenv.Context(t, time.Minute)
		if err := c.XGroupCreateMkStream(ctx, "s", "g", "$").Err(); err != nil {
			t.Fatal(err)
		}
		// "u" is never appended to: reads blocked on it stay blocked.
		if err := c.XGroupCreateMkStream(ctx, "u", "g", "$").Err(); err != nil {
			t.Fatal(err)
		}
		t.Run("WokenByAppend", func(t *testing.T) {
			got := make(chan []redis.XStream, 1)
			go func() {
				r, _ := dial(t, addr, 3, nil).XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"s", ">"}, Block: 0}).Result()
				got <- r
			}()
			time.Sleep(50 * time.Millisecond) // either way (parked yet or not) it must see the entry
			if err := c.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"k", "v"}}).Err(); err != nil {
				t.Fatal(err)
			}
			select {
			case r := <-got:
				if len(r) != 1 || len(r[0].Messages) != 1 {
					t.Fatalf("woken with %+v", r)
				}
			case <-ctx.Done():
				t.Fatal("BLOCK 0 read not woken by XADD")
			}
		})
		t.Run("XReadBlockDollar", func(t *testing.T) {
			got := make(chan []redis.XStream, 1)
			go func() {
				r, _ := dial(t, addr, 2, nil).XRead(ctx, &redis.XReadArgs{Streams: []string{"other", "s", "$", "$"}, Block: 20 * time.Second}).Result()
				got <- r
			}()
			waitBlocked(t, c, 1)
			// A client counts as blocked before its "$" is resolved; if "$" falls after
			// an append the read waits for the next one, as on Redis: append until it
			// wakes, and check it got one of ours.
			var r []redis.XStream
			for woke := false; !woke; {
				if err := c.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"k", "w"}}).Err(); err != nil {
					t.Fatal(err)
				}
				select {
				case r = <-got:
					woke = true
				case <-time.After(200 * time.Millisecond):
				case <-ctx.Done():
					t.Fatal("XREAD BLOCK $ not woken")
				}
			}
			if len(r) != 1 || r[0].Stream != "s" || r[0].Messages[0].Values["k"] != "w" {
				t.Fatalf("XREAD BLOCK $ got %+v", r)
			}
		})
		t.Run("ClientUnblock", func(t *testing.T) {
			for _, mode := range []string{"TIMEOUT", "ERROR"} {
				b := dial(t, addr, 3, nil)
				id, err := b.ClientID(ctx).Result()
				if err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() {
					_, err := b.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "u", Streams: []string{"u", ">"}, Block: 0}).Result()
					done <- err
				}()
				waitBlocked(t, c, 1)
				if n, err := c.Do(ctx, "CLIENT", "UNBLOCK", id, mode).Int(); err != nil || n != 1 {
					l, _ := c.ClientList(ctx).Result()
					t.Fatalf("CLIENT UNBLOCK %d = %d, %v\n%s", id, n, err, l)
				}
				err = <-done
				if mode == "TIMEOUT" && err != redis.Nil || mode == "ERROR" && (err == nil || !strings.HasPrefix(err.Error(), "UNBLOCKED")) {
					t.Fatalf("unblocked with %s: %v", mode, err)
				}
			}
		})
		t.Run("DisconnectReleasesHandler", func(t *testing.T) {
			b := dial(t, addr, 2, nil)
			go b.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "gone", Streams: []string{"u", ">"}, Block: 0})
			waitBlocked(t, c, 1)
			b.Close()
			waitBlocked(t, c, 0)
		})
		t.Run("ManyIdleBlockedClients", func(t *testing.T) {
			const n = 200
			var wg sync.WaitGroup
			results := make(chan int, n)
			for i := 0; i < n; i++ {
				b := dial(t, addr, 3, nil)
				wg.Add(1)
				go func() {
					defer wg.Done()
					r, _ := b.XRead(ctx, &redis.XReadArgs{Streams: []string{"idle", "$"}, Block: 0}).Result()
					results <- len(r)
				}()
			}
			waitBlocked(t, c, n)
			// A client counts as blocked before its "$" is resolved; one whose "$" falls
			// after an append waits for the next, as on Redis: append until all woke.
			all := make(chan struct{})
			go func() { wg.Wait(); close(all) }()
			for done := false; !done; {
				if err := c.XAdd(ctx, &redis.XAddArgs{Stream: "idle", Values: []string{"k", "v"}}).Err(); err != nil {
					t.Fatal(err)
				}
				select {
				case <-all:
					done = true
				case <-time.After(200 * time.Millisecond):
				case <-ctx.Done():
					t.Fatal("blocked XREADs not woken")
				}
			}
			close(results)
			for r := range results {
				if r != 1 {
					t.Fatalf("a blocked XREAD woke with %d streams", r)
				}
			}
		})
	})
}

// waitBlocked waits until INFO clients reports n blocked clients.
func waitBlocked(t *testing.T, c *redis.Client, n int) {
	t.Helper()
	want := "blocked_clients:" + itoa(n) + "\r"
	testenv.WaitFor(t, 20*time.Second, "blocked clients: "+itoa(n), func() bool {
		s, err := c.Info(context.Background(), "clients").Result()
		return err == nil && strings.Contains(s, want)
	})
}
