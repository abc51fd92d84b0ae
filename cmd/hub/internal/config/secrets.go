package config

import (
	"errors"
)

// Secrets configures the key ring that encrypts webhook signing secrets in the store
// (package secrets, AES-256-GCM): the keys of $HUB_SECRET_KEY (base64, comma-separated,
// the first encrypting) come first, then the key file's. With neither, secrets are
// stored in plaintext and the hub says so at start. See docs/security.md.
type Secrets struct {
	// KeyFile is a key file: one base64 key per line, the first encrypting, # comments;
	// relative to the config file.
	KeyFile string `yaml:"key_file"`
	// CreateKeyFile generates key_file (one fresh key, mode 0600) at start when it does
	// not exist: the embedded default keeps its key beside its database this way.
	CreateKeyFile bool `yaml:"create_key_file"`
}

func (s Secrets) validate() error {
	if s.CreateKeyFile && s.KeyFile == "" {
		return errors.Join(Field("create_key_file", "needs secrets.key_file (where to keep the key)"))
	}
	return nil
}
