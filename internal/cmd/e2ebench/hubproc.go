package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// hubProc is one running hub binary.
type hubProc struct {
	cmd     *exec.Cmd
	ingress string // http://host:port/events
	admin   string // http://host:port
	log     string
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
func startHub(ctx context.Context, bin, dir, cfg string, cleanup func()) (*hubProc, error) {
	ingress, admin := addrFrom(cfg, "listen: ", 0), addrFrom(cfg, "listen: ", 1)
	path := filepath.Join(dir, "hub.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "hub.log")
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "run", "-c", path)
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, err
	}
	lf.Close()
	p := &hubProc{cmd: cmd, ingress: "http://" + ingress + "/events", admin: "http://" + admin, log: logPath, cleanup: cleanup}
	if m := addrFrom(cfg, "listen: ", 2); m != "" {
		p.metrics = "http://" + m
	}
	if err := p.waitReady(ctx); err != nil {
		return nil, err
	}
	return p, nil
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

// cpu returns the process's user+system CPU time.
func (p *hubProc) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (in parentheses, which may hold spaces): utime is
	// the 14th field of the line, stime the 15th, in clock ticks (USER_HZ, 100 on Linux).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * (time.Second / 100)
}

// peakRSS returns VmHWM in MiB.
func (p *hubProc) peakRSS() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, ln := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(ln, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// stop ends the hub with SIGTERM (a clean shutdown) and waits for it.
func (p *hubProc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
	if p.cleanup != nil {
		p.cleanup()
	}
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
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
