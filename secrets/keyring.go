package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/koder/eventhub/hub"
)

// EnvKey is the environment variable holding the ring's keys: base64 of 32 bytes each,
// comma-separated, the first encrypting. Callers read it (os.Getenv) and pass the value
// to ParseKeys or Load; the package reads no environment itself.
const EnvKey = "HUB_SECRET_KEY"

// KeyLen is the length of every key (AES-256).
const KeyLen = 32

type ringKey struct {
	id   string
	raw  []byte
	aead cipher.AEAD
}

// Keyring holds the keys: the first encrypts, all decrypt. Immutable and safe for
// concurrent use.
type Keyring struct{ keys []ringKey }

// NewKeyring builds a ring from raw 32-byte keys, the first encrypting.
func NewKeyring(keys ...[]byte) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, hub.Errorf(hub.InvalidArgument, "secrets: no key")
	}
	r := &Keyring{}
	for i, k := range keys {
		if len(k) != KeyLen {
			return nil, hub.Errorf(hub.InvalidArgument, "secrets: key %d is %d bytes, want %d", i+1, len(k), KeyLen)
		}
		id := KeyID(k)
		for _, o := range r.keys {
			if o.id == id {
				return nil, hub.Errorf(hub.InvalidArgument, "secrets: key %d repeats key %s", i+1, id)
			}
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, hub.Wrap(hub.Internal, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, hub.Wrap(hub.Internal, err)
		}
		r.keys = append(r.keys, ringKey{id: id, raw: append([]byte(nil), k...), aead: aead})
	}
	return r, nil
}

// KeyID is the id a key is known by in ciphertexts and logs: 8 hex digits of a
// domain-separated SHA-256 of it (names the key, reveals nothing usable about it).
func KeyID(key []byte) string {
	h := sha256.New()
	h.Write([]byte("eventhub secrets key id\x00"))
	h.Write(key)
	return hex.EncodeToString(h.Sum(nil)[:4])
}

// GenerateKey returns a new random key.
func GenerateKey() []byte {
	k := make([]byte, KeyLen)
	_, _ = rand.Read(k) // crypto/rand.Read never fails (Go 1.24+)
	return k
}

// EncodeKey is the text form of a key (standard base64), as HUB_SECRET_KEY and key
// files hold it.
func EncodeKey(k []byte) string { return base64.StdEncoding.EncodeToString(k) }

// ParseKeys parses a comma-separated list of base64 keys (standard or URL alphabet,
// padded or not), the first encrypting. Errors name the key by position, never its
// text.
func ParseKeys(s string) (*Keyring, error) {
	var keys [][]byte
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, err := decodeKey(part)
		if err != nil {
			return nil, hub.Errorf(hub.InvalidArgument, "secrets: key %d: %v", i+1, err)
		}
		keys = append(keys, k)
	}
	return NewKeyring(keys...)
}

func decodeKey(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.RawURLEncoding
	}
	k, err := enc.DecodeString(s)
	if err != nil {
		return nil, hub.Errorf(hub.InvalidArgument, "not base64")
	}
	if len(k) != KeyLen {
		return nil, hub.Errorf(hub.InvalidArgument, "%d bytes, want %d (generate one with: head -c 32 /dev/urandom | base64)", len(k), KeyLen)
	}
	return k, nil
}

// Load builds the ring from an environment value (see EnvKey) and a key file: the
// environment's keys first, then the file's. At least one of them must give a key.
func Load(env, file string) (*Keyring, error) {
	var keys [][]byte
	if strings.TrimSpace(env) != "" {
		r, err := ParseKeys(env)
		if err != nil {
			return nil, hub.Errorf(hub.InvalidArgument, "secrets: %s: %w", EnvKey, err)
		}
		keys = append(keys, r.rawKeys()...)
	}
	if file != "" {
		r, err := LoadKeyFile(file)
		if err != nil {
			return nil, err
		}
		for _, k := range r.rawKeys() {
			if !containsKey(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		return nil, hub.Errorf(hub.InvalidArgument, "secrets: no key: set %s or a key file", EnvKey)
	}
	return NewKeyring(keys...)
}

func containsKey(keys [][]byte, k []byte) bool {
	for _, o := range keys {
		if string(o) == string(k) {
			return true
		}
	}
	return false
}

func (r *Keyring) rawKeys() [][]byte {
	out := make([][]byte, len(r.keys))
	for i, k := range r.keys {
		out[i] = k.raw
	}
	return out
}

// PrimaryID is the id of the encrypting key.
func (r *Keyring) PrimaryID() string { return r.keys[0].id }

// IDs lists the key ids, the encrypting one first.
func (r *Keyring) IDs() []string {
	out := make([]string, len(r.keys))
	for i, k := range r.keys {
		out[i] = k.id
	}
	return out
}

// DeriveKeys derives one 32-byte key per ring key, in ring order, for another purpose
// (HKDF-SHA256 with info "eventhub/<purpose>"): auth.NewLinkSigner(ring.DeriveKeys(
// "link-tokens")...) signs with the primary's derivative and rotates with the ring.
func (r *Keyring) DeriveKeys(purpose string) [][]byte {
	out := make([][]byte, len(r.keys))
	for i, k := range r.keys {
		d, err := hkdf.Key(sha256.New, k.raw, nil, "eventhub/"+purpose, KeyLen)
		if err != nil {
			panic("secrets: hkdf: " + err.Error()) // only for lengths beyond 255*32 bytes
		}
		out[i] = d
	}
	return out
}

func (r *Keyring) key(id string) (ringKey, bool) {
	for _, k := range r.keys {
		if k.id == id {
			return k, true
		}
	}
	return ringKey{}, false
}

// String names the ring without revealing it.
func (r *Keyring) String() string {
	return "secrets.Keyring(" + strconv.Itoa(len(r.keys)) + " keys, primary " + r.PrimaryID() + ")"
}
