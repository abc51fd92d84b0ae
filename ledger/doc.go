// Package ledger is the durable delivery ledger shared by the webhook transport and the
// transactional outbox: River (github.com/riverqueue/river) on PostgreSQL through
// riverpgxv5, or on an embedded SQLite file through riversqlite on modernc.org/sqlite
// (pure Go, no cgo).
//
// # Why one package
//
// Webhook deliveries and outbox rows are both River jobs. River's client is generic over
// the driver's transaction type (pgx.Tx or *sql.Tx), which would leak into every caller;
// a Ledger hides it: it keeps one client per transaction type and switches on Backend.
// Callers register workers and queues, Start once, and insert through the helpers here.
//
// # Lifecycle
//
//	l, err := ledger.Open(ctx, ledger.Config{DSN: "postgres://..."}) // opens, migrates
//	river.AddWorker(l.Workers(), myWorker)                            // register kinds
//	l.AddQueue("outbox", 100)                                          // and queues
//	err = l.Start(ctx)                                                 // one River client works them
//	...
//	err = l.Stop(ctx)                                                  // drain running jobs
//	err = l.Close()                                                    // release the database
//
// A Ledger that is never started still inserts (River's insert-only client), so a
// process that only publishes (PublishTx) and leaves relaying to others needs nothing
// more than Open.
//
// # Transactions
//
// InsertTx, InsertManyTx and InsertManyFastTx take the caller's transaction as `any`:
//   - PostgreSQL: a pgx.Tx (riverpgxv5) or a *sql.Tx (an insert-only riverdatabasesql
//     client: River's client is generic over one transaction type, so a single client
//     cannot take both). The *sql.Tx may come from any database/sql pool on the same
//     database (pgx stdlib, lib/pq); DB() returns one built on the ledger's own pool.
//   - SQLite: a *sql.Tx that must come from DB(). The database has a single connection
//     (see below): a caller holding a transaction must not call a non-Tx method of the
//     ledger until it commits or rolls back, or it waits for itself.
//
// Anything else is a hub.InvalidArgument error.
//
// # Snooze, cancel, retry from workers
//
// Workers are plain River workers (river.Worker[T]). A worker defers a job without
// spending an attempt by returning river.JobSnooze(d) (the webhook breaker does this);
// it ends a job at once with river.JobCancel(err) (state cancelled, err recorded); a
// per-kind retry schedule is the worker's NextRetry method; any other error is retried
// until the job's max attempts, then the job is discarded (dead). JobRetry resends a
// discarded or cancelled job (River bumps max_attempts when they are exhausted).
//
// # Tuning (the defaults are not River's)
//
// River's defaults favour a light database load over throughput: FetchCooldown 100 ms
// caps each queue at ~10 fetches/s (measured here ~1k jobs/s); with FetchCooldown 5 ms
// and many workers River on PostgreSQL worked ~24k jobs/s, SQLite ~2.5k/s. A fetch is
// one indexed `FOR UPDATE SKIP LOCKED` query, so 200 fetches/s per queue per process is
// cheap next to the jobs they carry. See DefaultFetchCooldown and its neighbours for
// each choice and its cost.
//
// The lease (O2): River's own rescuer runs every 30 s on the elected leader only and its
// interval is not configurable, so a job held by a killed process could wait up to
// RescueStuckJobsAfter + 30 s + a leader election. Each started Ledger therefore also
// sweeps stuck jobs every RescueInterval with River's own driver queries (JobGetStuck,
// JobRescueMany, guarded by state and attempted_at so concurrent sweeps are harmless),
// making them available at once: the bound is RescueStuckJobsAfter + RescueInterval.
// River's rescuer is configured with twice the lease plus RescueInterval so it stays a
// backstop: it would discard stuck jobs whose kind the leader has no worker for.
//
// # Presence: a dead worker's jobs in seconds
//
// The lease cannot tell a dead worker from a slow one, so it is long. Each started
// Ledger therefore also holds a presence under a worker id of its own (WorkerID; new at
// every Start): a session advisory lock on a dedicated connection on PostgreSQL, an
// flock'd file beside the database on SQLite. Every PresenceInterval (1 s) it takes over
// the running jobs of workers whose presence is provably gone, at once on SQLite and
// after PresenceGrace (3 s) on PostgreSQL, where a live process can lose its lock
// session: such a process notices within PresenceGrace/2, cancels its running jobs
// (fencing) and rejoins under a new worker id, so no job runs twice at once. A process
// killed with kill -9 is thus taken over in about 1 s (SQLite) or 4 s (PostgreSQL)
// instead of the lease; the lease stays as the fallback. presence.go has the protocol
// and its limits; PresenceInterval -1 turns it off.
//
// # Tables and indexes of other packages
//
// Packages keep tables of their own beside River's (ApplySchema: DDL under an
// advisory lock, so replicas starting together do not trip over IF NOT EXISTS, and
// recorded with a digest, so that a process finding its version recorded runs none
// and can run as a role without DDL privileges; CreateTables without the record) and
// indexes on River's river_job (EnsureIndexes). river_job can hold millions of rows
// when an upgrade adds an index to it: EnsureIndexes builds one there with CREATE INDEX
// CONCURRENTLY in the background, once across replicas, so the replicas already running
// keep writing and the starting one does not wait, and runs no DDL when the index
// exists. Close cancels a build still running; the next start finishes it. On upgrade the ledger also drops River's two GIN
// indexes, which nothing reads and every job's write pays for (open.go).
//
// # Time precision
//
// Every time the ledger stores or compares (job creation, acceptance times, time-range
// bounds) is cut to TimePrecision, one millisecond, SQLite's, by Truncate; jobs inserted
// through the ledger are stamped with the inserting process's clock at that precision
// on both stores. A range [Since, Until) includes what was created in Since's
// millisecond and excludes what was created in Until's.
//
// # SQLite
//
// riversqlite documents that River's parallel internal operations meet SQLITE_BUSY
// unless the pool has one connection, so DB() has MaxOpenConns(1); the file is in WAL
// mode with a busy timeout (other processes opening the same file wait instead of
// failing) and transactions begin IMMEDIATE (a read transaction never has to upgrade
// to a write lock, the classic source of BUSY under WAL). Throughput is bounded by the
// single writer; it is meant for single-node use. Four things shorten the writer's
// time per job where riversqlite spends it: the connection keeps its prepared
// statements (sqlite_stmts.go), an insert made through InTx wakes this process's
// producers at its commit (sqlite_wake.go), completed jobs are finished by one batched
// UPDATE per completer batch instead of one statement each (sqlite_complete.go), and a
// job the inserting process works itself is inserted claimed, so River never fetches
// it (claimed.go), as on PostgreSQL.
package ledger
