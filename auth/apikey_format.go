package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"strings"
)

// API key format
//
//	ehk_<id>_<secret><check>
//
// id is 10 random bytes (80 bits, 16 base32 characters): visible, stored in clear, named
// in logs and the audit trail, and the primary key of the lookup. secret is 32 random
// bytes (256 bits, 52 characters): shown once at creation, stored only as a SHA-256
// hash. check is a CRC-32 of everything before it (7 characters): it rejects typos and
// random strings before any lookup, and lets secret scanners tell a real key from noise
// with few false positives (the scheme GitHub's tokens use). The alphabet is lowercase
// RFC 4648 base32 without padding, so a key survives URLs, shells, YAML and
// double-click selection unchanged.
//
// Why SHA-256 and not bcrypt or argon2: those exist to slow down guessing of
// low-entropy passwords. A 256-bit random secret cannot be guessed however fast the
// hash, and the hash runs on every published request: a password hash tuned to 50 ms
// would cap a core at 20 requests per second and hand attackers a CPU-exhaustion lever.
// One SHA-256 costs well under a microsecond (see BenchmarkAPIKeyVerify).
const (
	// APIKeyPrefix starts every API key.
	APIKeyPrefix = "ehk_"

	keyIDBytes     = 10
	keySecretBytes = 32
	keyIDLen       = 16 // base32 of 10 bytes
	keySecretLen   = 52 // base32 of 32 bytes, unpadded
	keyCheckLen    = 7  // base32 of 4 bytes, unpadded
	// APIKeyLen is the length of every well-formed API key.
	APIKeyLen = len(APIKeyPrefix) + keyIDLen + 1 + keySecretLen + keyCheckLen
)

var b32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// APIKeyToken is a parsed API key.
type APIKeyToken struct {
	ID     string // the visible key id
	Secret string // the secret part (with its check characters)
	raw    string
}

// String returns the key as given to the client.
func (k APIKeyToken) String() string { return k.raw }

// Hash is the stored form of the key: hex SHA-256 of the whole key string.
func (k APIKeyToken) Hash() string { return hashKey(k.raw) }

func hashKey(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:])
}

func newKeyID() string {
	var b [keyIDBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+): it crashes instead
	return b32.EncodeToString(b[:])
}

// newAPIKey makes a key with the given id and a fresh secret.
func newAPIKey(id string) APIKeyToken {
	var s [keySecretBytes]byte
	_, _ = rand.Read(s[:])
	body := APIKeyPrefix + id + "_" + b32.EncodeToString(s[:])
	var c [4]byte
	binary.BigEndian.PutUint32(c[:], crc32.ChecksumIEEE([]byte(body)))
	raw := body + b32.EncodeToString(c[:])
	return APIKeyToken{ID: id, Secret: raw[len(APIKeyPrefix)+keyIDLen+1:], raw: raw}
}

// LooksLikeAPIKey reports whether s has the API key prefix: the Authenticator's routing
// test, not a validity check.
func LooksLikeAPIKey(s string) bool { return strings.HasPrefix(s, APIKeyPrefix) }

// ParseAPIKey checks the format and the check characters of s. It does not look the key
// up. A malformed key is Unauthenticated; the message never echoes the input (it may be
// somebody's real secret with a typo).
func ParseAPIKey(s string) (APIKeyToken, error) {
	if len(s) != APIKeyLen || !strings.HasPrefix(s, APIKeyPrefix) || s[len(APIKeyPrefix)+keyIDLen] != '_' {
		return APIKeyToken{}, malformedKey("wrong length or layout")
	}
	id := s[len(APIKeyPrefix) : len(APIKeyPrefix)+keyIDLen]
	secret := s[len(APIKeyPrefix)+keyIDLen+1:]
	if !isB32(id) || !isB32(secret) {
		return APIKeyToken{}, malformedKey("character outside the key alphabet")
	}
	// Every 16-character id and 52-character secret decodes; the 7 check characters
	// carry 35 bits for 32 of CRC, so the 3 spare bits must be zero (canonical form).
	check, err := b32.DecodeString(secret[keySecretLen:])
	if err != nil || len(check) != 4 || b32.EncodeToString(check) != secret[keySecretLen:] {
		return APIKeyToken{}, malformedKey("bad check characters")
	}
	if binary.BigEndian.Uint32(check) != crc32.ChecksumIEEE([]byte(s[:len(s)-keyCheckLen])) {
		return APIKeyToken{}, malformedKey("check characters do not match (a typo?)")
	}
	if _, err := b32.DecodeString(id); err != nil {
		return APIKeyToken{}, malformedKey("bad key id")
	}
	if sb, err := b32.DecodeString(secret[:keySecretLen]); err != nil || b32.EncodeToString(sb) != secret[:keySecretLen] {
		return APIKeyToken{}, malformedKey("bad secret encoding")
	}
	return APIKeyToken{ID: id, Secret: secret, raw: s}, nil
}

// validKeyID reports whether id can be a key id (for lookups by id from the admin API).
func validKeyID(id string) bool { return len(id) == keyIDLen && isB32(id) }

func isB32(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

func malformedKey(why string) error {
	return unauthenticated("api-keys", "auth: malformed API key: "+why, nil)
}
