package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/secrets"
)

// access holds the access layer's resources on the store, each opened once.
type access struct {
	keys  *auth.KeyStore
	audit *auth.AuditStore
	links *auth.LinkRevocations

	ringLoaded bool
	ring       *secrets.Keyring
	ringErr    error
	created    bool
}

// Keys returns the API key store (table auth_api_keys in the ledger's database, created
// on first use), tuned by the config's auth.api_keys. Every listener of the process shares
// it, so a key revoked through the admin API stops at this process's ingress at once.
func (s *Store) Keys(ctx context.Context) (*auth.KeyStore, error) {
	if k := s.openedKeys(); k != nil {
		return k, nil
	}
	l, err := s.Ledger(ctx)
	if err != nil {
		return nil, fmt.Errorf("open API keys: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.access.keys != nil {
		return s.access.keys, nil
	}
	var cfg auth.KeyStoreConfig
	if s.file != nil {
		cfg = s.file.Config.Auth.APIKeys
	}
	k, err := auth.NewKeyStore(ctx, l.DB(), cfg)
	if err != nil {
		return nil, fmt.Errorf("open API keys: %w", err)
	}
	s.access.keys = k
	return k, nil
}

func (s *Store) openedKeys() *auth.KeyStore {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.access.keys
}

// LinkRevocations returns the revoked link tokens (table auth_link_revocations in the
// ledger's database).
func (s *Store) LinkRevocations(ctx context.Context) (*auth.LinkRevocations, error) {
	s.mu.Lock()
	r := s.access.links
	s.mu.Unlock()
	if r != nil {
		return r, nil
	}
	l, err := s.Ledger(ctx)
	if err != nil {
		return nil, fmt.Errorf("open link revocations: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.access.links != nil {
		return s.access.links, nil
	}
	if r, err = auth.NewLinkRevocations(ctx, l.DB()); err != nil {
		return nil, fmt.Errorf("open link revocations: %w", err)
	}
	s.access.links = r
	return r, nil
}

// Audit returns the audit store (table auth_audit in the ledger's database).
func (s *Store) Audit(ctx context.Context) (*auth.AuditStore, error) {
	s.mu.Lock()
	a := s.access.audit
	s.mu.Unlock()
	if a != nil {
		return a, nil
	}
	l, err := s.Ledger(ctx)
	if err != nil {
		return nil, fmt.Errorf("open audit: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.access.audit != nil {
		return s.access.audit, nil
	}
	a, err = auth.NewAuditStore(ctx, l.DB())
	if err != nil {
		return nil, fmt.Errorf("open audit: %w", err)
	}
	s.access.audit = a
	return a, nil
}

// Keyring returns the ring that encrypts secrets in the store, loaded once: the keys of
// $HUB_SECRET_KEY first, then those of secrets.key_file (generated first when
// secrets.create_key_file says so and it does not exist). It is nil, without error, when
// neither gives a key: secrets are then stored as given.
func (s *Store) Keyring() (*secrets.Keyring, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.access.ringLoaded {
		return s.access.ring, s.access.ringErr
	}
	s.access.ringLoaded = true
	s.access.ring, s.access.created, s.access.ringErr = s.loadKeyring()
	return s.access.ring, s.access.ringErr
}

// KeyFileCreated reports whether Keyring generated the key file in this process.
func (s *Store) KeyFileCreated() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.access.created
}

func (s *Store) loadKeyring() (*secrets.Keyring, bool, error) {
	env, _ := s.env(secrets.EnvKey)
	file, create := "", false
	if s.file != nil {
		sc := s.file.Config.Secrets
		file, create = s.file.Resolve(sc.KeyFile), sc.CreateKeyFile
	}
	created := false
	if file != "" && create {
		if _, err := os.Stat(file); os.IsNotExist(err) {
			if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
				return nil, false, fmt.Errorf("secrets.key_file: %w", err)
			}
			if _, created, err = secrets.LoadOrCreateKeyFile(file); err != nil {
				return nil, false, fmt.Errorf("secrets.key_file: %w", err)
			}
		}
	}
	if env == "" && file == "" {
		return nil, false, nil
	}
	r, err := secrets.Load(env, file)
	if err != nil {
		return nil, false, fmt.Errorf("secret keys: %w", err)
	}
	return r, created, nil
}
