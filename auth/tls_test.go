package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/koder/eventhub/internal/testenv"
)

// writePair writes a fresh self-signed certificate for 127.0.0.1 with the given common
// name and returns it.
func writePair(t *testing.T, certFile, keyFile, cn string) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return c
}

func TestSEC_TLSReload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writePair(t, certFile, keyFile, "first")
	c, err := NewCertReloader(certFile, keyFile, time.Hour, testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	clk := newClock()
	c.now = clk.Now
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	// Not StartTLS: it would add its own certificate, which crypto/tls prefers to
	// GetCertificate for clients that send no server name.
	srv.Listener = tls.NewListener(srv.Listener, c.TLSConfig())
	srv.Start()
	t.Cleanup(srv.Close)

	// served returns the common name a fresh connection sees.
	served := func() string {
		t.Helper()
		conn, err := tls.Dial("tcp", srv.Listener.Addr().String(), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the test reads the served certificate
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	if got := served(); got != "first" {
		t.Fatalf("served %q", got)
	}

	writePair(t, certFile, keyFile, "second")
	if got := served(); got != "first" {
		t.Fatalf("before the check interval: %q", got)
	}
	clk.Add(2 * time.Hour)
	if got := served(); got != "second" {
		t.Fatalf("after the swap a fresh connection sees %q, want second", got)
	}

	// Half a swap (a new certificate, the old key) keeps serving the last good pair.
	writePair(t, certFile, filepath.Join(dir, "other.key"), "third")
	clk.Add(2 * time.Hour)
	if got := served(); got != "second" {
		t.Fatalf("a mismatched pair must not be served: %q", got)
	}
	if err := c.Reload(); err == nil {
		t.Fatal("Reload of a mismatched pair must fail")
	}

	if _, err := NewCertReloader(filepath.Join(dir, "missing.crt"), keyFile, 0, nil); err == nil {
		t.Fatal("a missing file must fail at start")
	}
}
