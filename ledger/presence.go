package ledger

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
)

// Presence: taking a dead process's jobs over in seconds, never running one twice at once.
//
// The lease (RescueStuckJobsAfter, lease.go) cannot tell a dead worker from a slow one,
// so it must be long (a minute by default) and a kill -9 leaves the dead process's
// running jobs idle for that long. Presence gives the ledger liveness instead: every
// started Ledger holds a presence that the others can test, under a worker id of its own
// (the River client id, which River writes into a job's attempted_by when it fetches
// it). Every PresenceInterval each started Ledger lists the workers holding running jobs,
// tests their presence and makes the jobs of the provably gone ones available again at
// once (rescue.go). The lease stays as the fallback for everything presence cannot
// prove: a hung worker in a live process, workers of other River clients, platforms
// without the lock below.
//
// What a presence is, per backend:
//
//   - PostgreSQL: a session-level advisory lock on the worker id's key, held by a
//     dedicated connection for the worker's lifetime (presence_postgres.go). The server
//     drops the session, and with it the lock, the moment the process dies (the kernel
//     closes its sockets), so a free lock proves the session is gone. It does not prove
//     the process is gone: the connection may have been cut under a live process. That
//     process notices at its next check (every PresenceInterval/2) or when it has had no
//     successful check for PresenceGrace/2, and fences itself: it stops fetching and
//     cancels its running jobs (River's StopAndCancel), with PresenceGrace/2 for them to
//     end. The others take the jobs only once the lock has stayed free for PresenceGrace,
//     so they never start a job before its old run was cancelled. The fenced Ledger then
//     rejoins under a new worker id with a new lock.
//   - SQLite: one machine by construction, so a lock file per worker next to the
//     database, held with flock(2) for the worker's lifetime (presence_sqlite.go). The
//     kernel releases it when the process dies, and nothing else releases it while the
//     process lives, so a lock that can be taken proves the worker gone: no grace, no
//     fencing. Only where flock exists (Linux, the BSDs, macOS); elsewhere SQLite ledgers
//     use the lease alone.
//
// Why not a heartbeat table: a stale heartbeat only suggests death. A paused process (a
// stopped container, a long GC or swap stall) misses beats and is taken over while it
// still holds running jobs, which then run twice once it resumes. A lock held by a
// paused process stays held. Heartbeats would also cost every process a write per beat,
// which on SQLite competes with the single writer.
//
// A worker id is used by one River client once: a restarted process, and a Ledger that
// rejoins after fencing, take a new one, so jobs recorded under the old id can be proven
// orphaned. Ids start with workerIDPrefix so that jobs held by workers that hold no
// presence (presence turned off, other River clients) are never taken by it.
//
// Limits: a job that ignores its context's cancellation keeps running after its
// process fenced itself (as it keeps running past the lease); the hub's workers honour
// it. On PostgreSQL, a fenced process whose final job updates reach the database only
// after PresenceGrace (River's completer retries them) can still overwrite a newer
// run's state; River's own rescuer has the same window at the lease.

// workerIDPrefix marks the worker ids of Ledgers that hold a presence.
const workerIDPrefix = "hubp1_"

// presence is one worker's held presence.
type presence interface {
	// lost is closed when the presence was lost while held; nil when it cannot be lost
	// while the process lives (SQLite's lock file).
	lost() <-chan struct{}
	// release gives the presence up; the worker's remaining running jobs become
	// provably orphaned. Idempotent.
	release()
}

// presenceBackend holds presences and tests other workers'.
type presenceBackend interface {
	hold(ctx context.Context, id string) (presence, error)
	// gone returns the ids among ids whose presence is provably gone. An id it cannot
	// decide (no lock file, say) is not gone: the lease decides for it.
	gone(ctx context.Context, ids []string) (map[string]bool, error)
	// grace is how long an id must stay gone before its jobs are taken.
	grace() time.Duration
	// forget drops what is left of workers whose jobs were taken (SQLite: their lock
	// files).
	forget(ids []string)
	// collect drops what is left of gone workers that hold no job; keep are the
	// current holders of running jobs and this process's own ids.
	collect(keep map[string]bool)
}

// newWorkerID returns a fresh presence-holding worker id: the prefix, a ULID (unique,
// so never reused by a restart), then host and pid for operators reading attempted_by.
// At most 84 characters (River allows 100) and safe as a file name.
func newWorkerID() string {
	host, _ := os.Hostname()
	host = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			return r
		}
		return '-'
	}, host)
	if len(host) > 40 {
		host = host[:40]
	}
	if host == "" {
		host = "host"
	}
	return fmt.Sprintf("%s%s_%s_%d", workerIDPrefix, ulid.Make(), host, os.Getpid())
}

// isWorkerID reports whether id was made by newWorkerID (and may be tested).
func isWorkerID(id string) bool {
	return strings.HasPrefix(id, workerIDPrefix) && len(id) <= 100 &&
		!strings.ContainsAny(id, "/\\\x00") && !strings.Contains(id, "..")
}

// presenceKey is the PostgreSQL advisory lock key of a worker id. A collision with
// another key makes a dead worker look alive (the lease then decides), never the
// reverse: a free key is free whoever else hashes to it.
func presenceKey(id string) int64 {
	h := fnv.New64a()
	h.Write([]byte("eventhub.ledger.presence\x00"))
	h.Write([]byte(id))
	return int64(h.Sum64())
}
