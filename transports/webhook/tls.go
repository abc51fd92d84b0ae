package webhook

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/secrets"
)

// TLS is an endpoint's TLS to its receiver: a client certificate (mTLS), the CAs to
// trust instead of the system's, and the lowest protocol version.
//
// The client key is stored like the signing secrets: encrypted at rest with the
// transport's key ring (AES-256-GCM, bound to the endpoint), decrypted only when a
// worker builds the endpoint's client; views never show it. ReencryptSecrets moves it
// to a new primary key with the signing secrets and the header values.
type TLS struct {
	// ClientCert is the PEM certificate chain presented to the receiver.
	ClientCert string `json:"client_cert,omitempty"`
	// ClientKey is its PEM private key.
	ClientKey string `json:"client_key,omitempty"`
	// CA is a PEM bundle of the CAs that may sign the receiver's certificate,
	// replacing the system roots. "" = the system roots.
	CA string `json:"ca,omitempty"`
	// MinVersion is "1.2" (default) or "1.3".
	MinVersion string `json:"min_version,omitempty"`
}

func (t TLS) isZero() bool { return t == TLS{} }

// validate checks the TLS settings; a sealed key (read from the store without
// opening) is checked when the client is built instead.
func (t TLS) validate() error {
	if _, err := t.config(); err != nil {
		return err
	}
	return nil
}

// config builds the crypto/tls configuration (nil for the zero value).
func (t TLS) config() (*tls.Config, error) {
	if t.isZero() {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	switch t.MinVersion {
	case "", "1.2":
	case "1.3":
		c.MinVersion = tls.VersionTLS13
	default:
		return nil, hub.Errorf(hub.InvalidArgument, "webhook: tls.min_version %q: 1.2 or 1.3", t.MinVersion)
	}
	if (t.ClientCert == "") != (t.ClientKey == "") {
		return nil, hub.Errorf(hub.InvalidArgument, "webhook: tls: client_cert and client_key go together")
	}
	if t.ClientCert != "" && !secrets.IsEncrypted(t.ClientKey) {
		pair, err := tls.X509KeyPair([]byte(t.ClientCert), []byte(t.ClientKey))
		if err != nil {
			return nil, hub.Errorf(hub.InvalidArgument, "webhook: tls.client_cert/client_key: %v", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	if t.CA != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(t.CA)) {
			return nil, hub.Errorf(hub.InvalidArgument, "webhook: tls.ca: no PEM certificate in it")
		}
		c.RootCAs = pool
	}
	return c, nil
}

// fingerprint names a TLS setting for the client cache (never logged).
func (t TLS) fingerprint() string {
	if t.isZero() {
		return ""
	}
	h := sha256.Sum256(fmt.Appendf(nil, "%q|%q|%q|%q", t.ClientCert, t.ClientKey, t.CA, t.MinVersion))
	return hex.EncodeToString(h[:8])
}

// sealTLS encrypts the client key for endpoint id (as given without a ring).
func (s store) sealTLS(id string, t TLS) (TLS, error) {
	if s.ring == nil || t.ClientKey == "" || secrets.IsEncrypted(t.ClientKey) {
		return t, nil
	}
	v, err := s.ring.Encrypt(t.ClientKey, tlsContext(id))
	if err != nil {
		return t, hub.Errorf(hub.Code(err), "webhook: endpoint %s: encrypt client key: %w", id, err)
	}
	t.ClientKey = v
	return t, nil
}

// openTLS decrypts the client key in place.
func (s store) openTLS(id string, t *TLS) error {
	if !secrets.IsEncrypted(t.ClientKey) {
		return nil
	}
	if s.ring == nil {
		return hub.Errorf(hub.FailedPrecondition, "webhook: endpoint %s: its client key is encrypted and no secret key is configured", id)
	}
	v, err := s.ring.Decrypt(t.ClientKey, tlsContext(id))
	if err != nil {
		return hub.Errorf(hub.Code(err), "webhook: endpoint %s: client key: %w", id, err)
	}
	t.ClientKey = v
	return nil
}
