package config

import (
	"errors"
)

// RESP is the Redis protocol listener over the store's kdbstream engine
// (transports/kdbstream/resp): redis-cli, go-redis, ioredis and any other Redis client
// read and write the hub's streams, so moving services off Redis is a URL change
// (docs/kdbstream.md, "Move a polyglot fleet off Redis").
type RESP struct {
	// Listen is host:port, e.g. 127.0.0.1:6380. Empty: no listener (the default).
	Listen string `yaml:"listen"`
	// Users maps ACL-style user names to passwords (AUTH <user> <password>; the user
	// "default" is AUTH <password>). Use ${VAR} for the passwords.
	Users map[string]string `yaml:"users"`
	// AdminToken also accepts admin.token as the password of any user name.
	AdminToken bool `yaml:"admin_token"`
	// TLS serves TLS (rediss:// clients) with this certificate and key.
	TLS *RESPTLS `yaml:"tls"`
}

// RESPTLS is the listener's certificate.
type RESPTLS struct {
	CertFile string `yaml:"cert_file"` // PEM certificate chain
	KeyFile  string `yaml:"key_file"`  // PEM private key
}

// Enabled reports whether the RESP listener is configured.
func (r RESP) Enabled() bool { return r.Listen != "" }

// validateRESP checks the section, and what it needs of others: a store (the streams
// live in its kdbstream engine) and, for admin_token, admin.token.
func (c *Config) validateRESP() error {
	r := c.RESP
	if !r.Enabled() {
		if len(r.Users) > 0 || r.AdminToken || r.TLS != nil {
			return Field("listen", "missing: users, admin_token and tls need a listener")
		}
		return nil
	}
	var errs []error
	if err := checkListen(r.Listen); err != nil {
		errs = append(errs, &FieldError{Key: "listen", Err: err})
	} else if len(r.Users) == 0 && !r.AdminToken && !IsLoopbackListen(r.Listen) {
		errs = append(errs, Field("listen", "without users or admin_token the RESP listener may only listen on a loopback address (127.0.0.1, ::1, localhost)"))
	}
	if !c.Store.Configured() {
		errs = append(errs, Field("listen", "needs a store (store.sqlite or store.postgres): the streams live in its kdbstream engine"))
	}
	for _, u := range sortedKeys(r.Users) {
		if u == "" {
			errs = append(errs, Field("users", "empty user name"))
		} else if r.Users[u] == "" {
			errs = append(errs, Field("users."+u, "empty password"))
		}
	}
	if r.AdminToken && c.Admin.Token == "" {
		errs = append(errs, Field("admin_token", "needs admin.token"))
	}
	if r.TLS != nil {
		if r.TLS.CertFile == "" {
			errs = append(errs, Field("tls.cert_file", "missing"))
		}
		if r.TLS.KeyFile == "" {
			errs = append(errs, Field("tls.key_file", "missing"))
		}
	}
	return errors.Join(errs...)
}
