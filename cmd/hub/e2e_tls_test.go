package main

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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/internal/hubproc"
	"github.com/koder/eventhub/internal/testenv"
)

// writePair writes a self-signed certificate for 127.0.0.1 (common name cn) and its key,
// replacing the files by rename as a certificate manager does, and returns the
// certificate.
func writePair(t *testing.T, dir, cn string) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{"tls.crt": {Type: "CERTIFICATE", Bytes: der}, "tls.key": {Type: "EC PRIVATE KEY", Bytes: kb}} {
		tmp := filepath.Join(dir, "."+name)
		if err := os.WriteFile(tmp, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := x509.ParseCertificate(der)
	return c
}

// servedCN makes a fresh TLS connection and returns the common name of the certificate
// the listener presents.
func servedCN(t *testing.T, addr string) string {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) // the test reads the certificate it is served
	if err != nil {
		return "dial: " + err.Error()
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
}

// TestSEC_TLSListeners: the ingress and the admin API serve HTTPS from cert/key files,
// verified by a client trusting that certificate, and pick up replaced files without a
// restart (a fresh connection gets the new certificate within reload_interval).
func TestSEC_TLSListeners(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ingress, admin := freeAddr(t), freeAddr(t)
	cert := writePair(t, dir, "first")
	cfg := writeConfig(t, dir, `
store: {sqlite: data/hub.db}
sources:
  in:
    type: http
    listen: `+ingress+`
    tls: {cert_file: tls.crt, key_file: tls.key, reload_interval: 1s}
transports:
  events: {type: kdbstream, stream: events}
routes:
  - {pattern: "#", to: events, default_subject: unspecified}
admin:
  listen: `+admin+`
  tls: {cert_file: tls.crt, key_file: tls.key, reload_interval: 1s}
`)
	p := launch(t, dir, hubproc.Spec{Args: []string{"run", "-c", cfg, "--log-format", "json"}, Dir: dir,
		Env: []string{"HUB_ADMIN_TOKEN=", "HUB_SECRET_KEY="}}) // its probe is over TLS, below
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	testenv.WaitFor(t, 30*time.Second, "the admin API over TLS", func() bool {
		resp, err := client.Get("https://" + admin + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	resp, err := client.Post("https://"+ingress+"/events", "application/cloudevents+json", strings.NewReader(event(cloudevent.NewID(), "acme")))
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST over TLS: %v %v\n%s", resp, err, p.log())
	}
	resp.Body.Close()
	if resp, err := http.Get("http://" + admin + "/readyz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("the admin API answers plain HTTP too")
		}
	}

	writePair(t, dir, "second")
	for _, addr := range []string{ingress, admin} {
		testenv.WaitFor(t, 20*time.Second, "the new certificate on "+addr, func() bool { return servedCN(t, addr) == "second" })
	}
	if code := p.stop(); code != 0 {
		t.Errorf("exit %d\n%s", code, p.log())
	}
}
