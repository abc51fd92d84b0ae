// Package dedupe is a durable hub.EventDeduper: the window of accepted (tenant, event
// id) pairs with their content digest (R5's 24 h by default) kept in a small table of
// the ledger's database (the same SQLite file or PostgreSQL database as the outbox and
// the webhook deliveries), so a producer that retries an event after a lost answer, even
// across a restart of the hub, has it stored once, and one that reuses an id for other
// content is refused (the HTTP ingress answers 409).
//
// # Cost and atomicity
//
// Admit costs two indexed statements per batch, whatever its size: a lookup of the
// batch's keys by primary key, and one multi-row upsert that records the new ones; with
// Config.OutboxOnly (every route an outbox route, as in the binary's embedded default)
// only the upsert, the lookup running only when the upsert finds a repeat. When
// the events go to outbox routes, the upsert runs in the transaction that stores the
// outbox rows (WrapOutbox): a failed publish stores no record, a stored record means the
// rows are committed, and of two concurrent requests with one id exactly one commits;
// the other sees its upsert change fewer rows than it claimed, rolls back and is judged
// again (Duplicate or Conflict). Events that reach no outbox route (direct routes,
// in-process subscribers only) are recorded by a statement of their own right after
// publish succeeded: a crash between the two, or two concurrent identical requests,
// can then publish an event twice (at-least-once, as direct delivery always is), never
// record one that was not published.
//
// Expired records are treated as absent at once and deleted by a background prune
// (Config.PruneInterval), in bounded batches so a large backlog never holds the
// database's write lock for long.
package dedupe
