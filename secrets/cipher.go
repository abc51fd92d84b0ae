package secrets

import (
	"crypto/rand"
	"encoding/base64"
	"strings"

	"github.com/koder/eventhub/hub"
)

// Marker starts every encrypted value.
const Marker = "enc:v1:"

// maxValue bounds a value Decrypt parses (a secret is tens of bytes).
const maxValue = 64 << 10

const nonceLen = 12

// IsEncrypted reports whether v is in the encrypted format (it may still fail to
// decrypt).
func IsEncrypted(v string) bool { return strings.HasPrefix(v, Marker) }

// aad binds a ciphertext to the format version, its key and the caller's context.
func aad(kid, context string) []byte {
	return []byte("eventhub/secrets/v1\x00" + kid + "\x00" + context)
}

// Encrypt encrypts plaintext under the primary key, bound to context (the row's id).
func (r *Keyring) Encrypt(plaintext, context string) (string, error) {
	if len(plaintext) > maxValue/2 {
		return "", hub.Errorf(hub.InvalidArgument, "secrets: value longer than %d bytes", maxValue/2)
	}
	k := r.keys[0]
	nonce := make([]byte, nonceLen, nonceLen+len(plaintext)+k.aead.Overhead())
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails (Go 1.24+)
	sealed := k.aead.Seal(nonce, nonce, []byte(plaintext), aad(k.id, context))
	return Marker + k.id + ":" + base64.RawURLEncoding.EncodeToString(sealed), nil
}

// Decrypt returns the plaintext of v, bound to context. A value without the Marker is
// a plaintext from before encryption and is returned unchanged (the upgrade path);
// a value with it that does not parse, names an unknown key or fails authentication
// (tampered, or copied from another row) is an error (InvalidArgument for the format,
// FailedPrecondition for a key missing from the ring, PermissionDenied for a failed
// authentication), never passed through.
func (r *Keyring) Decrypt(v, context string) (string, error) {
	if !IsEncrypted(v) {
		return v, nil
	}
	kid, body, err := parse(v)
	if err != nil {
		return "", err
	}
	k, ok := r.key(kid)
	if !ok {
		return "", hub.Errorf(hub.FailedPrecondition, "secrets: value encrypted with key %s, which is not in the ring (%s)", kid, strings.Join(r.IDs(), ", "))
	}
	if len(body) < nonceLen+k.aead.Overhead() {
		return "", hub.Errorf(hub.InvalidArgument, "secrets: encrypted value too short")
	}
	pt, err := k.aead.Open(nil, body[:nonceLen], body[nonceLen:], aad(kid, context))
	if err != nil {
		return "", hub.Errorf(hub.PermissionDenied, "secrets: encrypted value does not authenticate (tampered, or moved from another row)")
	}
	return string(pt), nil
}

// parse splits an encrypted value into its key id and sealed bytes.
func parse(v string) (kid string, body []byte, err error) {
	if len(v) > maxValue {
		return "", nil, hub.Errorf(hub.InvalidArgument, "secrets: encrypted value too long")
	}
	rest := strings.TrimPrefix(v, Marker)
	kid, b64, ok := strings.Cut(rest, ":")
	if !ok || len(kid) != 8 || !isHex(kid) {
		return "", nil, hub.Errorf(hub.InvalidArgument, "secrets: malformed encrypted value (want %s<kid>:<base64url>)", Marker)
	}
	body, err = base64.RawURLEncoding.Strict().DecodeString(b64)
	if err != nil {
		return "", nil, hub.Errorf(hub.InvalidArgument, "secrets: malformed encrypted value: not unpadded base64url")
	}
	return kid, body, nil
}

// KeyOf returns the key id of an encrypted value ("" for a plaintext), without
// decrypting it.
func KeyOf(v string) (string, error) {
	if !IsEncrypted(v) {
		return "", nil
	}
	kid, _, err := parse(v)
	return kid, err
}

// NeedsReencrypt reports whether v is a plaintext or encrypted under a key other than
// the primary. A malformed value does not (Reencrypt would fail on it; Decrypt reports
// why).
func (r *Keyring) NeedsReencrypt(v string) bool {
	kid, err := KeyOf(v)
	return err == nil && kid != r.PrimaryID()
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
