package webhook

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/secrets"
)

// selfSigned makes a client certificate and key, PEM-encoded.
func selfSigned(t *testing.T, cn string) (certPEM, keyPEM string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	cert, _ = x509.ParseCertificate(der)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})), cert
}

// TestDC_MutualTLS: an endpoint presents its client certificate to a TLS receiver that
// requires one, trusts the receiver through its own CA bundle, keeps its key encrypted
// at rest and out of views, and refuses a receiver below its minimum TLS version.
func TestDC_MutualTLS(t *testing.T) {
	t.Parallel()
	certPEM, keyPEM, clientCert := selfSigned(t, "eventhub-client")
	pool := x509.NewCertPool()
	pool.AddCert(clientCert)
	var gotCN string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) > 0 {
			gotCN = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))

	old := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
	old.TLS = &tls.Config{MaxVersion: tls.VersionTLS12}
	old.StartTLS()
	t.Cleanup(old.Close)
	oldCA := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: old.Certificate().Raw}))

	ring, _ := secrets.NewKeyring(secrets.GenerateKey())
	tb := setup(t, ledger.SQLite, func(c *Config) { c.Keyring = ring })
	mtls, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: srv.URL + "/m", Patterns: []string{"#"},
		Controls: Controls{TLS: TLS{ClientCert: certPEM, ClientKey: keyPEM, CA: caPEM}}})
	if err != nil {
		t.Fatal(err)
	}
	noCert, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: srv.URL + "/n", Patterns: []string{"#"},
		Controls: Controls{TLS: TLS{CA: caPEM}}})
	if err != nil {
		t.Fatal(err)
	}
	tooOld, err := tb.tr.CreateEndpoint(tb.ctx, EndpointSpec{URL: old.URL + "/o", Patterns: []string{"#"},
		Controls: Controls{TLS: TLS{CA: oldCA, MinVersion: "1.3"}}})
	if err != nil {
		t.Fatal(err)
	}
	tb.send(t, newEvent(t, "user.created"))
	tb.waitStates(t, DeliveryFilter{EndpointID: mtls.ID}, 1, DeliveryDelivered)
	if gotCN != "eventhub-client" {
		t.Fatalf("receiver saw client certificate %q", gotCN)
	}
	for _, id := range []string{noCert.ID, tooOld.ID} {
		ds := tb.waitStates(t, DeliveryFilter{EndpointID: id}, 1, DeliveryDead)
		if ds[0].LastError == "" {
			t.Fatalf("%s: dead without an error", id)
		}
	}

	var col string
	if err := tb.l.DB().QueryRowContext(tb.ctx, `SELECT controls FROM webhook_endpoints WHERE id = $1`, mtls.ID).Scan(&col); err != nil && err != sql.ErrNoRows {
		t.Fatal(err)
	}
	if strings.Contains(col, "PRIVATE KEY") || !strings.Contains(col, "enc:") {
		t.Fatalf("client key stored in the clear: %.200s", col)
	}
	if v := mtls.View(); strings.Contains(v.Controls.TLS.ClientKey, "PRIVATE") {
		t.Fatal("the view shows the client key")
	}
	for _, bad := range []TLS{{ClientCert: certPEM}, {CA: "not pem"}, {MinVersion: "1.1"}, {ClientCert: certPEM, ClientKey: "x"}} {
		if _, err := (&Controls{TLS: bad}).compile(); hub.Code(err) != hub.InvalidArgument {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}
