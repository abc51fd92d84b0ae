//go:build ha

package hatest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
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
	cmd     *exec.Cmd
	done    chan struct{}
	err     error
	logPath string
}

// consumer is the Redis consumer name of the current run: a restarted replica joins the
// group as a new consumer, so the old one's pending entries can only be claimed.
func (r *replica) consumer() string { return fmt.Sprintf("%s-run%d", r.name, r.runs) }

func (r *replica) alive() bool {
	if r.done == nil {
		return false
	}
	select {
	case <-r.done:
		return false
	default:
		return true
	}
}

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
	logf, err := os.Create(filepath.Join(r.dir, fmt.Sprintf("%s-run%d.log", r.name, r.runs)))
	if err != nil {
		return err
	}
	r.logPath = logf.Name()
	cmd := exec.Command(r.bin, "run", "-c", cfg, "--log-format", "json")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(append(os.Environ(), "HUB_ADMIN_TOKEN="), r.env...)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	r.cmd, r.done = cmd, done
	go func() { r.err = cmd.Wait(); logf.Close(); close(done) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-done:
			return fmt.Errorf("%s exited during start: %v\n%s", r.name, r.err, r.log())
		default:
		}
		if resp, err := http.Get("http://" + r.admin + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after 60s\n%s", r.name, r.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill9 sends SIGKILL: no shutdown code runs, leases and pending entries stay behind.
func (r *replica) kill9() {
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.done
}

// term sends SIGTERM and returns the exit code.
func (r *replica) term() int {
	r.tb.Helper()
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(90 * time.Second):
		r.tb.Fatalf("%s did not stop within 90s of SIGTERM\n%s", r.name, r.log())
	}
	return r.cmd.ProcessState.ExitCode()
}

// stopAtCleanup kills what is still running when the test ends: only this test's
// processes, by their own handle.
func (r *replica) stopAtCleanup() {
	if r.alive() {
		_ = r.cmd.Process.Kill()
		<-r.done
	}
}

func (r *replica) log() string {
	b, _ := os.ReadFile(r.logPath)
	if len(b) > 6000 {
		b = b[len(b)-6000:]
	}
	return string(b)
}
