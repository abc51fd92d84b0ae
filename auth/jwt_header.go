package auth

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// jwtHeader is the part of a JOSE header checked before the JWT library sees a token.
type jwtHeader struct {
	Alg  string          `json:"alg"`
	Kid  string          `json:"kid"`
	Crit json.RawMessage `json:"crit"`
}

// maxJWTHeaderLen bounds the encoded header segment.
const maxJWTHeaderLen = 2048

// LooksLikeJWT reports whether s has the shape of a compact JWS (three base64url
// segments): the Authenticator's routing test, not a validity check.
func LooksLikeJWT(s string) bool {
	return strings.HasPrefix(s, "eyJ") && strings.Count(s, ".") == 2
}

// parseJWTHeader checks a compact JWS cheaply and reads its header: three segments of
// base64url without padding, a JSON object header whose alg is one of allowed, no crit.
// It runs before the library, to refuse alg "none", symmetric algorithms and unknown
// critical extensions (which golang-jwt would ignore, and RFC 7515 section 4.1.11 says
// must be refused) with a clear reason, and to keep hostile input away from JSON
// decoding of the claims and from key lookups.
func parseJWTHeader(tok string, allowed []string) (jwtHeader, error) {
	if len(tok) > MaxCredentialLen {
		return jwtHeader{}, badJWT("too long")
	}
	h, rest, ok := strings.Cut(tok, ".")
	if !ok {
		return jwtHeader{}, badJWT("not a compact JWS (want header.payload.signature)")
	}
	p, sig, ok := strings.Cut(rest, ".")
	if !ok || strings.Contains(sig, ".") {
		return jwtHeader{}, badJWT("not a compact JWS (want header.payload.signature)")
	}
	if h == "" || p == "" || sig == "" {
		return jwtHeader{}, badJWT("empty segment (an unsigned token?)")
	}
	if len(h) > maxJWTHeaderLen {
		return jwtHeader{}, badJWT("header too long")
	}
	for _, seg := range []string{h, p, sig} {
		if !isBase64URL(seg) {
			return jwtHeader{}, badJWT("segment is not unpadded base64url")
		}
	}
	raw, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		return jwtHeader{}, badJWT("header is not base64url")
	}
	var hdr jwtHeader
	if err := json.Unmarshal(raw, &hdr); err != nil {
		return jwtHeader{}, badJWT("header is not a JSON object")
	}
	if hdr.Crit != nil {
		return jwtHeader{}, badJWT(`header has "crit" extensions the hub does not implement`)
	}
	if hdr.Alg == "" {
		return jwtHeader{}, badJWT(`header has no "alg"`)
	}
	for _, a := range allowed {
		if hdr.Alg == a {
			return hdr, nil
		}
	}
	return jwtHeader{}, badJWT("algorithm " + quote(limit(hdr.Alg, 20)) + " is not allowed")
}

func isBase64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func limit(s string, n int) string {
	if len(s) > n {
		s = s[:n] + "..."
	}
	return strings.ToValidUTF8(s, "?")
}

func badJWT(why string) error {
	return unauthenticated("jwt", "auth: invalid JWT: "+why, nil)
}
