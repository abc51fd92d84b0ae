package ledger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/koder/eventhub/hub"
)

// pgPresence is presence on PostgreSQL: a session advisory lock per worker, held on a
// connection of its own (not the pool's, which recycles connections and must never
// carry a session lock back to other users). See presence.go for the protocol.
type pgPresence struct {
	pool       *pgxpool.Pool
	check      time.Duration // period of the own-presence check
	fenceAfter time.Duration // no successful check for this long: presence lost
	graceDur   time.Duration
	leaderKey  int64 // the schema's singleton lock, see Ledger.Leader
	log        *slog.Logger
}

func newPGPresence(pool *pgxpool.Pool, cfg Config) *pgPresence {
	return &pgPresence{
		pool: pool, check: cfg.PresenceInterval / 2, fenceAfter: cfg.PresenceGrace / 2,
		graceDur: cfg.PresenceGrace, leaderKey: leaderKey(cfg.Schema), log: cfg.Logger,
	}
}

func (b *pgPresence) grace() time.Duration { return b.graceDur }
func (b *pgPresence) forget([]string)      {}
func (b *pgPresence) collect(map[string]bool) {
	// Nothing outlives a session.
}

// hold connects, takes the worker's lock and watches the connection.
func (b *pgPresence) hold(ctx context.Context, id string) (presence, error) {
	cc := b.pool.Config().ConnConfig.Copy()
	cc.RuntimeParams["application_name"] = "eventhub-ledger-presence"
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, hub.Errorf(hub.Unavailable, "ledger: presence connection: %w", err)
	}
	started := time.Now()
	var ok bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", presenceKey(id)).Scan(&ok); err != nil {
		conn.Close(context.Background())
		return nil, hub.Errorf(hub.Unavailable, "ledger: presence lock: %w", err)
	}
	if !ok { // another session holds this key: a hash collision, or a reused id
		conn.Close(context.Background())
		return nil, hub.Errorf(hub.AlreadyExists, "ledger: presence lock of worker %s is held by another session", id)
	}
	h := &pgHeld{conn: conn, id: id, lostCh: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	h.tryLead(ctx, b)
	go h.watch(b, started)
	return h, nil
}

// pgHeld is one held lock and the goroutine checking its connection.
type pgHeld struct {
	conn   *pgx.Conn // used by watch only, then closed by release
	id     string
	lostCh chan struct{}
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	leader atomic.Bool // holds the schema's singleton lock on conn
}

func (h *pgHeld) lost() <-chan struct{} { return h.lostCh }

func (h *pgHeld) leads() bool { return h.leader.Load() }

// tryLead takes the schema's singleton lock on the presence connection when no other
// session holds it. The lock lives as long as the session, so a replica that dies or
// loses its connection hands it to the next one that tries (each check period).
func (h *pgHeld) tryLead(ctx context.Context, b *pgPresence) {
	if h.leader.Load() {
		return
	}
	var ok bool
	if err := h.conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", b.leaderKey).Scan(&ok); err == nil && ok {
		h.leader.Store(true)
		b.log.Info("ledger: singleton work and shared-state metrics run here", slog.String("worker", h.id))
	}
}

// watch pings the lock's connection every check period. Any failure, or no success
// for fenceAfter, means the session (and the lock) may be gone: the presence is lost
// and the Ledger fences itself, PresenceGrace/2 before anyone may take its jobs. A
// ping's deadline is the fence deadline, so a hung server cannot delay the verdict.
func (h *pgHeld) watch(b *pgPresence, lastOK time.Time) {
	defer close(h.done)
	t := time.NewTicker(b.check)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		start := time.Now()
		ctx, cancel := context.WithDeadline(context.Background(), lastOK.Add(b.fenceAfter))
		err := h.conn.Ping(ctx)
		cancel()
		select {
		case <-h.stop: // released meanwhile: not a loss
			return
		default:
		}
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("no successful check for %s", b.fenceAfter)
			}
			b.log.Warn("ledger: presence lost", slog.String("worker", h.id), slog.String("error", err.Error()))
			h.leader.Store(false)
			close(h.lostCh)
			return
		}
		lastOK = start
		ctx, cancel = context.WithDeadline(context.Background(), lastOK.Add(b.fenceAfter))
		h.tryLead(ctx, b)
		cancel()
	}
}

// release stops the watch and closes the connection: the server drops the lock.
func (h *pgHeld) release() {
	h.once.Do(func() {
		close(h.stop)
		<-h.done
		h.leader.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = h.conn.Close(ctx)
	})
}

// pid is the server process of the lock's session (tests cut exactly that one).
func (h *pgHeld) pid() uint32 { return h.conn.PgConn().PID() }

// presenceLocksSQL returns the keys among $1 that no session holds in this database. A
// bigint advisory lock shows in pg_locks as classid = high 32 bits, objid = low 32
// bits, objsubid = 1. Reading pg_locks takes no lock, so testing never disturbs a live
// worker, and it needs no privilege.
const presenceLocksSQL = `
SELECT k FROM unnest($1::bigint[]) AS k
WHERE NOT EXISTS (
	SELECT 1 FROM pg_locks l
	WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
		AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND l.classid = ((k >> 32) & 4294967295)::oid
		AND l.objid = (k & 4294967295)::oid
)`

func (b *pgPresence) gone(ctx context.Context, ids []string) (map[string]bool, error) {
	keys := make([]int64, len(ids))
	byKey := make(map[int64]string, len(ids))
	for i, id := range ids {
		keys[i] = presenceKey(id)
		byKey[keys[i]] = id
	}
	rows, err := b.pool.Query(ctx, presenceLocksSQL, keys)
	if err != nil {
		return nil, fmt.Errorf("presence locks: %w", err)
	}
	free, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("presence locks: %w", err)
	}
	out := make(map[string]bool, len(free))
	for _, k := range free {
		out[byKey[k]] = true
	}
	return out, nil
}

var _ presenceBackend = (*pgPresence)(nil)
