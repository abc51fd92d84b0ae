package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/koder/eventhub/internal/freeport"

	"github.com/koder/eventhub/internal/hubproc"
	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/transports/webhook"
)

// hubBinary is built once per test run from this package's source: the end-to-end tests
// run the real binary, as an operator would.
var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hub-e2e-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "hub")
		out, err := exec.Command("go", "build", "-o", buildPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildPath != "" {
		os.RemoveAll(filepath.Dir(buildPath))
	}
	os.Exit(code)
}

// freeAddr returns a loopback address with a port nobody listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// hubProc is one run of the binary, killed at the test's end if still running.
type hubProc struct {
	t *testing.T
	*hubproc.Proc
}

// launch starts the binary as spec says (its log in a new file of logDir) and fails
// the test when it does not come up.
func launch(t *testing.T, logDir string, spec hubproc.Spec) *hubProc {
	t.Helper()
	logf, err := os.CreateTemp(logDir, "hub-*.log")
	if err != nil {
		t.Fatal(err)
	}
	logf.Close()
	spec.Bin, spec.LogPath = binary(t), logf.Name()
	pr, err := hubproc.Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if pr.Alive() {
			pr.Kill()
		}
	})
	return &hubProc{t: t, Proc: pr}
}

// startHub runs `hub run -c cfg` and waits until the admin API answers /readyz.
func startHub(t *testing.T, cfg, adminAddr string) *hubProc {
	t.Helper()
	return startHubProbe(t, cfg, adminAddr, "/readyz")
}

// startHubProbe is startHub waiting for probe (/healthz when a transport is meant to be
// down, which keeps /readyz at 503).
func startHubProbe(t *testing.T, cfg, adminAddr, probe string) *hubProc {
	t.Helper()
	return launch(t, filepath.Dir(cfg), hubproc.Spec{Args: []string{"run", "-c", cfg, "--log-format", "json"},
		Env: []string{"HUB_ADMIN_TOKEN="}, Probe: "http://" + adminAddr + probe})
}

// startEmbedded runs `hub run` with no config (the embedded default) in dir, its data in
// dir/data, and waits until the admin API answers /readyz.
func startEmbedded(t *testing.T, dir, ingress, admin string) *hubProc {
	t.Helper()
	return launch(t, dir, hubproc.Spec{Args: []string{"run", "--data-dir", filepath.Join(dir, "data"), "--ingress-addr", ingress, "--admin-addr", admin},
		Dir: dir, Env: []string{"HUB_ADMIN_TOKEN=", "HUB_SECRET_KEY="}, Probe: "http://" + admin + "/readyz"})
}

func (p *hubProc) log() string { return p.Log(8000) }

// kill sends SIGKILL: no shutdown code runs.
func (p *hubProc) kill() { p.Kill() }

// stop sends SIGTERM and returns the exit code.
func (p *hubProc) stop() int {
	p.t.Helper()
	code, err := p.Term(60 * time.Second)
	if err != nil {
		p.t.Fatal(err)
	}
	return code
}

// postJSON sends body with a content type and returns status and body.
func postJSON(url, contentType, token string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", contentType)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, nil
}

// erasedEvent is a valid identity.user.erased event in structured mode.
func erasedEvent(id string) []byte {
	return []byte(`{"specversion":"1.0","id":"` + id + `","source":"/e2e","type":"identity.user.erased","subject":"u1","tenantid":"acme",` +
		`"datacontenttype":"application/json","data":{"erasure_id":"era_` + id + `","user_id":"u1"}}`)
}

// receiver is a webhook endpoint that verifies every signature (webhook.Verify) and
// records the event ids it accepted.
type receiver struct {
	mu       sync.Mutex
	secret   []byte
	ids      map[string]int
	rejected int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if err := webhook.Verify(r.Header.Get(webhook.SignatureHeader), body, [][]byte{rc.secret}, time.Minute, time.Now()); err != nil {
		rc.rejected++
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	var ev struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &ev)
	rc.ids[ev.ID]++
	w.WriteHeader(http.StatusNoContent)
}

// rejections is how many requests failed signature verification.
func (rc *receiver) rejections() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.rejected
}

func (rc *receiver) has(id string) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.ids[id] > 0
}

func (rc *receiver) count(ids []string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, id := range ids {
		if rc.ids[id] > 0 {
			n++
		}
	}
	return n
}

// registerEndpoint creates a webhook endpoint through the admin API and returns its secret.
func registerEndpoint(t *testing.T, adminAddr, token, url string) string {
	t.Helper()
	status, body, err := postJSON("http://"+adminAddr+"/endpoints", "application/json", token,
		[]byte(`{"url":"`+url+`","types":["identity.#"]}`))
	if err != nil || status != http.StatusCreated {
		t.Fatalf("create endpoint: %d %v %s", status, err, body)
	}
	var ep struct{ ID, Secret string }
	if err := json.Unmarshal(body, &ep); err != nil || ep.Secret == "" {
		t.Fatalf("endpoint body %s: %v", body, err)
	}
	return ep.Secret
}

func writeConfig(t *testing.T, dir, text string) string {
	t.Helper()
	p := filepath.Join(dir, "hub.yaml")
	if err := os.WriteFile(p, []byte(strings.TrimLeft(text, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func ctxFor(t *testing.T) context.Context { return testenv.Context(t, 2*time.Minute) }
