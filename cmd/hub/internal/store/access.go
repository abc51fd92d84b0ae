package store

import (
	"context"
	"database/sql"
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
	sess  *auth.SessionStore

	ringLoaded bool
	ring       *secrets.Keyring
	ringErr    error
	created    bool
}

// Keys returns the API key store (table auth_api_keys in the ledger's database, created
// on first use), tuned by the config's auth.api_keys. Every listener of the process shares
// it, so a key revoked through the admin API stops at this process's ingress at once.
func (s *Store) Keys(ctx context.Context) (*auth.KeyStore, error) {
	var cfg auth.KeyStoreConfig
	if s.file != nil {
		cfg = s.file.Config.Auth.APIKeys
	}
	return onLedger(ctx, s, &s.access.keys, "API keys", func(ctx context.Context, db *sql.DB) (*auth.KeyStore, error) {
		return auth.NewKeyStore(ctx, db, cfg)
	})
}

// LinkRevocations returns the revoked link tokens (table auth_link_revocations in the
// ledger's database).
func (s *Store) LinkRevocations(ctx context.Context) (*auth.LinkRevocations, error) {
	return onLedger(ctx, s, &s.access.links, "link revocations", auth.NewLinkRevocations)
}

// Sessions returns the web console's operator sessions (table auth_sessions in the
// ledger's database), shared by the replicas on that ledger.
func (s *Store) Sessions(ctx context.Context) (*auth.SessionStore, error) {
	return onLedger(ctx, s, &s.access.sess, "console sessions", auth.NewSessionStore)
}

// Audit returns the audit store (table auth_audit in the ledger's database).
func (s *Store) Audit(ctx context.Context) (*auth.AuditStore, error) {
	return onLedger(ctx, s, &s.access.audit, "audit", auth.NewAuditStore)
}

// onLedger returns *slot, opening it on the ledger's database the first time (the
// ledger is opened outside s.mu: it takes the lock itself).
func onLedger[T comparable](ctx context.Context, s *Store, slot *T, what string, open func(context.Context, *sql.DB) (T, error)) (T, error) {
	var zero T
	s.mu.Lock()
	v := *slot
	s.mu.Unlock()
	if v != zero {
		return v, nil
	}
	l, err := s.Ledger(ctx)
	if err != nil {
		return zero, fmt.Errorf("open %s: %w", what, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if *slot != zero {
		return *slot, nil
	}
	if v, err = open(ctx, l.DB()); err != nil {
		return zero, fmt.Errorf("open %s: %w", what, err)
	}
	*slot = v
	return v, nil
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
