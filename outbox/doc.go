// Package outbox is the hub's transactional outbox (O1-O4): an event bound for a
// destination is stored as a row (a River job in the shared ledger, ledger) in
// the caller's transaction when there is one, and relay workers deliver each row to its
// destination's hub.Transport.
//
// Why River rather than an outbox table of our own: River already is a table of rows
// claimed with FOR UPDATE SKIP LOCKED by parallel workers, with transactional insert
// (O4), per-kind retry schedules (O3), a terminal discarded state and JobRetry (the
// dead-letter and its resend), and a rescuer for rows of dead workers (O2), on both
// PostgreSQL and SQLite. The outbox adds the row format, the relay's error policy, the
// operations the admin API needs, and a bounded lease (the ledger's sweep).
//
// Delivery is at-least-once; consumers dedupe on the event id. Rows are not ordered.
// See docs/outbox.md for the guarantees, configuration and failure modes.
package outbox
