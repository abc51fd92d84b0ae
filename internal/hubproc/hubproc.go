// Package hubproc runs the hub binary as a separate process, the way an operator does,
// for the end-to-end tests (cmd/hub), the replica tests (cmd/hub/hatest) and the
// end-to-end benchmark (internal/cmd/e2ebench): start it with its output in a log file,
// wait until an admin probe answers, stop it with SIGTERM or SIGKILL, read its log
// and its CPU and memory from /proc. One piece of code for the three, so a change in how
// the binary starts or stops is made once.
package hubproc

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Proc is one run of the binary.
type Proc struct {
	Cmd     *exec.Cmd
	LogPath string
	done    chan struct{}
	err     error
}

// Spec says how to start one run.
type Spec struct {
	Bin     string   // the hub binary
	Args    []string // its arguments, e.g. run -c hub.yaml
	Env     []string // extra environment variables, NAME=value, after the process's own
	Dir     string   // working directory; "" is the caller's
	LogPath string   // stdout and stderr go here (created or truncated)
	// Probe is the URL that answers 200 once the hub is up (its admin /readyz, or
	// /healthz when a transport is meant to be down); "" returns at once.
	Probe   string
	Timeout time.Duration // for Probe; default 30s
}

// Start starts a run and waits for its probe. On an error the process is not left
// running: one that exited is reported with the end of its log, one that did not
// answer in time is killed.
func Start(s Spec) (*Proc, error) {
	logf, err := os.Create(s.LogPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(s.Bin, s.Args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.Dir = s.Dir
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	p := &Proc{Cmd: cmd, LogPath: s.LogPath, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); logf.Close(); close(p.done) }()
	if s.Probe == "" {
		return p, nil
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-p.done:
			err := p.err
			if err == nil {
				err = errors.New("exit status 0")
			}
			return nil, fmt.Errorf("hub exited during start: %w\n%s", err, p.Log(8000))
		default:
		}
		if resp, err := http.Get(s.Probe); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			p.Kill()
			return nil, fmt.Errorf("hub not ready after %s\n%s", timeout, p.Log(8000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Done is closed once the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Alive reports whether the process is still running.
func (p *Proc) Alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Kill sends SIGKILL (no shutdown code runs) and waits for the exit.
func (p *Proc) Kill() {
	_ = p.Cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Term sends SIGTERM and returns the exit code once the process exited, or an error
// after timeout (the process is then killed).
func (p *Proc) Term(timeout time.Duration) (int, error) {
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.Kill()
		return -1, fmt.Errorf("hub did not stop within %s of SIGTERM\n%s", timeout, p.Log(8000))
	}
	if p.Cmd.ProcessState == nil {
		return -1, nil
	}
	return p.Cmd.ProcessState.ExitCode(), nil
}

// Log returns the last max bytes of the run's output.
func (p *Proc) Log(max int) string {
	b, _ := os.ReadFile(p.LogPath)
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}

// CPU returns the process's user+system CPU time so far (0 once it exited).
func (p *Proc) CPU() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Cmd.Process.Pid))
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

// PeakRSS returns the process's peak resident set (VmHWM) in MiB.
func (p *Proc) PeakRSS() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Cmd.Process.Pid))
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
