// Package secrets encrypts small values at rest (webhook signing secrets today, client
// keys later) with AES-256-GCM under a key ring, so a copy of the database (a backup, a
// replica, a read-only SQL role) does not hand out the secrets that sign the hub's
// webhooks.
//
// # Format
//
//	enc:v1:<kid>:<base64url(nonce || ciphertext || tag)>
//
// kid names the key (8 hex digits of a hash of it), so any key of the ring decrypts
// what it encrypted and rotation needs no bookkeeping per row. The nonce is 12 random
// bytes. The GCM additional data binds the ciphertext to the format version, the key id
// and a caller-given context, normally the row's id (the endpoint id): a ciphertext
// copied to another row fails to decrypt instead of making that row sign with a
// secret it was not given.
//
// # Keys
//
// A ring is one or more 32-byte keys, from HUB_SECRET_KEY (base64, several separated
// by commas) or a key file (one base64 key per line, # comments). The first key
// encrypts; every key decrypts. Rotation: put a new key first, keep the old ones, run
// Reencrypt (resumable), then drop the old keys. GenerateKeyFile writes a fresh file
// with mode 0600 (the embedded default keeps one beside its database); RotateKeyFile
// puts a new key at the top of one.
//
// # Upgrade path
//
// Decrypt returns a value without the enc:v1: marker unchanged: rows written before
// encryption was configured keep working, and Reencrypt encrypts them. NeedsReencrypt
// tells which values are plaintext or under an old key.
//
// # Why no library
//
// AES-256-GCM from the standard library is the primitive that Tink or a KMS SDK would
// wrap here. Their value is key management: keysets in protobuf, remote KMS key
// encryption keys, primitives chosen per use. The hub needs one primitive, a key ring
// and a text format that survives a TEXT column; that is this package's few hundred
// lines on crypto/aes and crypto/cipher, with no dependency to track. Random 96-bit
// nonces are safe for up to 2^32 encryptions per key (NIST SP 800-38D); webhook secrets
// are written once per endpoint and rotation, many orders of magnitude fewer. A KMS
// can later supply the ring's keys (envelope: a KMS-encrypted key file) without
// changing the format.
package secrets
