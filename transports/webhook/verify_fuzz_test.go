package webhook

import (
	"errors"
	"testing"
	"time"
)

// FuzzVerify feeds arbitrary signature headers to the receiver's verifier: it never
// panics, refuses with one of its three errors, and accepts only a header that carries a
// v1 made with the secret, which the fuzzer cannot forge.
func FuzzVerify(f *testing.F) {
	now := time.Unix(1_700_000_000, 0)
	body := []byte(`{"specversion":"1.0"}`)
	f.Add(Sign(now, body, []byte("s3cret")), body)
	f.Add("t=1700000000,v1=zz,v1=", body)
	f.Add("t=-1,v1=00", []byte{})
	f.Add(",,,=,t==,v1", []byte("x"))
	f.Fuzz(func(t *testing.T, header string, b []byte) {
		err := Verify(header, b, [][]byte{[]byte("s3cret")}, time.Minute, now)
		switch {
		case err == nil:
			if Verify(header, b, [][]byte{[]byte("other")}, time.Minute, now) == nil {
				t.Fatalf("header %q verifies with any secret", header)
			}
		case errors.Is(err, ErrMissingSignature), errors.Is(err, ErrExpired), errors.Is(err, ErrMismatch):
		default:
			t.Fatalf("Verify(%q): unexpected error %v", header, err)
		}
		if got := Verify(Sign(now, b, []byte("s3cret")), b, [][]byte{[]byte("s3cret")}, time.Minute, now); got != nil {
			t.Fatalf("a fresh signature over %q does not verify: %v", b, got)
		}
	})
}

// FuzzParseRetryAfter: any Retry-After value yields a delay between zero and a year.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "0", "-5", "Wed, 21 Oct 2015 07:28:00 GMT", "soon", "99999999999999999999"} {
		f.Add(s)
	}
	now := time.Unix(1_700_000_000, 0)
	f.Fuzz(func(t *testing.T, v string) {
		if d := parseRetryAfter(v, now); d < 0 || d > 366*24*time.Hour {
			t.Fatalf("parseRetryAfter(%q) = %s", v, d)
		}
	})
}
