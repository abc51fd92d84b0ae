package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/koder/eventhub/cmd/hub/internal/ops"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/rabbitmq"
)

// dlqOps is one DLQ's operations as the routes call them, built from the library type
// the module hands over (ops.DLQ). Results are the libraries' own values, encoded as
// they are.
type dlqOps struct {
	list      func(ctx context.Context, after string, limit int) (any, error) // after: keyset cursor ("" first)
	get       func(ctx context.Context, id string) (any, error)
	replay    func(ctx context.Context, ids []string) (int, error)
	replayAll func(ctx context.Context) (int, error)
	purge     func(ctx context.Context, ids []string) (int, error) // no ids: every entry
}

// dlqPage is GET /dlq/{name} of a dead-letter stream; its fields are in name order,
// the order this JSON has always had.
type dlqPage[E any] struct {
	Entries []E    `json:"entries"`
	Stream  string `json:"stream"`
	Total   int64  `json:"total"`
}

// streamDLQ serves a redisstream or kdbstream dead-letter stream.
func streamDLQ[E any](d streams.DLQ[E]) dlqOps {
	return dlqOps{
		list: func(ctx context.Context, after string, limit int) (any, error) {
			n, err := d.Len(ctx)
			if err != nil {
				return nil, err
			}
			items, err := d.List(ctx, after, int64(limit))
			return dlqPage[E]{Entries: items, Stream: d.Stream(), Total: n}, err
		},
		get: func(ctx context.Context, id string) (any, error) { return d.Get(ctx, id) },
		replay: func(ctx context.Context, ids []string) (int, error) {
			n := 0
			var errs []error
			for _, id := range ids {
				if _, err := d.Replay(ctx, id); err != nil {
					errs = append(errs, err)
					continue
				}
				n++
			}
			return n, errors.Join(errs...)
		},
		replayAll: d.ReplayAll,
		purge: func(ctx context.Context, ids []string) (int, error) {
			n, err := d.Purge(ctx, ids...)
			return int(n), err
		},
	}
}

// errPurgeAllOnly: the library purges a whole dead-letter queue; AMQP 0-9-1 cannot
// delete one message in the middle of a queue without consuming the others.
var errPurgeAllOnly = hub.Errorf(hub.InvalidArgument, "this DLQ can only be purged whole: pass all=true (--all)")

// rabbitDLQ serves a RabbitMQ group's dead-letter queue, opened per operation.
func rabbitDLQ(cfg rabbitmq.Config) dlqOps {
	return dlqOps{
		list: func(ctx context.Context, _ string, limit int) (any, error) { // a queue has no cursor: its head
			return withRabbitDLQ(ctx, cfg, func(q *rabbitmq.DLQ) ([]rabbitmq.DeadLetter, error) { return q.List(ctx, limit) })
		},
		get: func(ctx context.Context, id string) (any, error) {
			return withRabbitDLQ(ctx, cfg, func(q *rabbitmq.DLQ) (*rabbitmq.DeadLetter, error) { return q.Inspect(ctx, id) })
		},
		replay: func(ctx context.Context, ids []string) (int, error) {
			return withRabbitDLQ(ctx, cfg, func(q *rabbitmq.DLQ) (int, error) { return q.Replay(ctx, ids...) })
		},
		replayAll: func(ctx context.Context) (int, error) {
			return withRabbitDLQ(ctx, cfg, func(q *rabbitmq.DLQ) (int, error) { return q.Replay(ctx) })
		},
		purge: func(ctx context.Context, ids []string) (int, error) {
			if len(ids) > 0 {
				return 0, errPurgeAllOnly
			}
			return withRabbitDLQ(ctx, cfg, func(q *rabbitmq.DLQ) (int, error) { return q.Purge(ctx) })
		},
	}
}

// withRabbitDLQ runs f on the group's DLQ, on a connection of its own closed after.
func withRabbitDLQ[T any](ctx context.Context, cfg rabbitmq.Config, f func(q *rabbitmq.DLQ) (T, error)) (T, error) {
	q, err := rabbitmq.OpenDLQ(ctx, cfg)
	if err != nil {
		var zero T
		return zero, err
	}
	defer q.Close()
	return f(q)
}

// opsOf returns the operations of the DLQ kind the module set.
func opsOf(d ops.DLQ) (dlqOps, bool) {
	switch {
	case d.Redis != nil:
		return streamDLQ(d.Redis), true
	case d.KDB != nil:
		return streamDLQ(d.KDB), true
	case d.Rabbit != nil:
		return rabbitDLQ(*d.Rabbit), true
	}
	return dlqOps{}, false
}

func (s *Server) dlqFor(w http.ResponseWriter, r *http.Request) (dlqOps, bool) {
	name := r.PathValue("transport")
	t, ok := s.transport(name)
	if !ok {
		writeError(w, http.StatusNotFound, "no transport named "+name)
		return dlqOps{}, false
	}
	if p, ok := t.Module.(ops.DLQProvider); ok {
		if d, ok := opsFor(p.DLQ(), scopedTenant(r.Context())); ok {
			return d, true
		}
	}
	writeError(w, http.StatusNotFound, "transport "+name+" ("+t.Type+") has no DLQ")
	return dlqOps{}, false
}

type idsBody struct {
	IDs []string `json:"ids"`
	All bool     `json:"all"`
}

func (s *Server) dlqRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /dlq/{transport}", func(w http.ResponseWriter, r *http.Request) {
		if d, ok := s.dlqFor(w, r); ok {
			v, err := d.list(r.Context(), r.URL.Query().Get("after"), intParam(r, "limit", DefaultListLimit))
			reply(w, v, err)
		}
	})
	mux.HandleFunc("GET /dlq/{transport}/{id}", func(w http.ResponseWriter, r *http.Request) {
		if d, ok := s.dlqFor(w, r); ok {
			v, err := d.get(r.Context(), r.PathValue("id"))
			reply(w, v, err)
		}
	})
	// pastTense names the count in the reply: {"replayed": n} or {"purged": n}.
	pastTense := map[string]string{"replay": "replayed", "purge": "purged"}
	for _, op := range []string{"replay", "purge"} {
		mux.HandleFunc("POST /dlq/{transport}/"+op, func(w http.ResponseWriter, r *http.Request) {
			d, ok := s.dlqFor(w, r)
			if !ok {
				return
			}
			var b idsBody
			if raw, err := readBody(r); err != nil || json.Unmarshal(raw, &b) != nil {
				writeError(w, http.StatusBadRequest, `body: {"ids": [...]} or {"all": true}`)
				return
			}
			if len(b.IDs) == 0 && !b.All {
				writeError(w, http.StatusBadRequest, `give "ids" or "all": true`)
				return
			}
			var n int
			var err error
			switch {
			case op == "replay" && b.All:
				n, err = d.replayAll(r.Context())
			case op == "replay":
				n, err = d.replay(r.Context(), b.IDs)
			case b.All:
				n, err = d.purge(r.Context(), nil)
			default:
				n, err = d.purge(r.Context(), b.IDs)
			}
			s.done(w, r, "dlq."+op, "dlq/"+r.PathValue("transport"), scopedTenant(r.Context()), http.StatusOK, map[string]int{pastTense[op]: n}, err)
		})
	}
}
