package secrets

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/koder/eventhub/hub"
)

func ring(t testing.TB, keys ...[]byte) *Keyring {
	t.Helper()
	r, err := NewKeyring(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func wantCode(t testing.TB, err error, code hub.ErrorCode) {
	t.Helper()
	if got := hub.Code(err); got != code {
		t.Fatalf("error %v: code %v, want %v", err, got, code)
	}
}

func TestSEC_Keyring(t *testing.T) {
	t.Parallel()
	k1, k2 := GenerateKey(), GenerateKey()

	t.Run("RoundTripBoundToTheRow", func(t *testing.T) {
		t.Parallel()
		r := ring(t, k1)
		ct, err := r.Encrypt("whsec_abc", "ep_1")
		if err != nil {
			t.Fatal(err)
		}
		if !IsEncrypted(ct) || !strings.HasPrefix(ct, Marker+r.PrimaryID()+":") || strings.Contains(ct, "whsec") {
			t.Fatalf("ciphertext %q", ct)
		}
		pt, err := r.Decrypt(ct, "ep_1")
		if err != nil || pt != "whsec_abc" {
			t.Fatalf("%q %v", pt, err)
		}
		again, _ := r.Encrypt("whsec_abc", "ep_1")
		if again == ct {
			t.Fatal("two encryptions are identical: nonce reuse")
		}
		_, err = r.Decrypt(ct, "ep_2")
		wantCode(t, err, hub.PermissionDenied)
		if !strings.Contains(err.Error(), "moved from another row") {
			t.Fatal(err)
		}
	})

	t.Run("TamperingFails", func(t *testing.T) {
		t.Parallel()
		r := ring(t, k1)
		ct, _ := r.Encrypt("secret", "row")
		body, _ := base64.RawURLEncoding.DecodeString(ct[len(Marker)+9:])
		for i := range body {
			b := bytes.Clone(body)
			b[i] ^= 1
			_, err := r.Decrypt(ct[:len(Marker)+9]+base64.RawURLEncoding.EncodeToString(b), "row")
			wantCode(t, err, hub.PermissionDenied)
		}
	})

	t.Run("PlaintextPassesThrough", func(t *testing.T) {
		t.Parallel()
		r := ring(t, k1)
		pt, err := r.Decrypt("whsec_legacy", "ep_1")
		if err != nil || pt != "whsec_legacy" {
			t.Fatalf("%q %v", pt, err)
		}
		if !r.NeedsReencrypt("whsec_legacy") {
			t.Fatal("a plaintext needs encrypting")
		}
	})

	t.Run("MalformedIsNeverPassedThrough", func(t *testing.T) {
		t.Parallel()
		r := ring(t, k1)
		for name, v := range map[string]string{
			"NoKid":      Marker,
			"ShortKid":   Marker + "abc:AAAA",
			"UpperKid":   Marker + "ABCDEF01:AAAA",
			"NoBody":     Marker + r.PrimaryID(),
			"BadBase64":  Marker + r.PrimaryID() + ":***",
			"Padded":     Marker + r.PrimaryID() + ":AAAA==",
			"TooShort":   Marker + r.PrimaryID() + ":AAAA",
			"UnknownKey": Marker + "00000000:" + strings.Repeat("A", 40),
		} {
			_, err := r.Decrypt(v, "row")
			if err == nil {
				t.Errorf("%s: decrypted", name)
			}
		}
		_, err := r.Decrypt(Marker+"00000000:"+strings.Repeat("A", 40), "row")
		wantCode(t, err, hub.FailedPrecondition)
	})

	t.Run("RotationRoundTrip", func(t *testing.T) {
		t.Parallel()
		old := ring(t, k1)
		ct1, _ := old.Encrypt("s1", "ep_1")
		rotated := ring(t, k2, k1)
		if rotated.PrimaryID() != KeyID(k2) || old.NeedsReencrypt(ct1) || !rotated.NeedsReencrypt(ct1) {
			t.Fatal("key ids")
		}
		if pt, err := rotated.Decrypt(ct1, "ep_1"); err != nil || pt != "s1" {
			t.Fatalf("the old key still decrypts: %q %v", pt, err)
		}
		ct2, _ := rotated.Encrypt("s1", "ep_1")
		if kid, _ := KeyOf(ct2); kid != KeyID(k2) {
			t.Fatalf("new values use the first key: %s", kid)
		}
		newOnly := ring(t, k2)
		if pt, err := newOnly.Decrypt(ct2, "ep_1"); err != nil || pt != "s1" {
			t.Fatalf("%q %v", pt, err)
		}
		_, err := newOnly.Decrypt(ct1, "ep_1")
		wantCode(t, err, hub.FailedPrecondition)
	})

	t.Run("ParseKeys", func(t *testing.T) {
		t.Parallel()
		std := base64.StdEncoding.EncodeToString(k1)
		url := base64.RawURLEncoding.EncodeToString(k2)
		r, err := ParseKeys(" " + std + " , " + url + ",")
		if err != nil || len(r.IDs()) != 2 || r.PrimaryID() != KeyID(k1) {
			t.Fatalf("%v %v", r, err)
		}
		for name, s := range map[string]string{
			"Empty":    "",
			"NotB64":   "not base64!",
			"Short":    base64.StdEncoding.EncodeToString(k1[:16]),
			"Repeated": std + "," + std,
		} {
			_, err := ParseKeys(s)
			wantCode(t, err, hub.InvalidArgument)
			if s != "" && strings.Contains(err.Error(), std) {
				t.Errorf("%s: the error echoes the key", name)
			}
		}
		if strings.Contains(r.String(), std) {
			t.Fatal("String reveals a key")
		}
	})

	t.Run("DeriveKeys", func(t *testing.T) {
		t.Parallel()
		r := ring(t, k1, k2)
		a, b := r.DeriveKeys("link-tokens"), r.DeriveKeys("other")
		if len(a) != 2 || len(a[0]) != 32 || bytes.Equal(a[0], a[1]) || bytes.Equal(a[0], b[0]) || bytes.Equal(a[0], k1) {
			t.Fatal("derived keys must differ by key and by purpose")
		}
		if !bytes.Equal(a[1], ring(t, k2).DeriveKeys("link-tokens")[0]) {
			t.Fatal("derivation must be deterministic")
		}
	})

	t.Run("Limits", func(t *testing.T) {
		t.Parallel()
		r := ring(t, k1)
		_, err := r.Encrypt(strings.Repeat("x", maxValue), "row")
		wantCode(t, err, hub.InvalidArgument)
		_, err = r.Decrypt(Marker+r.PrimaryID()+":"+strings.Repeat("A", maxValue), "row")
		wantCode(t, err, hub.InvalidArgument)
		for name, keys := range map[string][][]byte{"None": nil, "Short": {k1[:31]}} {
			if _, err := NewKeyring(keys...); hub.Code(err) != hub.InvalidArgument {
				t.Errorf("%s: %v", name, err)
			}
		}
	})
}

func FuzzDecrypt(f *testing.F) {
	r, _ := NewKeyring(bytes.Repeat([]byte{3}, 32))
	ct, _ := r.Encrypt("whsec_x", "ep_1")
	f.Add(ct, "ep_1")
	f.Add("whsec_plain", "ep_1")
	f.Add(Marker, "")
	f.Add(Marker+r.PrimaryID()+":", "ep_1")
	f.Add(Marker+"00000000:AAAA", "x")
	f.Fuzz(func(t *testing.T, v, ctx string) {
		pt, err := r.Decrypt(v, ctx)
		if !IsEncrypted(v) {
			if err != nil || pt != v {
				t.Fatalf("plaintext %q: %q %v", v, pt, err)
			}
			return
		}
		if err == nil {
			// Only what the ring encrypted for this context authenticates (the seed,
			// made in each fuzzing process with its own nonce, under a fixed key).
			if ctx != "ep_1" || pt != "whsec_x" {
				t.Fatalf("decrypted %q (%q) to %q", v, ctx, pt)
			}
			return
		}
		switch hub.Code(err) {
		case hub.InvalidArgument, hub.FailedPrecondition, hub.PermissionDenied:
		default:
			t.Fatalf("code %v", hub.Code(err))
		}
	})
}

func FuzzParseKeys(f *testing.F) {
	f.Add(EncodeKey(bytes.Repeat([]byte{1}, 32)))
	f.Add(EncodeKey(bytes.Repeat([]byte{1}, 32)) + "," + base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{2}, 32)))
	f.Add(",,,")
	f.Add("=")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseKeys(s)
		if err != nil {
			wantCode(t, err, hub.InvalidArgument)
			return
		}
		ct, err := r.Encrypt("x", "c")
		if err != nil {
			t.Fatal(err)
		}
		if pt, err := r.Decrypt(ct, "c"); err != nil || pt != "x" {
			t.Fatalf("%q %v", pt, err)
		}
	})
}
