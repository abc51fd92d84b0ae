package main

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base32"
	binenc "encoding/binary"
	"encoding/json"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"

	"github.com/koder/eventhub/internal/hubproc"
)

// startHubEnv is startHub with extra environment variables ("K=V"), in dir.
func startHubEnv(t *testing.T, cfg, adminAddr string, env ...string) *hubProc {
	t.Helper()
	return launch(t, filepath.Dir(cfg), hubproc.Spec{Args: []string{"run", "-c", cfg, "--log-format", "json"},
		Dir: filepath.Dir(cfg), Env: append([]string{"HUB_ADMIN_TOKEN=", "HUB_SECRET_KEY="}, env...),
		Probe: "http://" + adminAddr + "/readyz"})
}

// cliRun runs a hub command with env added and returns its combined output and exit code.
func cliRun(t *testing.T, dir string, env []string, args ...string) (string, int) {
	t.Helper()
	c := exec.Command(binary(t), args...)
	c.Dir = dir
	c.Env = append(append(os.Environ(), "HUB_ADMIN_TOKEN=", "HUB_API_KEY="), env...)
	out, _ := c.CombinedOutput()
	return string(out), c.ProcessState.ExitCode()
}

// reply is one HTTP answer.
type reply struct {
	status int
	header http.Header
	body   string
}

// problemOf decodes a problem document's status and field.
func (r reply) problem(t *testing.T) (status int, field string) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Errorf("answer %d has Content-Type %q, want a problem document: %s", r.status, ct, r.body)
		return 0, ""
	}
	var p struct {
		Status int    `json:"status"`
		Field  string `json:"field"`
	}
	if err := json.Unmarshal([]byte(r.body), &p); err != nil {
		t.Errorf("problem document %s: %v", r.body, err)
	}
	return p.Status, p.Field
}

// send makes a request with the given headers ("Host" sets the Host header).
func send(t *testing.T, method, url string, hdr map[string]string, body string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, string(b)}
}

// forgedKey is a well-formed API key (right length, alphabet and check characters) that
// no hub ever issued.
func forgedKey() string {
	b32 := base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)
	id, secret := make([]byte, 10), make([]byte, 32)
	_, _ = rand.Read(id)
	_, _ = rand.Read(secret)
	body := "ehk_" + b32.EncodeToString(id) + "_" + b32.EncodeToString(secret)
	var c [4]byte
	binenc.BigEndian.PutUint32(c[:], crc32.ChecksumIEEE([]byte(body)))
	return body + b32.EncodeToString(c[:])
}

// idp is an identity provider's key set served over HTTP on loopback, and its signer.
type idp struct {
	srv *httptest.Server
	key *rsa.PrivateKey
}

const (
	testIssuer   = "https://idp.e2e.test"
	testAudience = "eventhub"
)

var (
	rsaOnce sync.Once
	rsaKeys [2]*rsa.PrivateKey
)

func newIDP(t *testing.T) *idp {
	t.Helper()
	rsaOnce.Do(func() {
		for i := range rsaKeys {
			k, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			rsaKeys[i] = k
		}
	})
	j, err := jwkset.NewJWKFromKey(&rsaKeys[0].PublicKey, jwkset.JWKOptions{
		Metadata: jwkset.JWKMetadataOptions{KID: "k1", ALG: jwkset.AlgRS256, USE: jwkset.UseSig},
	})
	if err != nil {
		t.Fatal(err)
	}
	set, _ := json.Marshal(jwkset.JWKSMarshal{Keys: []jwkset.JWKMarshal{j.Marshal()}})
	i := &idp{key: rsaKeys[0]}
	i.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(set)
	}))
	t.Cleanup(i.srv.Close)
	return i
}

// token signs claims (the defaults of a good token, changed by mod) with key (nil: the
// provider's own key).
func (i *idp) token(t *testing.T, key *rsa.PrivateKey, mod func(jwt.MapClaims)) string {
	t.Helper()
	now := time.Now()
	c := jwt.MapClaims{"iss": testIssuer, "aud": testAudience, "sub": "svc-billing",
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "tenant_id": "acme"}
	if mod != nil {
		mod(c)
	}
	if key == nil {
		key = i.key
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
	tok.Header["kid"] = "k1"
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// event is a valid identity.user.erased event of a tenant, in structured mode.
func event(id, tenant string) string {
	return `{"specversion":"1.0","id":"` + id + `","source":"/e2e","type":"identity.user.erased","tenantid":"` + tenant + `",` +
		`"datacontenttype":"application/json","data":{"erasure_id":"era_` + id + `","user_id":"u1"}}`
}
