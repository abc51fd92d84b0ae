package ledger

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/koder/eventhub/hub"
)

// Group commit defaults.
const (
	// DefaultGroupMaxBatch bounds the calls sharing one transaction: a large group
	// holds its rows' locks (and, on SQLite, the only connection) longer, and one
	// failing call makes the others run again.
	DefaultGroupMaxBatch = 64
	// DefaultGroupWindow is 0: a committer takes the calls that queued while the
	// previous transaction committed and waits for no more. Under load that already
	// groups about one commit's worth of requests; at low load nothing waits.
	DefaultGroupWindow = 0
)

// GroupConfig tunes a Group. The zero value is valid.
type GroupConfig struct {
	// Window is how long a committer waits, after the first call of a transaction, for
	// more before it begins; bounded by MaxBatch. Default DefaultGroupWindow.
	Window time.Duration `yaml:"window"`
	// MaxBatch is the most calls in one transaction. Default DefaultGroupMaxBatch.
	MaxBatch int `yaml:"max_batch"`
	// Committers is how many transactions run at once. Default 2 on PostgreSQL (one
	// fills while the other commits), 1 on SQLite (one writer at a time anyway).
	Committers int `yaml:"committers"`
}

// Validate reports every invalid field.
func (c GroupConfig) Validate() error {
	var errs []error
	if c.Window < 0 || c.Window > time.Second {
		errs = append(errs, fmt.Errorf("ledger: group commit Window %s: between 0 and 1s", c.Window))
	}
	if c.MaxBatch < 0 {
		errs = append(errs, fmt.Errorf("ledger: group commit MaxBatch %d: must not be negative", c.MaxBatch))
	}
	if c.Committers < 0 {
		errs = append(errs, fmt.Errorf("ledger: group commit Committers %d: must not be negative", c.Committers))
	}
	return errors.Join(errs...)
}

// Group makes concurrent InTx calls share transactions: a request's rows are written
// in a transaction with the rows of the requests that arrived with it, so N
// single-event requests cost one commit (one fsync) instead of N. Each call still
// returns only once its transaction committed, with that commit's error when it
// failed: a failed commit fails exactly the calls that were in it.
//
// A call whose f fails does not fail the others: the transaction is rolled back and
// run again without it (on PostgreSQL a failed statement aborts the whole
// transaction, and even a clean error leaves the failing call's earlier writes in it),
// and that call alone gets its error. So f must be safe to run more than once, writing
// only through tx: every call's writes are rolled back together.
//
// Safe for concurrent use. Close it before closing the ledger.
type Group struct {
	l     *Ledger
	cfg   GroupConfig
	queue chan *groupCall
	stop  chan struct{}
	wg    sync.WaitGroup

	mu     sync.RWMutex
	closed bool
}

type groupCall struct {
	ctx  context.Context
	f    func(tx any) error
	done chan error
}

// NewGroup starts the committers of a Group on l.
func NewGroup(l *Ledger, cfg GroupConfig) (*Group, error) {
	if err := cfg.Validate(); err != nil {
		return nil, hub.Wrap(hub.InvalidArgument, err)
	}
	if cfg.MaxBatch == 0 {
		cfg.MaxBatch = DefaultGroupMaxBatch
	}
	if cfg.Committers == 0 {
		cfg.Committers = 1
		if l.backend == Postgres {
			cfg.Committers = 2
		}
	}
	g := &Group{l: l, cfg: cfg, queue: make(chan *groupCall, cfg.MaxBatch*cfg.Committers), stop: make(chan struct{})}
	for range cfg.Committers {
		g.wg.Add(1)
		go g.commit()
	}
	return g, nil
}

type groupKey struct{}

// WithGroup returns a context whose InTx calls (on g's ledger) go through g.
func WithGroup(ctx context.Context, g *Group) context.Context {
	if g == nil {
		return ctx
	}
	return context.WithValue(ctx, groupKey{}, g)
}

func groupFrom(ctx context.Context) *Group {
	g, _ := ctx.Value(groupKey{}).(*Group)
	return g
}

// Close stops the committers once the calls already queued ran. Calls made after
// Close run in transactions of their own. Idempotent.
func (g *Group) Close() {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return
	}
	g.closed = true
	g.mu.Unlock()
	close(g.stop)
	g.wg.Wait()
}

// do queues f and waits for its transaction. A call that was queued is always
// answered by a committer, so it waits even when ctx ends meanwhile: its rows may be
// committing.
func (g *Group) do(ctx context.Context, f func(tx any) error) error {
	c := &groupCall{ctx: ctx, f: f, done: make(chan error, 1)}
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		return g.l.inOwnTx(ctx, f)
	}
	select {
	case g.queue <- c:
		g.mu.RUnlock()
	case <-ctx.Done():
		g.mu.RUnlock()
		return ctx.Err()
	}
	return <-c.done
}

// commit is one committer: it takes a batch of queued calls and runs them in one
// transaction, until Close (then it runs what is left in the queue first).
func (g *Group) commit() {
	defer g.wg.Done()
	var window *time.Timer
	for {
		var first *groupCall
		select {
		case first = <-g.queue:
		case <-g.stop:
			for {
				select {
				case c := <-g.queue:
					g.run([]*groupCall{c})
				default:
					return
				}
			}
		}
		batch := []*groupCall{first}
		var expired <-chan time.Time
		if g.cfg.Window > 0 {
			if window == nil {
				window = time.NewTimer(g.cfg.Window)
			} else {
				window.Reset(g.cfg.Window)
			}
			expired = window.C
		}
	collect:
		for len(batch) < g.cfg.MaxBatch {
			if expired == nil {
				select {
				case c := <-g.queue:
					batch = append(batch, c)
				default:
					break collect
				}
				continue
			}
			select {
			case c := <-g.queue:
				batch = append(batch, c)
			case <-expired:
				expired = nil
				break collect
			}
		}
		if expired != nil && !window.Stop() {
			<-window.C
		}
		g.run(batch)
	}
}

// errMember stops a group's transaction when one call's f failed.
var errMember = errors.New("ledger: a call of the group failed")

// run commits batch, running it again without each call whose f fails.
func (g *Group) run(batch []*groupCall) {
	live := batch[:0:0]
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.done <- err // gave up before its transaction began
			continue
		}
		live = append(live, c)
	}
	for len(live) > 0 {
		failed, ferr := -1, error(nil)
		ctx, cancel := context.WithTimeout(context.Background(), groupTxTimeout)
		err := g.l.inOwnTx(ctx, func(tx any) error {
			for i, c := range live {
				if err := callF(c, tx); err != nil {
					failed, ferr = i, err
					return errMember
				}
			}
			return nil
		})
		cancel()
		if failed >= 0 {
			live[failed].done <- ferr
			live = append(live[:failed:failed], live[failed+1:]...)
			continue
		}
		for _, c := range live {
			c.done <- err
		}
		return
	}
}

// groupTxTimeout bounds a group's begin and commit (each call's statements run under
// its own context).
const groupTxTimeout = 30 * time.Second

// callF runs one call's f, turning a panic into that call's error so a committer
// survives it.
func callF(c *groupCall, tx any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = hub.Errorf(hub.Internal, "ledger: group commit: panic in a call: %v", r)
		}
	}()
	return c.f(tx)
}
