package webhook

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
)

// Delivery uniqueness (H1): one delivery per (event, endpoint) for as long as the
// delivery is kept, whatever its state, so a re-sent event never duplicates one.
//
// River's unique jobs would do it (ByArgs over every state), but River keys them by a
// SHA-256 of the arguments: every insert lands on a random page of a unique index that
// holds every kept job. On the embedded default that index was what made throughput
// fall as the history grew (10 runs of 5 000 events: the 10th at 0.83x the 1st with
// it, 1.04x without; docs/BENCHMARKS.md): each commit wrote one more random page per
// delivery until the index outgrew the page cache. The hub's event ids are ULIDs, so a
// key table ordered by (event_id, endpoint_id) takes its inserts at its right edge, a
// page or two per batch.
//
// A key lives exactly as long as its job: a trigger on river_job deletes it with the
// job (River's cleaner, the delivered retention, a JobDelete; on PostgreSQL a TRUNCATE
// of river_job too), which is when River's own unique key went away too. Deliveries are inserted first and their keys after,
// in the same transaction; a key that exists already marks its job a duplicate, which
// is deleted again before the commit (re-sends are rare, so the common batch costs one
// extra statement, not two). Keys are inserted in key order, so two transactions
// inserting overlapping keys on PostgreSQL wait for each other instead of deadlocking.

// keysSQL creates the key table on both backends.
var keysSQL = map[ledger.Backend][]string{
	ledger.Postgres: slices.Concat([]string{
		`CREATE TABLE IF NOT EXISTS webhook_delivery_keys (
			event_id TEXT NOT NULL,
			endpoint_id TEXT NOT NULL,
			job_id BIGINT NOT NULL,
			PRIMARY KEY (event_id, endpoint_id))`,
		`CREATE INDEX IF NOT EXISTS webhook_delivery_keys_job ON webhook_delivery_keys (job_id)`},
		// One statement-level trigger per DELETE on river_job (River's cleaner deletes
		// in batches): the keys of the deleted deliveries go with them.
		pgJobsTrigger("webhook_delivery_keys_gone", "DELETE", "REFERENCING OLD TABLE AS gone",
			`DELETE FROM webhook_delivery_keys k USING gone g WHERE k.job_id = g.id AND g.kind = 'webhook_delivery';`),
		// TRUNCATE fires no DELETE trigger: an operator emptying River's table empties
		// the keys with it (or every event sent before would stay a duplicate with no
		// delivery to show for it).
		pgJobsTrigger("webhook_delivery_keys_truncated", "TRUNCATE", "", `TRUNCATE webhook_delivery_keys;`),
	),
	ledger.SQLite: {
		`CREATE TABLE IF NOT EXISTS webhook_delivery_keys (
			event_id TEXT NOT NULL,
			endpoint_id TEXT NOT NULL,
			job_id INTEGER NOT NULL,
			PRIMARY KEY (event_id, endpoint_id)) WITHOUT ROWID`,
		`CREATE INDEX IF NOT EXISTS webhook_delivery_keys_job ON webhook_delivery_keys (job_id)`,
		`CREATE TRIGGER IF NOT EXISTS webhook_delivery_keys_gone AFTER DELETE ON river_job
			WHEN old.kind = 'webhook_delivery'
		BEGIN
			DELETE FROM webhook_delivery_keys WHERE job_id = old.id;
		END`,
	},
}

// pgJobsTrigger is the function and the statement-level trigger (AFTER event ON
// river_job, with the transition-table clause refs) that run body, the trigger created
// when missing (CREATE OR REPLACE TRIGGER needs PostgreSQL 14).
func pgJobsTrigger(name, event, refs, body string) []string {
	return []string{
		`CREATE OR REPLACE FUNCTION ` + name + `() RETURNS trigger
			LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
		BEGIN
			` + body + `
			RETURN NULL;
		END $$`,
		`DO $$ BEGIN
			IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = '` + name + `'
					AND tgrelid = 'river_job'::regclass) THEN
				CREATE TRIGGER ` + name + ` AFTER ` + event + ` ON river_job
					` + refs + ` FOR EACH STATEMENT EXECUTE PROCEDURE ` + name + `();
			END IF;
		END $$`,
	}
}

// backfillKeysSQL gives the deliveries kept from before the key table existed (unique
// then by River's key) their keys, once, when the table is created.
var backfillKeysSQL = map[ledger.Backend]string{
	ledger.Postgres: `INSERT INTO webhook_delivery_keys (event_id, endpoint_id, job_id)
		SELECT args->>'event_id', args->>'endpoint_id', id FROM river_job
		WHERE kind = 'webhook_delivery' AND args ? 'event_id' AND args ? 'endpoint_id'
		ON CONFLICT DO NOTHING`,
	ledger.SQLite: `INSERT INTO webhook_delivery_keys (event_id, endpoint_id, job_id)
		SELECT json_extract(args, '$.event_id'), json_extract(args, '$.endpoint_id'), id FROM river_job
		WHERE kind = 'webhook_delivery' AND json_extract(args, '$.event_id') IS NOT NULL
			AND json_extract(args, '$.endpoint_id') IS NOT NULL
		ON CONFLICT DO NOTHING`,
}

// keysTableSQL reports whether the key table exists.
var keysTableSQL = map[ledger.Backend]string{
	ledger.Postgres: `SELECT to_regclass('webhook_delivery_keys') IS NOT NULL`,
	ledger.SQLite:   `SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'webhook_delivery_keys')`,
}

// migrateKeys creates the key table and its trigger (after River's migration: the
// trigger is on river_job), backfilling the keys of kept deliveries when the table is
// new, all in one l.CreateTables: replicas starting at once take turns under the
// schema's DDL lock on PostgreSQL (CREATE OR REPLACE FUNCTION run concurrently by three
// of them failed even when retried), and one that finds the table made finds its
// backfill committed with it. Two that both saw it missing both backfill; ON CONFLICT
// makes the second a no-op.
func (s store) migrateKeys(ctx context.Context, l *ledger.Ledger) error {
	b := l.Backend()
	var exists bool
	if err := s.db.QueryRowContext(ctx, keysTableSQL[b]).Scan(&exists); err != nil {
		return dbErr("migrate: delivery keys", err)
	}
	stmts := keysSQL[b]
	if !exists {
		stmts = append(slices.Clip(stmts), backfillKeysSQL[b])
	}
	if err := l.CreateTables(ctx, stmts...); err != nil {
		return dbErr("migrate: delivery keys", err)
	}
	return nil
}

// maxKeysPerStatement bounds the rows of one key INSERT (3 parameters each; SQLite
// allows 32 766 parameters, PostgreSQL 65 535).
const maxKeysPerStatement = 1000

// insertDeliveries inserts the delivery jobs of params in tx (a pgx.Tx or *sql.Tx of
// the ledger) and drops those whose (event, endpoint) already has a delivery; see the
// comment at the top of this file.
func (t *Transport) insertDeliveries(ctx context.Context, tx any, params []river.InsertManyParams) error {
	res, err := t.l.InsertManyTx(ctx, tx, params)
	if err != nil {
		return insertErr(err)
	}
	type key struct {
		event, endpoint string
		job             int64
	}
	keys := make([]key, 0, len(res))
	for i, r := range res {
		a := params[i].Args.(deliveryArgs)
		keys = append(keys, key{a.EventID, a.EndpointID, r.Job.ID})
	}
	// Key order (see above); within one key the first job inserted wins.
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(strings.Compare(a.event, b.event), strings.Compare(a.endpoint, b.endpoint), cmp.Compare(a.job, b.job))
	})
	kept := make(map[int64]bool, len(keys))
	var q strings.Builder
	for start := 0; start < len(keys); start += maxKeysPerStatement {
		chunk := keys[start:min(len(keys), start+maxKeysPerStatement)]
		q.Reset()
		q.WriteString(`INSERT INTO webhook_delivery_keys (event_id, endpoint_id, job_id) VALUES `)
		args := make([]any, 0, 3*len(chunk))
		for i, k := range chunk {
			if i > 0 {
				q.WriteByte(',')
			}
			fmt.Fprintf(&q, "($%d, $%d, $%d)", 3*i+1, 3*i+2, 3*i+3)
			args = append(args, k.event, k.endpoint, k.job)
		}
		q.WriteString(` ON CONFLICT (event_id, endpoint_id) DO NOTHING RETURNING job_id`)
		if err := queryInt64s(ctx, tx, q.String(), args, func(id int64) { kept[id] = true }); err != nil {
			return insertErr(err)
		}
	}
	var dups []int64
	for _, k := range keys {
		if !kept[k.job] {
			dups = append(dups, k.job)
		}
	}
	for len(dups) > 0 {
		n := min(len(dups), maxDeletesPerCall)
		if _, err := t.l.JobDeleteManyTx(ctx, tx, river.NewJobDeleteManyParams().IDs(dups[:n]...).First(n)); err != nil {
			return insertErr(err)
		}
		dups = dups[n:]
	}
	return nil
}

// maxDeletesPerCall is River's cap on one JobDeleteMany.
const maxDeletesPerCall = 10000

// queryInt64s runs a query returning one BIGINT column in tx and calls f per row.
func queryInt64s(ctx context.Context, tx any, q string, args []any, f func(int64)) error {
	var rows interface {
		Next() bool
		Scan(dest ...any) error
		Err() error
	}
	switch tx := tx.(type) {
	case pgx.Tx:
		r, err := tx.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		defer r.Close()
		rows = r
	case *sql.Tx:
		r, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer r.Close()
		rows = r
	default:
		return hub.Errorf(hub.InvalidArgument, "webhook: transaction of type %T: want pgx.Tx or *sql.Tx", tx)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		f(id)
	}
	return rows.Err()
}
