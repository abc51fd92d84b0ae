package app_test

import (
	"strings"
	"testing"
)

// TestSEC_LintAccessSections pins where the access settings' problems are reported:
// the ingress's credentials, limits, guard names and TLS, the admin API's, and the auth
// and secrets sections, each at its key.
func TestSEC_LintAccessSections(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		yaml string
		want []string
	}{
		{"NonLoopbackIngressWithoutAuth",
			"sources:\n  in:\n    type: http\n    listen: 0.0.0.0:8080\n",
			[]string{`hub.yaml:3:5: sources.in.auth: an ingress on 0.0.0.0:8080 (not loopback) needs credentials`}},
		{"IngressAuthModes",
			"sources:\n  in:\n    type: http\n    auth: [api_key, jwt, oauth, jwt]\n",
			[]string{
				`sources.in.auth[0]: API keys live in the store`,
				`sources.in.auth[1]: jwt needs the auth.jwt section`,
				`sources.in.auth[2]: unknown credential "oauth" (api_key, jwt)`,
				`sources.in.auth[3]: "jwt" listed twice`,
			}},
		{"IngressLimitsAndGuard",
			"store: {sqlite: x.db}\nsources:\n  in:\n    type: http\n    auth: api_key\n    rate_limit: {per_key: 10}\n    max_concurrent: -1\n    hosts: ['a b']\n    origins: [ftp://x]\n    tls: {cert_file: c.pem}\n",
			[]string{
				`sources.in.rate_limit: auth: RateLimitConfig.KeyBurst`,
				`sources.in.max_concurrent: must not be negative`,
				`sources.in.hosts:`,
				`sources.in.origins:`,
				`sources.in.tls.key_file: required with cert_file`,
			}},
		{"Admin",
			"admin:\n  listen: 0.0.0.0:8081\n  token: ehk_looks_like_a_key\n  max_concurrent: -2\n  hosts: ['bad host']\n  tls: {key_file: k.pem, reload_interval: -1s}\n",
			[]string{
				`admin.token: auth: token 1 of the environment: admin token must not look like an API key`,
				`admin.max_concurrent: must not be negative`,
				`admin.hosts:`,
				`admin.tls.cert_file: required with key_file`,
				`admin.tls.reload_interval: must not be negative`,
			}},
		{"AuthSection",
			"auth:\n  api_keys: {cache_size: -1}\n  jwt: {jwks_url: http://idp.example.com/jwks, audience: hub}\n  audit: {retention: -1h}\n  links: {ttl: 1000h}\n",
			[]string{
				`auth.api_keys.cache_size: auth: KeyStoreConfig.CacheSize -1`,
				`auth.jwt.jwks_url: auth: JWTConfig.JWKSURL: http is allowed to loopback addresses only`,
				`auth.audit.retention: must not be negative`,
				`auth.links.ttl: between 0 and 720h0m0s`,
			}},
		{"SecretsSection",
			"secrets:\n  create_key_file: true\n",
			[]string{`hub.yaml:2:20: secrets.create_key_file: needs secrets.key_file`}},
		{"GoodAccess",
			"store: {sqlite: x.db}\nauth:\n  jwt: {jwks_url: https://idp.example.com/jwks, issuer: https://idp.example.com/, audience: hub}\nsources:\n  in:\n    type: http\n    listen: ':8080'\n    auth: [api_key, jwt]\n    rate_limit: {per_key: 10, key_burst: 100}\n",
			nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ps := lint(t, c.yaml, nil)
			if len(ps) != len(c.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(ps), len(c.want), ps)
			}
			for i, p := range ps {
				if !strings.Contains(p.String(), c.want[i]) {
					t.Errorf("problem %d:\n got  %s\n want %s", i, p, c.want[i])
				}
			}
		})
	}
}
