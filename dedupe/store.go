package dedupe

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
)

// maxRaces bounds how often Admit judges a batch again after its transaction found one
// of the ids recorded by a concurrent request; past it the request fails as Unavailable
// (the client retries).
const maxRaces = 3

// Store is the window on the ledger's database. Safe for concurrent use; several Stores
// (processes) may share one table.
type Store struct {
	l       *ledger.Ledger
	backend ledger.Backend
	table   string // qualified
	cfg     Config
	now     func() time.Time

	ctx       context.Context // cancelled by Close: stops the background prune
	cancel    context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

// Open creates the table if needed and starts the background prune. The ledger is the
// caller's: Close does not close it.
func Open(ctx context.Context, l *ledger.Ledger, cfg Config) (*Store, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, hub.Wrap(hub.InvalidArgument, err)
	}
	if l == nil {
		return nil, hub.Errorf(hub.InvalidArgument, "dedupe: nil ledger")
	}
	s := &Store{l: l, backend: l.Backend(), table: cfg.Table, cfg: cfg, now: time.Now, done: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if s.backend == ledger.Postgres && l.Schema() != "" {
		s.table = pgx.Identifier{l.Schema(), cfg.Table}.Sanitize()
	}
	if err := s.migrate(ctx); err != nil {
		s.cancel()
		return nil, err
	}
	if cfg.PruneInterval > 0 {
		go s.pruneLoop()
	} else {
		close(s.done)
	}
	return s, nil
}

// Admit implements hub.EventDeduper: see the package doc for what it costs and
// guarantees.
func (s *Store) Admit(ctx context.Context, keys []hub.EventKey, ttl time.Duration, publish func(ctx context.Context, fresh []int) error) ([]hub.Admission, error) {
	if ttl <= 0 {
		ttl = hub.DefaultIdempotencyTTL
	}
	out := hub.BatchAdmissions(keys)
	for race := 0; ; race++ {
		var pending []int
		for i, a := range out {
			if a == hub.Admitted {
				pending = append(pending, i)
			}
		}
		if len(pending) == 0 {
			return out, nil
		}
		fresh := pending
		if !s.cfg.OutboxOnly || race > 0 {
			recs, err := s.lookup(ctx, keys, pending, s.now())
			if err != nil {
				return out, err
			}
			fresh = judge(keys, pending, recs, out)
			if hub.AnyConflict(out) || len(fresh) == 0 {
				return out, nil
			}
		}
		c := &claim{store: s, keys: keys, fresh: fresh, ttl: ttl, recorded: make([]bool, len(keys))}
		err := publish(withClaim(ctx, c), fresh)
		var lost *raceError
		if errors.As(err, &lost) {
			// A repeat (OutboxOnly, first round) or a race lost to a concurrent request:
			// nothing was stored; judged again with a lookup, the other record committed.
			if race < maxRaces {
				continue
			}
			return out, hub.Errorf(hub.Unavailable, "dedupe: concurrent requests keep claiming the same event ids; retry")
		}
		if err != nil {
			return out, err
		}
		if rest := c.unrecorded(); len(rest) > 0 {
			if _, err := s.upsert(ctx, nil, keys, rest, s.now(), ttl); err != nil {
				// Published already: the request succeeded. A retry of these ids within the
				// window may be published again (at-least-once).
				s.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "dedupe: events published but their ids not recorded",
					slog.Int("count", len(rest)), slog.String("error", err.Error()))
			}
		}
		return out, nil
	}
}

// judge turns the records found into verdicts and returns the keys still fresh.
func judge(keys []hub.EventKey, pending []int, recs []record, out []hub.Admission) []int {
	type tid struct{ tenant, id string }
	found := make(map[tid][]byte, len(recs))
	for _, r := range recs {
		found[tid{r.tenant, r.id}] = r.digest
	}
	var fresh []int
	for _, i := range pending {
		d, ok := found[tid{keys[i].Tenant, keys[i].ID}]
		switch {
		case !ok:
			fresh = append(fresh, i)
		case string(d) == string(keys[i].Digest[:]):
			out[i] = hub.Duplicate
		default:
			out[i] = hub.Conflict
		}
	}
	return fresh
}

// Prune deletes every expired record, in statements of at most PruneBatch rows, and
// returns how many it deleted.
func (s *Store) Prune(ctx context.Context) (int64, error) {
	var total int64
	now := s.now()
	for {
		n, err := s.prune(ctx, now)
		total += n
		if err != nil || n < int64(s.cfg.PruneBatch) {
			return total, err
		}
	}
}

func (s *Store) pruneLoop() {
	defer close(s.done)
	t := time.NewTicker(s.cfg.PruneInterval)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(s.ctx, s.cfg.PruneInterval)
		if n, err := s.Prune(ctx); err != nil && !errors.Is(err, context.Canceled) {
			s.cfg.Logger.Warn("dedupe: prune failed", "error", err, "deleted", n)
		}
		cancel()
	}
}

// Close stops the background prune (a prune in progress is cancelled). Idempotent; the
// ledger stays open.
func (s *Store) Close() error {
	s.closeOnce.Do(s.cancel)
	<-s.done
	return nil
}

var _ hub.EventDeduper = (*Store)(nil)
