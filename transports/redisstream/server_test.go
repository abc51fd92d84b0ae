package redisstream

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
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

// redisServer is a redis-server process a test owns, on a spare loopback port, with its
// data in the test's temp dir: the test may kill and restart it freely.
type redisServer struct {
	t    *testing.T
	port int
	dir  string
	args []string
	cmd  *exec.Cmd
	exit chan struct{}
}

// startRedis starts redis-server with persistence (AOF, fsync always) so a restart
// keeps streams and groups, plus extra config directives ("--name", "value"...).
func startRedis(t *testing.T, extra ...string) *redisServer {
	return startRedisWith(t, func(port int) []string { return append([]string{"--port", strconv.Itoa(port)}, extra...) })
}

// startRedisWith is startRedis with the listening directives built from the port.
func startRedisWith(t *testing.T, listen func(port int) []string) *redisServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if testenv.InCI() {
			t.Fatal("redis-server is not installed (CI=true: this test needs it)")
		}
		t.Skip("SKIPPING: redis-server is not installed")
	}
	s := &redisServer{t: t, port: sparePort(t), dir: t.TempDir()}
	s.args = append([]string{
		"--bind", "127.0.0.1", "--dir", s.dir, "--save", "", "--appendonly", "yes",
		"--appendfsync", "always", "--logfile", filepath.Join(s.dir, "redis.log"),
	}, listen(s.port)...)
	s.start()
	t.Cleanup(s.stop)
	return s
}

// sparePort is a loopback port for a redis-server of the test (below the ephemeral
// range, so no client connection takes it before the server binds it: freeport).
func sparePort(t *testing.T) int {
	t.Helper()
	port, err := freeport.Port()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// URL is the plain URL of the server.
func (s *redisServer) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.port) }

func (s *redisServer) start() {
	s.t.Helper()
	s.cmd = exec.Command("redis-server", s.args...)
	var out bytes.Buffer
	s.cmd.Stdout, s.cmd.Stderr = &out, &out
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	s.exit = make(chan struct{})
	go func(cmd *exec.Cmd, exit chan struct{}) { _ = cmd.Wait(); close(exit) }(s.cmd, s.exit)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)), 100*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-s.exit:
			log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			s.t.Fatalf("redis-server exited at start:\n%s%s", out.String(), log)
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redis-server did not listen on %d in time", s.port)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// log returns the server's log file, for failure messages.
func (s *redisServer) log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	return string(b)
}

// stop kills the server (SIGKILL: a crash, not a shutdown) and waits for it to exit.
func (s *redisServer) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exit
	s.cmd = nil
}

// restart starts the server again on the same port and data directory.
func (s *redisServer) restart() { s.start() }

// testCerts writes a CA and a server certificate for 127.0.0.1 into dir and returns the
// file paths and a pool trusting the CA.
func testCerts(t *testing.T, dir string) (caFile, certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "eventhub test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caFile = write("ca.pem", "CERTIFICATE", caDER)
	certFile = write("server.pem", "CERTIFICATE", der)
	keyFile = write("server.key", "EC PRIVATE KEY", keyDER)
	pool = x509.NewCertPool()
	pool.AddCert(ca)
	return caFile, certFile, keyFile, pool
}
