package webhook

import (
	"crypto/hmac"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// DefaultTolerance is how far a signature timestamp may be from the receiver's clock,
// in either direction: Stripe's and Standard Webhooks' 5 minutes.
const DefaultTolerance = 5 * time.Minute

// Verification errors; distinct so a receiver can log why a request was refused.
var (
	// ErrMissingSignature: no header, no timestamp or no v1 value in it.
	ErrMissingSignature = errors.New("webhook: missing or malformed signature")
	// ErrExpired: the timestamp is outside the tolerance (too old or too far ahead).
	ErrExpired = errors.New("webhook: signature timestamp outside tolerance")
	// ErrMismatch: no v1 value matches any of the secrets.
	ErrMismatch = errors.New("webhook: signature mismatch")
)

// Verify checks a SignatureHeader value against body (the raw bytes received, before
// any parsing) with each of secrets (H2). It accepts when any v1 value matches any
// secret, so both sides can rotate secrets without downtime; unknown schemes (v0, v2)
// are ignored. The timestamp must be within tolerance of now in both directions
// (stripe-go only rejects old ones; a far-future timestamp would make a captured
// request replayable until then). tolerance <= 0 means DefaultTolerance. Comparison is
// constant-time (hmac.Equal on the decoded MACs).
func Verify(header string, body []byte, secrets [][]byte, tolerance time.Duration, now time.Time) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	var (
		ts   string
		sigs [][]byte
	)
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			if b, err := hex.DecodeString(v); err == nil && len(b) == 32 {
				sigs = append(sigs, b)
			}
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return ErrMissingSignature
	}
	if d := now.Sub(time.Unix(unix, 0)); d > tolerance || d < -tolerance {
		return ErrExpired
	}
	for _, s := range secrets {
		want := mac(s, ts, body)
		for _, got := range sigs {
			if hmac.Equal(got, want) {
				return nil
			}
		}
	}
	return ErrMismatch
}
