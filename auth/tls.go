package auth

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/koder/eventhub/hub"
)

// DefaultCertCheck is how often CertReloader looks at the files.
const DefaultCertCheck = 10 * time.Second

// CertReloader serves a certificate and key from PEM files through
// tls.Config.GetCertificate and picks up new files without a restart (certbot, a
// Kubernetes secret, cert-manager).
//
// It polls instead of using fsnotify: no extra dependency and no watcher goroutine, and
// polling sees every way files get replaced (in-place writes, renames, the symlink swap
// of a mounted Kubernetes secret, which inotify watchers commonly miss). The check runs
// inside a handshake at most once per Interval and compares the files' bytes (a stat
// alone misses a same-second rewrite on coarse-mtime file systems); a pair that does
// not parse (caught between the writes of the certificate and the key) keeps the
// previous certificate and is retried at the next check.
type CertReloader struct {
	certFile, keyFile string
	interval          time.Duration
	logger            *slog.Logger
	now               func() time.Time

	mu      sync.Mutex
	cert    *tls.Certificate
	sum     [32]byte
	checked time.Time
}

// NewCertReloader loads the pair (an error if it does not load now) and checks for new
// files every interval (0: DefaultCertCheck). logger receives reload failures (nil:
// slog.Default()).
func NewCertReloader(certFile, keyFile string, interval time.Duration, logger *slog.Logger) (*CertReloader, error) {
	if interval <= 0 {
		interval = DefaultCertCheck
	}
	if logger == nil {
		logger = slog.Default()
	}
	c := &CertReloader{certFile: certFile, keyFile: keyFile, interval: interval, logger: logger, now: time.Now}
	if err := c.Reload(); err != nil {
		return nil, err
	}
	c.checked = c.now()
	return c, nil
}

// Reload reads the files now and swaps the certificate when they changed and parse.
func (c *CertReloader) Reload() error {
	certPEM, err := os.ReadFile(c.certFile)
	if err != nil {
		return hub.Errorf(hub.InvalidArgument, "auth: TLS certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(c.keyFile)
	if err != nil {
		return hub.Errorf(hub.InvalidArgument, "auth: TLS key: %w", err)
	}
	sum := sha256.Sum256(bytes.Join([][]byte{certPEM, keyPEM}, []byte{0}))
	c.mu.Lock()
	same := c.cert != nil && sum == c.sum
	c.mu.Unlock()
	if same {
		return nil
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return hub.Errorf(hub.InvalidArgument, "auth: TLS pair %s, %s: %w", c.certFile, c.keyFile, err)
	}
	c.mu.Lock()
	c.cert, c.sum = &cert, sum
	c.mu.Unlock()
	return nil
}

// GetCertificate is for tls.Config.GetCertificate.
func (c *CertReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	now := c.now()
	c.mu.Lock()
	due := now.Sub(c.checked) >= c.interval
	if due {
		c.checked = now // one handshake checks; the others serve the current pair
	}
	c.mu.Unlock()
	if due {
		if err := c.Reload(); err != nil {
			c.logger.Warn("auth: TLS reload failed; serving the previous certificate", "error", err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cert, nil
}

// TLSConfig returns a server configuration serving the reloaded pair, TLS 1.2 at least.
func (c *CertReloader) TLSConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: c.GetCertificate}
}
