// Package auth is the hub's access layer, shared by the ingress and the admin API: it
// turns a request into a Principal (who, which tenant, which event types, which
// scopes), refuses requests that should never reach a handler, limits abuse, and
// records admin actions. Listeners wire it as middleware; every store query behind
// them is then scoped by the principal server-side.
//
// One job per file:
//
//   - principal.go: Principal, scopes, the tenant and event checks, the context accessors.
//   - apikey_format.go, keystore.go, keystore_ops.go, keyverify.go: publisher API keys
//     (ehk_<id>_<secret>), stored as SHA-256 hashes in SQL, verified through a cache
//     whose staleness bound is KeyStoreConfig.CacheTTL.
//   - jwt_config.go, jwt.go, jwt_header.go: bearer JWTs from an identity provider,
//     verified against its JWKS.
//   - admintoken.go: the operator's (and tenant-scoped) admin tokens from env and file.
//   - link.go: signed, expiring, tenant-scoped link tokens (ehl_...) the hub issues.
//   - bearer.go, authenticator.go: the Authorization header and the request →
//     principal step, routed by credential shape.
//   - guard.go: Host allow-list (DNS rebinding), cross-site refusal, write media type.
//   - ratelimit.go, limits.go: token buckets per credential and tenant, a concurrency
//     bound, server header limits.
//   - audit.go, audit_store.go: the audit trail, as slog records and SQL rows.
//   - tls.go: certificate files reloaded without restart.
//   - errors.go, sql.go: the typed errors and WriteError; the shared SQL code.
//
// Errors classify through hub.Code: Unauthenticated (401), PermissionDenied (403),
// ResourceExhausted (429, with Retry-After), InvalidArgument with status 415 for a media
// type; WriteError answers any of them as an RFC 9457 problem document.
//
// # JWT library
//
// JWTs are verified with github.com/golang-jwt/jwt/v5 and the key set is fetched and
// refreshed by github.com/MicahParks/keyfunc/v3 (on github.com/MicahParks/jwkset).
// golang-jwt is the most used JWT package in Go, small, with no dependencies, and has
// the options the hub needs (allowed algorithms, issuer, audience, leeway, required
// exp); keyfunc is the JWKS companion its maintainers point to, adding background
// refresh and a rate-limited refresh on unknown key ids, and brings only jwkset and
// golang.org/x/time (which the rate limiter uses anyway). lestrrat-go/jwx/v3 does all of
// this too, plus JWE and JWK generation the hub does not need, at several times the
// code and a larger module graph. The package adds what neither checks: a pre-parse
// that refuses alg "none", HMAC algorithms and "crit" headers before the library sees a
// token, a bound on the key set response, and no redirects on the fetch.
//
// # Tables
//
// The key store and the audit store keep their tables in the ledger's database (see
// NewKeyStore). docs/security.md has the threat model and every control's default.
package auth
