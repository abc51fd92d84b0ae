package webhook

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/riverqueue/river"

	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/internal/schemaver"
	"github.com/koder/eventhub/ledger"
)

// Transport delivers events to registered HTTP endpoints (H1-H6). Send fans each event
// out to one durable delivery job per matching endpoint in the ledger; the ledger's
// workers (in this process unless Config.NoWork, and in every other process on the
// same database) sign and POST them, retry on the schedule, defer them while the
// endpoint's breaker is open, and leave them dead after the last attempt for resend.
//
// It is safe for concurrent use. It owns its HTTP client; the ledger belongs to the
// caller, who starts it after New (workers and queue are registered by New) and
// closes it after Close.
type Transport struct {
	cfg    Config
	l      *ledger.Ledger
	st     store
	guard  *guard
	client *clients
	policy retryPolicy
	br     *breakers
	m      *metrics
	log    *slog.Logger

	epMu    sync.Mutex
	epCache map[string]cachedEndpoint
	epReads singleflight.Group // cold reads of an endpoint (readOnce)

	// retryAfter carries a receiver's Retry-After from Work to NextRetry, which River
	// calls right after Work returns, in the same process, for the same job.
	retryAfter sync.Map // job id -> time.Duration

	// delivered holds the ordered deliveries this process delivered recently, so their
	// successors need not wait for River's completer to record it (ordering.go).
	delivered recentSet

	// slots holds the in-flight caps' semaphores (inflight.go).
	slots slotTable

	// delivCount caches the count of delivered deliveries (counts.go).
	delivCount deliveredCount

	// inline attempts claimed deliveries' first attempts in process (inline.go); nil
	// when this process does not.
	inline *inliner
	// backlogBytes is the encoded size of the deliveries in the inliner's backlog
	// (inline.go), changed under its lock and read without it by its eligible and by
	// the metrics, which are made before the inliner.
	backlogBytes atomic.Int64

	closed atomic.Bool
}

type cachedEndpoint struct {
	ep        *Endpoint
	at        time.Time
	refreshAt time.Time
}

// deliveryKind is the ledger job kind of a delivery.
const deliveryKind = "webhook_delivery"

// deliveryArgs is one delivery: unique by (endpoint, event) in every state (H1, through
// webhook_delivery_keys: unique.go), so a re-sent event finds its delivery and adds
// none. It carries the request as encoded once at fan-out (CloudEvents HTTP binding
// headers and body): every attempt sends the same bytes, workers do not re-encode, and
// an event fanned out to ten endpoints is encoded once. Body is []byte (base64 in the job's JSON) because a binary-mode body
// may be any bytes, and PostgreSQL's jsonb would re-format a nested JSON object.
type deliveryArgs struct {
	EndpointID string `json:"endpoint_id"`
	EventID    string `json:"event_id"`
	EventType  string `json:"event_type"`
	// TenantID is the endpoint's tenant at fan-out ("" for an endpoint of every
	// tenant): whose delivery this is, for tenant-scoped listings (tenant.go).
	TenantID string            `json:"tenant_id,omitempty"`
	Header   map[string]string `json:"header"`
	Body     []byte            `json:"body"`
	// OrderKey is "=<key>" for a delivery to an ordered endpoint, absent otherwise
	// (ordering.go; the ledger indexes it).
	OrderKey string `json:"order_key,omitempty"`
}

func (deliveryArgs) Kind() string { return deliveryKind }

// MigrateSchema creates the transport's tables, trigger and indexes on l's database,
// or brings them to this version, and starts nothing. New runs the same DDL, and none
// once this version's is recorded (ledger.ApplySchema): run MigrateSchema as the
// tables' owner (`hub migrate schema`) and New as a role that may only read and write
// rows. It is a migration run: indexes on a large river_job are built before it
// returns, and one this role may not build, or whose build fails, fails it.
func MigrateSchema(ctx context.Context, l *ledger.Ledger) error {
	if migrating, _ := schemaver.Migration(ctx); !migrating {
		ctx = schemaver.AsMigration(ctx, false) // `hub migrate schema` may have marked it forced
	}
	t := &Transport{l: l, st: store{db: l.DB()}}
	return t.migrate(ctx)
}

// migrate runs the transport's DDL: its tables, then its indexes on River's table
// (river_job may be large when an upgrade adds one: built without holding the writers
// of the replicas already running, ledger.EnsureIndexes).
func (t *Transport) migrate(ctx context.Context) error {
	if err := t.st.migrate(ctx, t.l); err != nil {
		return err
	}
	return t.l.EnsureIndexes(ctx, t.orderIndex(), t.waitingIndex()) // classified, naming the index
}

// New builds the transport on l: it creates its tables (idempotent), registers the
// delivery worker and, unless cfg.NoWork, the delivery queue. Start the ledger after.
// One Transport per Ledger: the worker kind is registered once.
func New(ctx context.Context, cfg Config, l *ledger.Ledger) (*Transport, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, hub.Wrap(hub.InvalidArgument, err)
	}
	if l == nil {
		return nil, hub.Errorf(hub.InvalidArgument, "webhook: nil ledger")
	}
	lc := l.Config()
	if jt := cfg.jobTimeout(); jt >= lc.RescueStuckJobsAfter {
		return nil, hub.Errorf(hub.InvalidArgument,
			"webhook: AttemptTimeout %s: a delivery job may run %s, which must stay below the ledger's RescueStuckJobsAfter %s, or live deliveries would be rescued and sent twice",
			cfg.AttemptTimeout, jt, lc.RescueStuckJobsAfter)
	}
	if d := cfg.DeliveredRetention; d > 0 {
		if lc.CompletedRetention > 0 && d > lc.CompletedRetention {
			return nil, hub.Errorf(hub.InvalidArgument, "webhook: DeliveredRetention %s: at most the ledger's completed_retention %s, which removes delivered jobs first", d, lc.CompletedRetention)
		}
		if err := l.RetainCompleted(cfg.Queue, d); err != nil {
			return nil, hub.Wrap(hub.InvalidArgument, err)
		}
	}
	g, _ := newGuard(cfg.Allow, cfg.Resolver)
	t := &Transport{
		cfg:     cfg,
		l:       l,
		st:      store{db: l.DB(), ring: cfg.Keyring},
		guard:   g,
		client:  &clients{g: g, maxConnsPerHost: cfg.MaxConnsPerHost, proxy: cfg.proxyURL(), direct: newHTTPClient(g, cfg.MaxConnsPerHost, cfg.proxyURL())},
		policy:  retryPolicy{schedule: cfg.RetrySchedule, jitter: cfg.Jitter, maxRetryAfter: cfg.MaxRetryAfter},
		log:     cfg.Logger.With("transport", cfg.Name),
		epCache: map[string]cachedEndpoint{},
	}
	t.br = &breakers{
		db: l.DB(), threshold: cfg.BreakerThreshold, pause: cfg.BreakerPause,
		lease: cfg.jobTimeout(), ttl: cfg.CacheTTL, cache: map[string]cachedBreaker{},
	}
	if err := t.migrate(ctx); err != nil {
		return nil, err
	}
	m, err := newMetrics(cfg.Registerer, cfg.Name, t.br, l.Leader, &t.backlogBytes)
	if err != nil {
		return nil, err
	}
	t.m = m
	t.br.onChange = func(id string, to BreakerState) {
		t.m.transitions.WithLabelValues(string(to)).Inc()
		t.log.Info("webhook: breaker", "endpoint", id, "state", to)
		t.recordTransition(id, to) // history.go
	}
	if err := river.AddWorkerSafely(l.Workers(), river.Worker[deliveryArgs](&worker{t: t})); err != nil {
		return nil, hub.Errorf(hub.AlreadyExists, "webhook: %v (one Transport per ledger)", err)
	}
	if !cfg.NoWork {
		if err := l.AddQueue(cfg.Queue, cfg.Workers); err != nil {
			return nil, err
		}
	}
	t.inline = newInliner(t)
	return t, nil
}

// jobTimeout limits one delivery job: the request plus the endpoint and breaker reads
// and writes around it (a margin of AttemptTimeout, at least 1 s, at most 10 s).
func (c Config) jobTimeout() time.Duration {
	return c.AttemptTimeout + min(10*time.Second, max(time.Second, c.AttemptTimeout))
}

// Name labels metrics and logs.
func (t *Transport) Name() string { return t.cfg.Name }

// Send fans each event out to every enabled endpoint whose patterns and tenant filter
// match it, as one delivery job per (endpoint, event), all inserted in one ledger
// transaction (H1). It returns once they are durable. Re-sending an event adds no
// delivery for an endpoint that already has one, whatever that delivery's state.
//
// Matching happens here (H6), against the endpoints enabled now that were registered
// no later than the event was accepted for delivery: the time in the context
// (hub.AcceptedAtFrom, set by the hub's direct routes and by the outbox relay from the
// row's creation), or now when the context has none (a Send by library code). So an
// endpoint registered while an event waited in a queue or an outbox does not receive
// it. The event's own time plays no part, so replays and imports of old events reach
// today's endpoints; an event published again after a new endpoint appeared reaches
// that endpoint too (it was accepted after the registration), while the endpoints that
// had it get nothing new.
//
// Both times are compared at the ledger's millisecond precision (ledger.Truncate): the
// outbox's acceptance time is a stored job creation time, which SQLite keeps only to the
// millisecond. An endpoint registered in the millisecond the event was accepted
// receives it: registration counts from the start of its millisecond, so "register,
// then publish" always reaches the new endpoint, on both stores.
func (t *Transport) Send(ctx context.Context, batch []*cloudevent.Event) error {
	if t.closed.Load() {
		return hub.Errorf(hub.FailedPrecondition, "webhook: send after Close")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(batch) == 0 {
		return nil
	}
	eps, err := t.st.listEndpoints(ctx, endpointQuery{enabledOnly: true})
	if err != nil {
		return err
	}
	// With a capped endpoint among eps the fan-out runs in the insert's transaction: the
	// cap is counted under the lock that holds other fan-outs to the endpoint back until
	// this one commits (fanout.go). Without, nothing is counted and a batch matching no
	// endpoint opens no transaction.
	var (
		params  []river.InsertManyParams
		refused map[string]int
	)
	capped := slices.ContainsFunc(eps, func(ep *Endpoint) bool { return t.queuedCap(ep) > 0 })
	if !capped {
		if params, refused, err = t.fanOut(ctx, nil, eps, batch); err != nil || len(params) == 0 {
			return err
		}
	}
	err = t.l.InTx(ctx, func(tx any) error {
		if capped {
			var err error
			if params, refused, err = t.fanOut(ctx, tx, eps, batch); err != nil || len(params) == 0 {
				return err
			}
		}
		return t.insertDeliveries(ctx, tx, params)
	})
	if err != nil {
		return insertErr(err)
	}
	return overQueued(refused)
}

// fanOut returns one delivery job per (endpoint, event) of batch whose endpoint is
// among eps, matches the event, and was registered no later than the event was
// accepted (H6, see Send), and, per endpoint at its cap of queued deliveries, how many
// it refused. It counts the queued deliveries of the capped endpoints the batch
// matches in tx (the transaction the jobs are inserted in), after locking them there.
// Send and SendTx share it.
func (t *Transport) fanOut(ctx context.Context, tx any, eps []*Endpoint, batch []*cloudevent.Event) ([]river.InsertManyParams, map[string]int, error) {
	// First the matches of every event (ends[i] closes event i's run in matched), so
	// that only the capped endpoints the batch reaches are locked and counted.
	var (
		matched []*Endpoint
		ends    = make([]int, len(batch))
		capped  []*Endpoint
		seen    map[*Endpoint]bool // capped's members
	)
	for i, ev := range batch {
		if ev == nil {
			return nil, nil, hub.Errorf(hub.InvalidArgument, "webhook: nil event in batch")
		}
		accepted, known := hub.AcceptedAtFrom(ctx, ev.ID)
		accepted = ledger.Truncate(accepted)
		from := len(matched)
		for _, ep := range eps {
			if known && ledger.Truncate(ep.CreatedAt).After(accepted) {
				continue // registered after the event was accepted (H6)
			}
			if ep.matches(ev) {
				matched = append(matched, ep)
				if t.queuedCap(ep) > 0 && !seen[ep] {
					if seen == nil {
						seen = map[*Endpoint]bool{}
					}
					seen[ep] = true
					capped = append(capped, ep)
				}
			}
		}
		if err := t.endpointsCap(ev.TenantID(), len(matched)-from); err != nil {
			return nil, nil, err // before any insert: the whole batch is the caller's again
		}
		ends[i] = len(matched)
	}
	room, take, err := t.room(ctx, tx, capped)
	if err != nil {
		return nil, nil, err
	}
	var (
		params  []river.InsertManyParams
		refused map[string]int
		from    int
	)
	for i, ev := range batch {
		var (
			header map[string]string
			body   []byte
			err    error
		)
		for _, ep := range matched[from:ends[i]] {
			if r, capped := room[ep.ID]; capped {
				if r == 0 {
					if refused == nil {
						refused = map[string]int{}
					}
					refused[ep.ID]++
					continue
				}
				room[ep.ID] = r - 1
			}
			if body == nil {
				if header, body, err = t.encode(ev); err != nil {
					return nil, nil, err
				}
			}
			params = append(params, river.InsertManyParams{
				Args: deliveryArgs{EndpointID: ep.ID, EventID: ev.ID, EventType: ev.Type, TenantID: ep.TenantID, Header: header, Body: body,
					OrderKey: orderKeyOf(ep, ev)},
				InsertOpts: &river.InsertOpts{
					Queue:       t.cfg.Queue,
					MaxAttempts: t.policy.maxAttempts(),
					Tags:        deliveryTags(ep),
				},
			})
		}
		from = ends[i]
	}
	if take != nil {
		if err := take(room); err != nil {
			return nil, nil, err
		}
	}
	return params, refused, nil
}

// insertErr classifies a failed insert of deliveries: a classified error as is, any
// other as Unavailable (the database did not take them).
func insertErr(err error) error {
	if hub.Code(err) != hub.Unknown {
		return err
	}
	return hub.Errorf(hub.Unavailable, "webhook: insert deliveries: %w", err)
}

// encode lays ev out in the configured CloudEvents HTTP binding mode.
func (t *Transport) encode(ev *cloudevent.Event) (map[string]string, []byte, error) {
	mode := cloudevent.HTTPStructured
	if t.cfg.Mode == ModeBinary {
		mode = cloudevent.HTTPBinary
	}
	h, body, err := cloudevent.ToHTTP(ev, mode)
	if err != nil {
		return nil, nil, hub.Wrap(hub.InvalidArgument, err)
	}
	flat := make(map[string]string, len(h))
	for k, v := range h {
		if len(v) > 0 {
			flat[k] = v[0]
		}
	}
	if body == nil {
		body = []byte{}
	}
	return flat, body, nil
}

// Close stops accepting Sends and drops idle connections. It does not stop or close
// the ledger (the caller's); deliveries in flight finish under the ledger's Stop.
// Idempotent.
func (t *Transport) Close() error {
	if t.closed.Swap(true) {
		return nil
	}
	t.inline.close() // first attempts in process finish, their outcomes written
	t.client.closeIdle()
	return nil
}

// Health reports whether the ledger database answers.
func (t *Transport) Health(ctx context.Context) error {
	return dbErr("health", t.st.db.PingContext(ctx))
}

var (
	_ hub.Transport     = (*Transport)(nil)
	_ hub.Named         = (*Transport)(nil)
	_ hub.HealthChecker = (*Transport)(nil)
)
