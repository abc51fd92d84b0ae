package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/koder/eventhub/internal/hubproc"
)

// hubProc is one running hub binary.
type hubProc struct {
	*hubproc.Proc
	ingress string // http://host:port/events
	admin   string // http://host:port
	metrics string // http://host:port of the metrics listener, when pprof is on
	cleanup func()
}

// hubConfig is the config of a hub under test: the embedded default's shape (route
// "*" to webhooks through the outbox) on the given store, plus the kdbstream route of
// the embedded default on SQLite, with extra lines for the ingress (extraIngress) and
// the store (extraStore).
func hubConfig(store, ingressAddr, adminAddr string, kdb bool, extraIngress, extraStore, metricsAddr, extraWebhook string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "store:\n%s%s", store, extraStore)
	fmt.Fprintf(&b, "log:\n  level: warn\nsources:\n  ingress:\n    type: http\n    listen: %s\n%s", ingressAddr, extraIngress)
	b.WriteString("transports:\n")
	if kdb {
		b.WriteString("  events:\n    type: kdbstream\n    stream: events\n")
	}
	b.WriteString("  webhooks:\n    type: webhook\n    allow: [\"127.0.0.1\"]\n")
	if extraWebhook != "" {
		b.WriteString("    " + extraWebhook + "\n")
	}
	b.WriteString("routes:\n")
	if kdb {
		b.WriteString("  - pattern: \"#\"\n    to: events\n    delivery: outbox\n    default_subject: unspecified\n")
	}
	b.WriteString("  - pattern: \"*\"\n    to: webhooks\n    delivery: outbox\n")
	fmt.Fprintf(&b, "admin:\n  listen: %s\n", adminAddr)
	if metricsAddr != "" {
		fmt.Fprintf(&b, "metrics:\n  listen: %s\n  pprof: true\n", metricsAddr)
	}
	return b.String()
}

// startHub writes cfg, starts the binary on it and waits until /readyz answers.
func startHub(bin, dir, cfg string, cleanup func()) (*hubProc, error) {
	ingress, admin := addrFrom(cfg, "listen: ", 0), addrFrom(cfg, "listen: ", 1)
	path := filepath.Join(dir, "hub.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	p, err := launch(bin, dir, ingress, admin, "run", "-c", path)
	if err != nil {
		return nil, err
	}
	p.cleanup = cleanup
	if m := addrFrom(cfg, "listen: ", 2); m != "" {
		p.metrics = "http://" + m
	}
	return p, nil
}

// startEmbedded runs `hub run` without a config: the embedded default.
func startEmbedded(bin, dir, ingress, admin string) (*hubProc, error) {
	return launch(bin, dir, ingress, admin, "--log-level", "warn", "run", "--data-dir", dir, "--ingress-addr", ingress, "--admin-addr", admin)
}

// launch starts the binary with args, its log in dir/hub.log, and waits for /readyz.
func launch(bin, dir, ingress, admin string, args ...string) (*hubProc, error) {
	pr, err := hubproc.Start(hubproc.Spec{Bin: bin, Args: args, LogPath: filepath.Join(dir, "hub.log"), Probe: "http://" + admin + "/readyz"})
	if err != nil {
		return nil, err
	}
	return &hubProc{Proc: pr, ingress: "http://" + ingress + "/events", admin: "http://" + admin}, nil
}

func addrFrom(cfg, key string, nth int) string {
	rest := cfg
	for i := 0; ; i++ {
		j := strings.Index(rest, key)
		if j < 0 {
			return ""
		}
		rest = rest[j+len(key):]
		if i == nth {
			return strings.TrimSpace(rest[:strings.IndexByte(rest, '\n')])
		}
	}
}

// addEndpoint registers the receiver for every event.
func (p *hubProc) addEndpoint(url string) error {
	body, _ := json.Marshal(map[string]any{"url": url, "types": []string{"#"}})
	resp, err := http.Post(p.admin+"/endpoints", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("POST /endpoints: %s", resp.Status)
	}
	return nil
}

// profile fetches a CPU profile of d from the hub's metrics listener into path.
func (p *hubProc) profile(d time.Duration, path string) error {
	c := &http.Client{Timeout: d + 30*time.Second}
	resp, err := c.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", p.metrics, int(d.Seconds())))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /debug/pprof/profile: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// stop ends the hub with SIGTERM (a clean shutdown), SIGKILL after 20 s, and runs
// its cleanup.
func (p *hubProc) stop() {
	_, _ = p.Term(20 * time.Second)
	if p.cleanup != nil {
		p.cleanup()
	}
}

// pgSchema creates a fresh schema for one hub and returns its name and a func that
// drops it.
func pgSchema(ctx context.Context, url string) (string, func(), error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return "", nil, fmt.Errorf("connect %s: %w", url, err)
	}
	name := fmt.Sprintf("e2ebench_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		conn.Close(ctx)
		return "", nil, err
	}
	conn.Close(ctx)
	return name, func() {
		c, err := pgx.Connect(context.Background(), url)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP SCHEMA "+name+" CASCADE")
	}, nil
}
