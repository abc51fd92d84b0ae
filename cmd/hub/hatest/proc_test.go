//go:build ha

package hatest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/koder/eventhub/internal/freeport"

	"github.com/koder/eventhub/internal/hubproc"
)

// buildHub compiles the hub binary once into dir, as an operator would run it.
func buildHub(t testing.TB, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "hub")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/koder/eventhub/cmd/hub").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// freeAddr returns a loopback address with a port nobody listens on right now.
func freeAddr(t testing.TB) string {
	t.Helper()
	addr, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// replica is one hub process of the test: its config, addresses and the current run.
type replica struct {
	tb      testing.TB
	name    string
	bin     string
	dir     string
	ingress string
	admin   string
	config  func(consumer string) string // the YAML, given this run's Redis consumer name
	env     []string                     // extra environment variables, NAME=value
	runs    int
	proc    *hubproc.Proc // the current run, nil before the first
}

// consumer is the Redis consumer name of the current run: a restarted replica joins the
// group as a new consumer, so the old one's pending entries can only be claimed.
func (r *replica) consumer() string { return fmt.Sprintf("%s-run%d", r.name, r.runs) }

func (r *replica) alive() bool { return r.proc != nil && r.proc.Alive() }

// start runs `hub run` and waits until /readyz answers 200.
func (r *replica) start() {
	r.tb.Helper()
	if err := r.launch(); err != nil {
		r.tb.Fatal(err)
	}
}

// launch is start reporting an error instead of failing the test, for starts from
// several goroutines at once.
func (r *replica) launch() error {
	r.runs++
	cfg := filepath.Join(r.dir, fmt.Sprintf("%s-run%d.yaml", r.name, r.runs))
	if err := os.WriteFile(cfg, []byte(r.config(r.consumer())), 0o644); err != nil {
		return err
	}
	p, err := hubproc.Start(hubproc.Spec{Bin: r.bin, Args: []string{"run", "-c", cfg, "--log-format", "json"},
		Env: append([]string{"HUB_ADMIN_TOKEN="}, r.env...), LogPath: filepath.Join(r.dir, fmt.Sprintf("%s-run%d.log", r.name, r.runs)),
		Probe: "http://" + r.admin + "/readyz", Timeout: 60 * time.Second})
	if err != nil {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	r.proc = p
	return nil
}

// kill9 sends SIGKILL: no shutdown code runs, leases and pending entries stay behind.
func (r *replica) kill9() { r.proc.Kill() }

// term sends SIGTERM and returns the exit code.
func (r *replica) term() int {
	r.tb.Helper()
	code, err := r.proc.Term(90 * time.Second)
	if err != nil {
		r.tb.Fatalf("%s: %v", r.name, err)
	}
	return code
}

// stopAtCleanup kills what is still running when the test ends: only this test's
// processes, by their own handle.
func (r *replica) stopAtCleanup() {
	if r.alive() {
		r.proc.Kill()
	}
}

func (r *replica) log() string {
	if r.proc == nil {
		return ""
	}
	return r.proc.Log(6000)
}
