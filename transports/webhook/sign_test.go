package webhook

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// The expected MACs below were computed outside Go, with
//
//	printf '%s' '1700000000.{"id":"evt_1","n":1}' | openssl dgst -sha256 -hmac '<secret>'
//
// and, for Standard Webhooks, taken from that specification's published example.
const (
	vecSecretA = "whsec_0123456789abcdefghijklmnopqrstuv"
	vecSecretB = "whsec_ZYXWVUTSRQPONMLKJIHGFEDCBA98765432"
	vecBody    = `{"id":"evt_1","n":1}`
	vecMACA    = "a0a3f4a4b13e502d8572fa6d887793ac51185569ecaba0f6546f6bd8edffaf5f"
	vecMACB    = "1d774f56d606a677e60c499e743fc73e2a727e44683b44d9af2a5e2f84cfe7be"
)

var vecTime = time.Unix(1700000000, 0)

func TestH2_SignatureVector(t *testing.T) {
	t.Parallel()
	t.Run("OneSecret", func(t *testing.T) {
		t.Parallel()
		got := Sign(vecTime, []byte(vecBody), []byte(vecSecretA))
		if want := "t=1700000000,v1=" + vecMACA; got != want {
			t.Fatalf("Sign = %q, want %q", got, want)
		}
	})
	t.Run("RotationSignsWithEverySecret", func(t *testing.T) {
		t.Parallel()
		got := Sign(vecTime, []byte(vecBody), []byte(vecSecretB), []byte(vecSecretA))
		if want := "t=1700000000,v1=" + vecMACB + ",v1=" + vecMACA; got != want {
			t.Fatalf("Sign = %q, want %q", got, want)
		}
	})
	t.Run("StandardWebhooksSpecExample", func(t *testing.T) {
		t.Parallel()
		key := StandardKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
		got := SignStandard("msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`), key)
		if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
			t.Fatalf("SignStandard = %q, want %q", got, want)
		}
	})
	t.Run("NewSecretIsStandardWebhooksFormat", func(t *testing.T) {
		t.Parallel()
		s := NewSecret()
		if !strings.HasPrefix(s, SecretPrefix) || len(StandardKey(s)) != 32 {
			t.Fatalf("NewSecret() = %q: want whsec_ + base64 of 32 bytes", s)
		}
	})
}

func TestH2_Verify(t *testing.T) {
	t.Parallel()
	body := []byte(vecBody)
	secrets := [][]byte{[]byte(vecSecretA)}
	header := "t=1700000000,v1=" + vecMACA
	cases := []struct {
		name    string
		header  string
		body    []byte
		secrets [][]byte
		tol     time.Duration
		now     time.Time
		want    error
	}{
		{"Valid", header, body, secrets, 0, vecTime, nil},
		{"ValidAtOldEdge", header, body, secrets, 0, vecTime.Add(DefaultTolerance), nil},
		{"ValidAtFutureEdge", header, body, secrets, 0, vecTime.Add(-DefaultTolerance), nil},
		{"TooOld", header, body, secrets, 0, vecTime.Add(DefaultTolerance + time.Second), ErrExpired},
		{"TooFarAhead", header, body, secrets, 0, vecTime.Add(-DefaultTolerance - time.Second), ErrExpired},
		{"CustomToleranceOld", header, body, secrets, time.Minute, vecTime.Add(61 * time.Second), ErrExpired},
		{"CustomToleranceAhead", header, body, secrets, time.Minute, vecTime.Add(-61 * time.Second), ErrExpired},
		{"BodyChanged", header, []byte(vecBody + " "), secrets, 0, vecTime, ErrMismatch},
		{"WrongSecret", header, body, [][]byte{[]byte(vecSecretB)}, 0, vecTime, ErrMismatch},
		{"TimestampChanged", "t=1700000001,v1=" + vecMACA, body, secrets, 0, vecTime, ErrMismatch},
		{"AnyOfSeveralSignatures", "t=1700000000,v1=" + vecMACB + ",v1=" + vecMACA, body, secrets, 0, vecTime, nil},
		{"AnyOfSeveralSecrets", header, body, [][]byte{[]byte(vecSecretB), []byte(vecSecretA)}, 0, vecTime, nil},
		{"UnknownSchemeIgnored", "t=1700000000,v0=" + vecMACA + ",v1=" + vecMACA, body, secrets, 0, vecTime, nil},
		{"OnlyUnknownScheme", "t=1700000000,v0=" + vecMACA, body, secrets, 0, vecTime, ErrMissingSignature},
		{"Empty", "", body, secrets, 0, vecTime, ErrMissingSignature},
		{"NoTimestamp", "v1=" + vecMACA, body, secrets, 0, vecTime, ErrMissingSignature},
		{"BadTimestamp", "t=abc,v1=" + vecMACA, body, secrets, 0, vecTime, ErrMissingSignature},
		{"BadHex", "t=1700000000,v1=zz", body, secrets, 0, vecTime, ErrMissingSignature},
		{"Spaces", " t=1700000000 , v1=" + vecMACA + " ", body, secrets, 0, vecTime, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := Verify(c.header, c.body, c.secrets, c.tol, c.now)
			if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
				t.Fatalf("Verify = %v, want %v", err, c.want)
			}
		})
	}
}

func TestH2_SignVerifyRoundTrip(t *testing.T) {
	t.Parallel()
	s1, s2 := NewSecret(), NewSecret()
	now := time.Now()
	body := []byte("\x00\xffnot utf-8 \u00e9")
	h := Sign(now, body, []byte(s1), []byte(s2))
	for _, s := range []string{s1, s2} {
		if err := Verify(h, body, [][]byte{[]byte(s)}, 0, now); err != nil {
			t.Fatalf("Verify with one of the rotation secrets: %v", err)
		}
	}
	if err := Verify(h, body, [][]byte{[]byte(NewSecret())}, 0, now); !errors.Is(err, ErrMismatch) {
		t.Fatalf("Verify with an unrelated secret = %v, want ErrMismatch", err)
	}
}
