package streams

import (
	"net/url"
	"strings"

	"github.com/koder/eventhub/hub"
)

// ApplyURLParams applies to target the query parameters of q that params knows, one
// value each, and deletes them from q (what remains is the driver's business). u is
// the parsed URL, only for redacted error messages. Both transports' ParseURL use it,
// so a parameter given twice or a bad value is reported the same way on either bus.
func ApplyURLParams[T any](transport string, u *url.URL, q url.Values, params map[string]func(T, string) error, target T) error {
	for k, vs := range q {
		set, ok := params[k]
		if !ok {
			continue
		}
		if len(vs) != 1 {
			return hub.Errorf(hub.InvalidArgument, "%s: URL %s: parameter %s given %d times", transport, u.Redacted(), k, len(vs))
		}
		if err := set(target, vs[0]); err != nil {
			return hub.Errorf(hub.InvalidArgument, "%s: URL %s: parameter %s: %v", transport, u.Redacted(), k, err)
		}
		q.Del(k)
	}
	return nil
}

// ScrubPassword replaces the password of URL raw wherever it occurs in msg (a driver's
// error may quote the DSN), for errors and logs of any transport opened from a URL.
func ScrubPassword(msg, raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return msg
	}
	if p, ok := u.User.Password(); ok && p != "" {
		msg = strings.ReplaceAll(msg, p, "xxxxx")
	}
	return msg
}

// Redact returns rawURL with its password replaced, for logs.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "<unparsable URL>"
	}
	return u.Redacted()
}
