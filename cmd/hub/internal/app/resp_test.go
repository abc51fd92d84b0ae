package app_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/cmd/hub/internal/app"
	"github.com/koder/eventhub/cmd/hub/internal/config"
	"github.com/koder/eventhub/internal/testenv"
)

// TestRESP_ConfigLint pins the resp section's problems at their keys.
func TestRESP_ConfigLint(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"Off", "store: {sqlite: hub.db}\n", nil},
		{"Loopback", "store: {sqlite: hub.db}\nresp: {listen: 127.0.0.1:6380}\n", nil},
		{"PublicNeedsAuth", "store: {sqlite: hub.db}\nresp: {listen: 0.0.0.0:6380}\n",
			[]string{"hub.yaml:2:16: resp.listen: without users or admin_token the RESP listener may only listen on a loopback address"}},
		{"NeedsStore", "resp: {listen: 127.0.0.1:6380}\n", []string{"hub.yaml:1:16: resp.listen: needs a store"}},
		{"BadListen", "store: {sqlite: hub.db}\nresp: {listen: nope}\n", []string{"hub.yaml:2:16: resp.listen: expected host:port"}},
		{"EmptyPassword", "store: {sqlite: hub.db}\nresp:\n  listen: 0.0.0.0:6380\n  users: {svc: \"\"}\n",
			[]string{"hub.yaml:4:16: resp.users.svc: empty password"}},
		{"AdminTokenNeedsOne", "store: {sqlite: hub.db}\nresp: {listen: 127.0.0.1:6380, admin_token: true}\n",
			[]string{"resp.admin_token: needs admin.token"}},
		{"TLSNeedsBoth", "store: {sqlite: hub.db}\nresp: {listen: 127.0.0.1:6380, tls: {cert_file: c.pem}}\n",
			[]string{"resp.tls.key_file: missing"}},
		{"UsersWithoutListener", "store: {sqlite: hub.db}\nresp: {users: {a: b}}\n", []string{"resp.listen: missing"}},
		{"UnknownKey", "store: {sqlite: hub.db}\nresp: {listen: 127.0.0.1:6380, pasword: x}\n", []string{"pasword"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ps := lint(t, c.yaml, nil)
			if len(ps) != len(c.want) {
				t.Fatalf("problems:\n%v\nwant %d: %v", ps, len(c.want), c.want)
			}
			for i, w := range c.want {
				if !strings.Contains(ps[i].String(), w) {
					t.Fatalf("problem %d: %q, want it to contain %q", i, ps[i].String(), w)
				}
			}
		})
	}
}

// TestRESP_DocsConfigExamplesLint: the resp examples in docs/hub-binary.md and
// docs/kdbstream.md (the YAML blocks after a "<!-- lint: resp -->" line) pass hub lint.
func TestRESP_DocsConfigExamplesLint(t *testing.T) {
	t.Parallel()
	block := regexp.MustCompile("(?s)<!-- lint: resp -->\\s*```yaml\\n(.*?)```")
	for _, doc := range []string{"hub-binary.md", "kdbstream.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", doc))
		if err != nil {
			t.Fatal(err)
		}
		ms := block.FindAllSubmatch(b, -1)
		if len(ms) == 0 {
			t.Fatalf("docs/%s has no resp example marked for lint", doc)
		}
		for _, m := range ms {
			vars := map[string]string{"KODER_RESP_PASSWORD": "pw", "BILLING_RESP_PASSWORD": "pw2", "HUB_ADMIN_TOKEN": "eha_0123456789abcdefghijklmnopqrstuv",
				"DATABASE_URL": "postgres://hub@127.0.0.1/hub"}
			if ps := lint(t, string(m[1]), vars); len(ps) > 0 {
				t.Fatalf("docs/%s example:\n%s\nproblems:\n%v", doc, m[1], ps)
			}
		}
	}
}

// TestRESP_HubRunServesRedisProtocol: `hub run` with a resp section serves the
// store's streams to a plain Redis client, with AUTH, and stops with the hub.
func TestRESP_HubRunServesRedisProtocol(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	yaml := "store: {sqlite: " + filepath.Join(dir, "hub.db") + "}\nadmin: {listen: off}\nresp:\n  listen: 127.0.0.1:0\n  users: {default: pw}\n"
	f, ps := config.Parse("hub.yaml", dir, []byte(yaml), env(nil))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	p, ps := app.Build(f, env(nil), testenv.Logger(t))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	ctx := testenv.Context(t, 30*time.Second)
	a, err := app.Start(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: a.Addr("resp"), Password: "pw"})
	defer c.Close()
	if err := c.XGroupCreateMkStream(ctx, "koder:events:billing", "audit-log", "$").Err(); err != nil {
		t.Fatal(err)
	}
	id, err := c.XAdd(ctx, &redis.XAddArgs{Stream: "koder:events:billing", Values: []string{"type", "billing.invoice.paid"}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "audit-log", Consumer: "c1", Streams: []string{"koder:events:billing", ">"}, Block: time.Second}).Result()
	if err != nil || len(got) != 1 || got[0].Messages[0].ID != id {
		t.Fatalf("XREADGROUP: %v, %v", got, err)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx).Err(); err == nil {
		t.Fatal("the RESP listener still answers after Close")
	}
}
