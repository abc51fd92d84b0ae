package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Header names of a delivery request.
const (
	// SignatureHeader carries `t=<unix>,v1=<hex>[,v1=<hex>...]` (H2): one v1 per active
	// secret, each hex(HMAC-SHA256(secret, "<t>.<body>")) over the exact body bytes
	// sent. The format is Stripe's; the name is our own (not X-Hub-Signature, which
	// GitHub uses for a different format, `sha1=<hex>` of the body alone, so a GitHub
	// verifier would reject ours with a confusing error).
	SignatureHeader = "Eventhub-Signature"

	// IDHeader carries the event id on every request (the receiver's idempotency key);
	// it is also the Standard Webhooks message id.
	IDHeader = "Webhook-Id"

	// Standard Webhooks headers, sent when Config.StandardWebhooks is set, so receivers
	// can use that ecosystem's verifiers: webhook-timestamp (unix seconds) and
	// webhook-signature (`v1,<base64 HMAC-SHA256(key, "<id>.<t>.<body>")>`, space
	// separated, one per active secret).
	TimestampHeader         = "Webhook-Timestamp"
	StandardSignatureHeader = "Webhook-Signature"

	// DeliveryHeader carries the delivery id (the ledger job id) for support requests.
	DeliveryHeader = "Eventhub-Delivery"
)

// SecretPrefix starts every generated secret; the rest is base64 of 32 random bytes,
// the Standard Webhooks format (`whsec_<base64>`).
const SecretPrefix = "whsec_"

// NewSecret returns a fresh random secret `whsec_<base64 of 32 bytes>`.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// Sign returns the SignatureHeader value for body signed at t with every secret, in
// order. The HMAC key of a secret is its bytes exactly as written, whsec_ prefix
// included (Stripe's convention), so receivers need no decoding step.
func Sign(t time.Time, body []byte, secrets ...[]byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	b.Grow(len(ts) + 2 + len(secrets)*68)
	b.WriteString("t=")
	b.WriteString(ts)
	for _, s := range secrets {
		b.WriteString(",v1=")
		b.WriteString(hex.EncodeToString(mac(s, ts, body)))
	}
	return b.String()
}

// mac is HMAC-SHA256(secret, "<ts>.<body>").
func mac(secret []byte, ts string, body []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(ts))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// StandardKey returns the HMAC key Standard Webhooks derives from a secret: the
// base64-decoded part after whsec_, or the raw bytes when the secret is not in that
// form (the reference libraries' NewWebhookRaw).
func StandardKey(secret string) []byte {
	if rest, ok := strings.CutPrefix(secret, SecretPrefix); ok {
		if k, err := base64.StdEncoding.DecodeString(rest); err == nil {
			return k
		}
	}
	return []byte(secret)
}

// SignStandard returns the Standard Webhooks webhook-signature value: space-separated
// `v1,<base64 HMAC-SHA256(key, "<id>.<t>.<body>")>`, one per key.
func SignStandard(id string, t time.Time, body []byte, keys ...[]byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		h := hmac.New(sha256.New, k)
		h.Write([]byte(id))
		h.Write([]byte{'.'})
		h.Write([]byte(ts))
		h.Write([]byte{'.'})
		h.Write(body)
		b.WriteString("v1,")
		b.WriteString(base64.StdEncoding.EncodeToString(h.Sum(nil)))
	}
	return b.String()
}
