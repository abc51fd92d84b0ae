// Package webhook is the hub's webhook transport (H1-H6): registered HTTP endpoints
// receive signed CloudEvents, delivered durably through the River ledger
// (ledger) on PostgreSQL or SQLite.
//
// # Sending
//
// Transport.Send is a hub.Transport: it matches each event against the endpoints
// enabled at that moment (hub pattern syntax, optional tenant filter; an endpoint
// registered later does not get it: H6) and inserts one ledger job per (endpoint,
// event), unique in every job state while it is kept, so a re-sent event never adds a
// delivery (H1; the keys are a table of their own in event-id order, unique.go). The
// ledger's workers, in any process on the same database, then POST each one.
//
// # Requests
//
// The body and headers follow the CloudEvents HTTP binding (structured by default,
// binary as an option), encoded once at fan-out. Each request carries the event id in
// Webhook-Id (the receiver's idempotency key), the delivery id in Eventhub-Delivery and
// the signature in Eventhub-Signature:
//
//	t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>[,v1=...]
//
// over the exact body bytes, one v1 per active secret while a rotation's grace period
// runs (H2). With Config.StandardWebhooks the Standard Webhooks headers are added too.
// Receivers verify with Verify or the NewReceiver handler.
//
// # Failures
//
// Failed attempts are retried after 1 min, 5 min, 30 min, 2 h and 12 h (±20 % jitter,
// a receiver's Retry-After on 429/503 honoured up to a cap); redirects are not followed;
// 410 disables the endpoint. After the last attempt a delivery is dead, keeping its last
// status, a response excerpt and the error, and can be resent alone or in bulk. A
// per-endpoint circuit breaker kept in the database defers deliveries without spending
// attempts while the endpoint is down (H3).
//
// # SSRF
//
// Only http and https, no credentials in URLs, no environment proxy (an explicit CONNECT
// proxy, Config.Proxy or Controls.Proxy, is allowed: the checks run before the
// CONNECT), no redirects; every address a host resolves to must be public, checked at
// registration and again in the dialer for the address actually dialled, which closes
// the DNS-rebinding window (H4, H5).
// Config.Allow opens explicit holes for private deployments.
//
// See docs/webhook.md for the tables (retry, responses, blocked ranges) and the
// trade-offs.
package webhook
