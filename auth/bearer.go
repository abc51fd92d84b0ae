package auth

import (
	"net/http"
	"strings"
)

// MaxCredentialLen bounds a presented credential (API key, JWT, link or admin token).
// Real JWTs from identity providers stay under 4 KiB; the bound keeps hashing and
// parsing of hostile input cheap. (The listener's header limit bounds the header as a
// whole; see Harden.)
const MaxCredentialLen = 8 << 10

// BearerToken extracts the credential of an Authorization header value
// ("Bearer <token68>", RFC 6750 section 2.1; the scheme is case-insensitive, RFC 9110
// section 11.1). An empty value is Unauthenticated ("no credential"); another scheme, a
// missing token or characters outside token68 are Unauthenticated too, with a message
// that never echoes the token.
func BearerToken(header string) (string, error) {
	if header == "" {
		return "", unauthenticated("authentication", "auth: no credential (send Authorization: Bearer <key or token>)", nil)
	}
	scheme, rest, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", unauthenticated("authentication", "auth: Authorization must use the Bearer scheme", nil)
	}
	tok := strings.TrimLeft(rest, " ")
	switch {
	case tok == "":
		return "", unauthenticated("authentication", "auth: empty bearer token", nil)
	case len(tok) > MaxCredentialLen:
		return "", unauthenticated("authentication", "auth: bearer token too long", nil)
	case !isToken68(tok):
		return "", unauthenticated("authentication", "auth: bearer token has characters outside token68 (RFC 6750)", nil)
	}
	return tok, nil
}

// RequestBearer is BearerToken on r's Authorization header. More than one
// Authorization header is refused: two credentials in one request leave it ambiguous
// which one a proxy or the hub checked.
func RequestBearer(r *http.Request) (string, error) {
	vs := r.Header.Values("Authorization")
	if len(vs) > 1 {
		return "", unauthenticated("authentication", "auth: more than one Authorization header", nil)
	}
	if len(vs) == 0 {
		return BearerToken("")
	}
	return BearerToken(vs[0])
}

// isToken68 reports whether s is token68: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" /
// "+" / "/" ) *"=".
func isToken68(s string) bool {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/') {
			break
		}
	}
	if i == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] != '=' {
			return false
		}
	}
	return true
}
