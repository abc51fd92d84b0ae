package config

import (
	"errors"
	"time"
)

// TLS serves a listener over HTTPS from a certificate and key in PEM files, reloaded
// without a restart when the files are replaced (auth.CertReloader: the files are
// checked at most every reload_interval, inside a handshake). TLS 1.2 at least. Both
// files, or neither (plain HTTP).
type TLS struct {
	// CertFile is the certificate chain (PEM), relative to the config file.
	CertFile string `yaml:"cert_file"`
	// KeyFile is its private key (PEM).
	KeyFile string `yaml:"key_file"`
	// ReloadInterval is how often a handshake may look for new files. Default 10s.
	ReloadInterval time.Duration `yaml:"reload_interval"`
}

// Enabled reports whether the listener serves TLS.
func (t TLS) Enabled() bool { return t.CertFile != "" || t.KeyFile != "" }

// Validate checks the section's shape; the files are read at start (a missing pair
// fails the start, not lint: the files often exist only where the hub runs). Each
// problem is a FieldError at its key.
func (t TLS) Validate() error {
	var errs []error
	switch {
	case t.CertFile != "" && t.KeyFile == "":
		errs = append(errs, Field("key_file", "required with cert_file"))
	case t.KeyFile != "" && t.CertFile == "":
		errs = append(errs, Field("cert_file", "required with key_file"))
	}
	if t.ReloadInterval < 0 {
		errs = append(errs, Field("reload_interval", "must not be negative"))
	}
	if t.ReloadInterval > 0 && !t.Enabled() {
		errs = append(errs, Field("reload_interval", "applies with cert_file and key_file only"))
	}
	return errors.Join(errs...)
}
