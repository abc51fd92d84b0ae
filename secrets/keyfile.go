package secrets

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/koder/eventhub/hub"
)

const keyFileHeader = `# eventhub secret keys. The first key encrypts; every key decrypts.
# Keep this file private (mode 0600) and backed up: without it, encrypted webhook
# secrets cannot be read. Rotate: put a new key first, re-encrypt, then remove old keys.
`

// LoadKeyFile reads a key file: one base64 key per line, the first encrypting; blank
// lines and lines starting with # are ignored. Errors name the line, never the key.
func LoadKeyFile(path string) (*Keyring, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, hub.Errorf(hub.InvalidArgument, "secrets: key file: %w", err)
	}
	var keys [][]byte
	for n, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := decodeKey(line)
		if err != nil {
			return nil, hub.Errorf(hub.InvalidArgument, "secrets: %s:%d: %v", path, n+1, err)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, hub.Errorf(hub.InvalidArgument, "secrets: %s: no key in the file", path)
	}
	r, err := NewKeyring(keys...)
	if err != nil {
		return nil, hub.Errorf(hub.InvalidArgument, "secrets: %s: %w", path, err)
	}
	return r, nil
}

// GenerateKeyFile writes a new key file holding one fresh key, with mode 0600. It
// refuses to overwrite an existing file (AlreadyExists): replacing a key file loses
// every secret encrypted under it.
func GenerateKeyFile(path string) (*Keyring, error) {
	k := GenerateKey()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, hub.Errorf(hub.AlreadyExists, "secrets: key file %s already exists", path)
	}
	if err != nil {
		return nil, hub.Errorf(hub.FailedPrecondition, "secrets: create key file: %w", err)
	}
	_, werr := f.WriteString(keyFileHeader + EncodeKey(k) + "\n")
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(path)
		return nil, hub.Errorf(hub.FailedPrecondition, "secrets: write key file: %w", err)
	}
	return NewKeyring(k)
}

// LoadOrCreateKeyFile loads path, or generates it when it does not exist (the embedded
// default's first run). created reports which.
func LoadOrCreateKeyFile(path string) (r *Keyring, created bool, err error) {
	r, err = LoadKeyFile(path)
	if err == nil {
		return r, false, nil
	}
	if _, serr := os.Stat(path); !errors.Is(serr, fs.ErrNotExist) {
		return nil, false, err
	}
	r, err = GenerateKeyFile(path)
	if hub.Code(err) == hub.AlreadyExists { // another process made it first
		r, err = LoadKeyFile(path)
		return r, false, err
	}
	return r, err == nil, err
}

// RotateKeyFile puts a new key at the top of the key file (it encrypts from the next
// load on), keeping the others, and returns the new ring. The file is replaced
// atomically (a temporary file in the same directory, renamed), mode 0600.
func RotateKeyFile(path string) (*Keyring, error) {
	old, err := LoadKeyFile(path)
	if err != nil {
		return nil, err
	}
	keys := append([][]byte{GenerateKey()}, old.rawKeys()...)
	r, err := NewKeyring(keys...)
	if err != nil {
		return nil, err
	}
	var sb strings.Builder
	sb.WriteString(keyFileHeader)
	for i, k := range keys {
		note := ""
		if i == 0 {
			note = " (encrypts)"
		}
		sb.WriteString("# key " + KeyID(k) + note + "\n" + EncodeKey(k) + "\n")
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, hub.Errorf(hub.FailedPrecondition, "secrets: rotate key file: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, hub.Errorf(hub.FailedPrecondition, "secrets: rotate key file: %w", err)
	}
	_, werr := tmp.WriteString(sb.String())
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return nil, hub.Errorf(hub.FailedPrecondition, "secrets: rotate key file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, hub.Errorf(hub.FailedPrecondition, "secrets: rotate key file: %w", err)
	}
	return r, nil
}

// DefaultKeyFile is the key file beside a database file: "<db>.key" (the embedded
// default's SQLite database "data/hub.db" keeps "data/hub.db.key").
func DefaultKeyFile(dbPath string) string { return dbPath + ".key" }
