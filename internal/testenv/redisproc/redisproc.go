// Package redisproc runs a redis-server process that one test or benchmark owns: on a
// spare loopback port, its data in the test's temp dir, so the test may kill, restart
// or reconfigure it without touching the machine's shared Redis. The fault, durability,
// TLS, cluster and sentinel tests of the Redis transport use it, and the RESP front's
// benchmarks use it for a Redis with the same durability promise as the front.
package redisproc

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/koder/eventhub/internal/freeport"
	"github.com/koder/eventhub/internal/testenv"
)

// Server is a redis-server process of one test.
type Server struct {
	// Port is the port it listens on.
	Port int
	// Dir holds its data and its log.
	Dir string

	tb   testing.TB
	args []string
	cmd  *exec.Cmd
	exit chan struct{}
}

// Start starts redis-server with persistence (AOF, fsync always), so a restart keeps
// streams and groups, plus extra config directives ("--name", "value"...), which win
// over the defaults. It is stopped at cleanup. Without redis-server it fails under
// CI=true and skips elsewhere.
func Start(tb testing.TB, extra ...string) *Server {
	tb.Helper()
	return StartWith(tb, func(port int) []string { return append([]string{"--port", strconv.Itoa(port)}, extra...) })
}

// StartWith is Start with the listening directives built from the port (TLS, cluster).
func StartWith(tb testing.TB, listen func(port int) []string) *Server {
	tb.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if testenv.InCI() {
			tb.Fatal("redis-server is not installed (CI=true: this test needs it)")
		}
		tb.Skip("SKIPPING: redis-server is not installed")
	}
	s := &Server{tb: tb, Port: SparePort(tb), Dir: tb.TempDir()}
	s.args = append([]string{
		"--bind", "127.0.0.1", "--dir", s.Dir, "--save", "", "--appendonly", "yes",
		"--appendfsync", "always", "--logfile", filepath.Join(s.Dir, "redis.log"),
	}, listen(s.Port)...)
	s.start()
	tb.Cleanup(s.Stop)
	return s
}

// SparePort is a loopback port for a server of the test (below the ephemeral range, so
// no client connection takes it before the server binds it: see freeport).
func SparePort(tb testing.TB) int {
	tb.Helper()
	port, err := freeport.Port()
	if err != nil {
		tb.Fatal(err)
	}
	return port
}

// URL is the plain URL of the server.
func (s *Server) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.Port) }

func (s *Server) start() {
	s.tb.Helper()
	s.cmd = exec.Command("redis-server", s.args...)
	var out bytes.Buffer
	s.cmd.Stdout, s.cmd.Stderr = &out, &out
	if err := s.cmd.Start(); err != nil {
		s.tb.Fatalf("start redis-server: %v", err)
	}
	s.exit = make(chan struct{})
	go func(cmd *exec.Cmd, exit chan struct{}) { _ = cmd.Wait(); close(exit) }(s.cmd, s.exit)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)), 100*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-s.exit:
			s.tb.Fatalf("redis-server exited at start:\n%s%s", out.String(), s.Log())
		default:
		}
		if time.Now().After(deadline) {
			s.tb.Fatalf("redis-server did not listen on %d in time", s.Port)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Log returns the server's log file, for failure messages.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
	return string(b)
}

// Stop kills the server (SIGKILL: a crash, not a shutdown) and waits for it to exit.
// Idempotent.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exit
	s.cmd = nil
}

// Restart starts the server again on the same port and data directory.
func (s *Server) Restart() { s.start() }
