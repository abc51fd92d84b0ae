package admin

import (
	"context"
	"errors"

	"github.com/koder/eventhub/auth"
	"github.com/koder/eventhub/cloudevent"
	"github.com/koder/eventhub/cmd/hub/internal/ops"
	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
)

// A tenant-scoped caller sees the dead letters of its own tenant only: an entry's
// tenant is its R2 tenant_id field. A dead-letter stream cannot be queried by field (an
// XRANGE on Redis, its mirror on kdbstream), so the scoped operations walk the stream
// in pages (streams.DLQPage) and keep the tenant's entries; another tenant's entry is
// 404, by id as in a listing. A walk reads at most maxTenantScan entries: a dead-letter
// stream is small by design (its entries wait for a person), and the bound keeps a
// tenant's request from reading an unbounded one. RabbitMQ dead-letter queues cannot be
// read without taking the messages (withRabbitDLQ), so they are operator-only.

// maxTenantScan bounds the entries one scoped DLQ operation reads.
const maxTenantScan = 100_000

// opsFor returns the DLQ's operations as the caller may use them.
func opsFor(d ops.DLQ, tenant string) (dlqOps, bool) {
	if tenant == "" {
		return opsOf(d)
	}
	switch {
	case d.Redis != nil:
		return tenantDLQ(d.Redis, tenant), true
	case d.KDB != nil:
		return tenantDLQ(d.KDB, tenant), true
	case d.Rabbit != nil:
		return deniedDLQ(), true
	}
	return dlqOps{}, false
}

// deadLetter reads a stream dead letter's id and tenant (the Redis and kdbstream DLQs'
// entries are both streams.DeadLetter).
func deadLetter(e any) (id, tenant string) {
	if v, ok := e.(streams.DeadLetter); ok {
		return v.ID, v.Fields[cloudevent.FieldTenantID]
	}
	return "", ""
}

func tenantDLQ[E any](d streams.DLQ[E], tenant string) dlqOps {
	// walk calls f with each of the tenant's entries, oldest first, until f says stop.
	walk := func(ctx context.Context, from string, f func(e E) bool) error {
		after, seen := from, 0
		for seen < maxTenantScan {
			page, err := d.List(ctx, after, streams.DLQPage)
			if err != nil {
				return err
			}
			for _, e := range page {
				id, t := deadLetter(e)
				after = id
				if t == tenant && !f(e) {
					return nil
				}
			}
			seen += len(page)
			if len(page) < streams.DLQPage {
				return nil
			}
		}
		return nil
	}
	get := func(ctx context.Context, id string) (E, error) {
		e, err := d.Get(ctx, id)
		if err != nil {
			return e, err
		}
		if _, t := deadLetter(e); t != tenant {
			var zero E
			return zero, hub.Errorf(hub.NotFound, "dead letter %s not found", id)
		}
		return e, nil
	}
	ids := func(ctx context.Context) ([]string, error) {
		var out []string
		err := walk(ctx, "", func(e E) bool {
			id, _ := deadLetter(e)
			out = append(out, id)
			return true
		})
		return out, err
	}
	replay := func(ctx context.Context, ids []string) (int, error) {
		n := 0
		var errs []error
		for _, id := range ids {
			if _, err := get(ctx, id); err != nil {
				errs = append(errs, err)
				continue
			}
			if _, err := d.Replay(ctx, id); err != nil {
				errs = append(errs, err)
				continue
			}
			n++
		}
		return n, errors.Join(errs...)
	}
	return dlqOps{
		list: func(ctx context.Context, after string, limit int) (any, error) {
			entries := []E{}
			var total int64
			err := walk(ctx, after, func(e E) bool {
				total++
				if len(entries) < limit {
					entries = append(entries, e)
				}
				return true
			})
			return dlqPage[E]{Entries: entries, Stream: d.Stream(), Total: total}, err
		},
		get:    func(ctx context.Context, id string) (any, error) { return get(ctx, id) },
		replay: replay,
		replayAll: func(ctx context.Context) (int, error) {
			all, err := ids(ctx)
			if err != nil {
				return 0, err
			}
			return replay(ctx, all)
		},
		purge: func(ctx context.Context, given []string) (int, error) {
			if len(given) == 0 {
				all, err := ids(ctx)
				if err != nil || len(all) == 0 {
					return 0, err
				}
				given = all
			} else {
				for _, id := range given {
					if _, err := get(ctx, id); err != nil {
						return 0, err
					}
				}
			}
			n, err := d.Purge(ctx, given...)
			return int(n), err
		},
	}
}

// deniedDLQ refuses every operation to a tenant-scoped caller.
func deniedDLQ() dlqOps {
	err := &auth.DeniedError{Anchor: "principals-and-tenant-scoping", Msg: "auth: a RabbitMQ dead-letter queue cannot be read per tenant; it is for operators"}
	return dlqOps{
		list:      func(context.Context, string, int) (any, error) { return nil, err },
		get:       func(context.Context, string) (any, error) { return nil, err },
		replay:    func(context.Context, []string) (int, error) { return 0, err },
		replayAll: func(context.Context) (int, error) { return 0, err },
		purge:     func(context.Context, []string) (int, error) { return 0, err },
	}
}
