package webhook

import (
	"encoding/json"
	"testing"
)

// FuzzControls: any controls document (the admin API's body, a stored column) either
// compiles or is refused with an error; never a panic. Proxy URLs and header names
// are parsed here.
func FuzzControls(f *testing.F) {
	for _, s := range []string{
		`{"filter":"data.plan = 'pro'","headers":{"X-A":"b"}}`,
		`{"signature":{"scheme":"stripe","header":"X-Sig"},"rate_limit":{"rps":0.5,"burst":3}}`,
		`{"ordering":{"enabled":true,"key":"actor","on_dead":"skip"},"max_queued":10}`,
		`{"proxy":"http://u:p@proxy:3128"}`, `{"proxy":"http://[::1"}`, `{"headers":{"":"x","ce-x":"y"}}`,
		`{"tls":{"ca":"-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----","min_version":"1.3"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var c Controls
		if json.Unmarshal(b, &c) != nil {
			return
		}
		if _, err := c.compile(); err == nil {
			_ = c.view()
		}
	})
}
