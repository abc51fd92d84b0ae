package webhook

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

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
// of river_job too), matching the deleted job's args (event_id, endpoint_id: the key),
// which is when River's own unique key went away too. The keys of a batch are inserted
// first, in key order (two transactions inserting overlapping keys on PostgreSQL wait
// for each other instead of deadlocking), ON CONFLICT DO NOTHING, and only the jobs
// whose key came back new are inserted, with River's InsertManyFastTx: nothing is
// inserted to be deleted again, and River neither returns nor decodes the rows (COPY
// FROM on PostgreSQL). Measured against inserting the jobs first and their keys after
// (the jobs' ids in the keys): 1.15x deliveries/s on PostgreSQL, 1.20x on SQLite
// (webhook component, docs/BENCHMARKS.md).

// keysSQL creates the key table on both backends.
var keysSQL = map[ledger.Backend][]string{
	ledger.Postgres: slices.Concat([]string{
		`CREATE TABLE IF NOT EXISTS webhook_delivery_keys (
			event_id TEXT NOT NULL,
			endpoint_id TEXT NOT NULL,
			PRIMARY KEY (event_id, endpoint_id))`,
		// Tables of earlier versions held each key's job id: hubs of those versions
		// sharing the schema during a rolling upgrade still write it, later ones leave
		// it NULL, and the index nothing reads any more goes.
		`DO $$ BEGIN
			IF EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
					AND table_name = 'webhook_delivery_keys' AND column_name = 'job_id') THEN
				ALTER TABLE webhook_delivery_keys ALTER COLUMN job_id DROP NOT NULL;
			END IF;
		END $$`,
		`DROP INDEX IF EXISTS webhook_delivery_keys_job`},
		// One statement-level trigger per DELETE on river_job (River's cleaner deletes
		// in batches): the keys of the deleted deliveries go with them.
		pgJobsTrigger("webhook_delivery_keys_gone", "DELETE", "REFERENCING OLD TABLE AS gone",
			`DELETE FROM webhook_delivery_keys k USING gone g WHERE g.kind = 'webhook_delivery'
				AND k.event_id = g.args->>'event_id' AND k.endpoint_id = g.args->>'endpoint_id';`),
		// TRUNCATE fires no DELETE trigger: an operator emptying River's table empties
		// the keys with it (or every event sent before would stay a duplicate with no
		// delivery to show for it).
		pgJobsTrigger("webhook_delivery_keys_truncated", "TRUNCATE", "", `TRUNCATE webhook_delivery_keys;`),
	),
	ledger.SQLite: {
		`CREATE TABLE IF NOT EXISTS webhook_delivery_keys (
			event_id TEXT NOT NULL,
			endpoint_id TEXT NOT NULL,
			PRIMARY KEY (event_id, endpoint_id)) WITHOUT ROWID`,
		`CREATE TRIGGER IF NOT EXISTS webhook_delivery_keys_gone AFTER DELETE ON river_job
			WHEN old.kind = 'webhook_delivery'
		BEGIN
			DELETE FROM webhook_delivery_keys WHERE event_id = json_extract(old.args, '$.event_id')
				AND endpoint_id = json_extract(old.args, '$.endpoint_id');
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
	ledger.Postgres: `INSERT INTO webhook_delivery_keys (event_id, endpoint_id)
		SELECT args->>'event_id', args->>'endpoint_id' FROM river_job
		WHERE kind = 'webhook_delivery' AND args ? 'event_id' AND args ? 'endpoint_id'
		ON CONFLICT DO NOTHING`,
	ledger.SQLite: `INSERT INTO webhook_delivery_keys (event_id, endpoint_id)
		SELECT json_extract(args, '$.event_id'), json_extract(args, '$.endpoint_id') FROM river_job
		WHERE kind = 'webhook_delivery' AND json_extract(args, '$.event_id') IS NOT NULL
			AND json_extract(args, '$.endpoint_id') IS NOT NULL
		ON CONFLICT DO NOTHING`,
}

// sqliteOldKeysSQL reports whether the SQLite key table is an earlier version's, with
// a job_id column; sqliteDropJobIDSQL makes it this version's (its trigger and index
// read the column, so they go first; keysSQL makes the trigger again).
const sqliteOldKeysSQL = `SELECT EXISTS (SELECT 1 FROM pragma_table_info('webhook_delivery_keys') WHERE name = 'job_id')`

var sqliteDropJobIDSQL = []string{
	`DROP TRIGGER IF EXISTS webhook_delivery_keys_gone`,
	`DROP INDEX IF EXISTS webhook_delivery_keys_job`,
	`ALTER TABLE webhook_delivery_keys DROP COLUMN job_id`,
}

// keysMissingSQL reports whether the key table is missing (then created and
// backfilled). On PostgreSQL a query of the catalog in the current schema, where the
// table is made: to_regclass could answer from a session cache older than the wait
// for the DDL lock.
var keysMissingSQL = map[ledger.Backend]string{
	ledger.Postgres: `SELECT NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class
		WHERE relname = 'webhook_delivery_keys' AND relnamespace = current_schema()::regnamespace)`,
	ledger.SQLite: `SELECT NOT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'webhook_delivery_keys')`,
}

// migrateKeys creates the key table and its trigger (after River's migration: the
// trigger is on river_job), backfilling the keys of kept deliveries when the table is
// new, all in one l.ApplySchema: replicas starting at once take turns under the
// schema's DDL lock on PostgreSQL (CREATE OR REPLACE FUNCTION run concurrently by three
// of them failed even when retried), and one that waited for another's asks again under
// the lock whether the table is missing and finds it made, backfilled and recorded. A
// table dropped behind the record's back is missing: made and backfilled again.
func (s store) migrateKeys(ctx context.Context, l *ledger.Ledger) error {
	b := l.Backend()
	var stmts []string
	if b == ledger.SQLite {
		var old bool
		if err := s.db.QueryRowContext(ctx, sqliteOldKeysSQL).Scan(&old); err != nil {
			return dbErr("migrate: delivery keys", err)
		}
		if old {
			stmts = append(stmts, sqliteDropJobIDSQL...)
		}
	}
	stmts = append(stmts, keysSQL[b]...)
	if err := l.ApplySchema(ctx, ledger.Schema{Name: "webhook.delivery_keys", Statements: stmts,
		Missing: keysMissingSQL[b], Backfill: []string{backfillKeysSQL[b]}}); err != nil {
		return dbErr("migrate: delivery keys", err)
	}
	return nil
}

// maxKeysPerStatement bounds the rows of one key INSERT (2 parameters each; SQLite
// allows 32 766 parameters, PostgreSQL 65 535).
const maxKeysPerStatement = 1000

// deliveryKey is H1's key of one delivery of a batch (idx: its place in the batch).
type deliveryKey struct {
	event, endpoint string
	idx             int
}

// insertDeliveries inserts the delivery jobs of params in tx (a pgx.Tx or *sql.Tx of
// the ledger) but those whose (event, endpoint) already has a delivery, or comes twice
// in params (the first is kept); see the comment at the top of this file.
func (t *Transport) insertDeliveries(ctx context.Context, tx any, params []river.InsertManyParams) error {
	keys := make([]deliveryKey, 0, len(params))
	for i, p := range params {
		a := p.Args.(deliveryArgs)
		keys = append(keys, deliveryKey{a.EventID, a.EndpointID, i})
	}
	slices.SortFunc(keys, func(a, b deliveryKey) int {
		return cmp.Or(strings.Compare(a.event, b.event), strings.Compare(a.endpoint, b.endpoint), cmp.Compare(a.idx, b.idx))
	})
	keys = slices.CompactFunc(keys, func(a, b deliveryKey) bool { return a.event == b.event && a.endpoint == b.endpoint })
	type pair struct{ event, endpoint string }
	fresh := make(map[pair]bool, len(keys))
	var q strings.Builder
	for chunk := range slices.Chunk(keys, maxKeysPerStatement) {
		q.Reset()
		q.WriteString(`INSERT INTO webhook_delivery_keys (event_id, endpoint_id) VALUES `)
		args := make([]any, 0, 2*len(chunk))
		for i, k := range chunk {
			if i > 0 {
				q.WriteByte(',')
			}
			fmt.Fprintf(&q, "($%d, $%d)", 2*i+1, 2*i+2)
			args = append(args, k.event, k.endpoint)
		}
		q.WriteString(` ON CONFLICT (event_id, endpoint_id) DO NOTHING RETURNING event_id, endpoint_id`)
		err := queryEach(ctx, tx, q.String(), args, func(scan func(...any) error) error {
			var p pair
			if err := scan(&p.event, &p.endpoint); err != nil {
				return err
			}
			fresh[p] = true
			return nil
		})
		if err != nil {
			return insertErr(err)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	keep := make([]bool, len(params))
	for _, k := range keys {
		keep[k.idx] = fresh[pair{k.event, k.endpoint}]
	}
	jobs := params
	if len(fresh) < len(params) {
		jobs = make([]river.InsertManyParams, 0, len(fresh))
		for i, p := range params { // batch order: the jobs' ids follow it
			if keep[i] {
				jobs = append(jobs, p)
			}
		}
	}
	jobs, err := t.insertClaimed(ctx, tx, jobs)
	if err != nil || len(jobs) == 0 {
		return err
	}
	if _, err := t.l.InsertManyFastTx(ctx, tx, jobs); err != nil {
		return insertErr(err)
	}
	return nil
}

// insertClaimed inserts the deliveries of jobs that this process attempts first itself
// (inline.go) as claimed jobs, their attempts started once tx commits, and returns the
// others. Where claiming is not possible (ledger.ErrNoClaim, or a transaction whose
// commit the ledger does not see) it returns jobs whole.
func (t *Transport) insertClaimed(ctx context.Context, tx any, jobs []river.InsertManyParams) ([]river.InsertManyParams, error) {
	in := t.inline
	if in == nil {
		return jobs, nil
	}
	var claim, rest []river.InsertManyParams
	for _, p := range jobs {
		if a := p.Args.(deliveryArgs); in.eligible(&a) {
			claim = append(claim, p)
		} else {
			rest = append(rest, p)
		}
	}
	if len(claim) == 0 {
		return jobs, nil
	}
	var (
		rows []*rivertype.JobRow
		args []deliveryArgs
	)
	if !t.l.AfterCommit(tx, func() { in.dispatch(rows, args) }) {
		return jobs, nil
	}
	rows, err := t.l.InsertClaimedTx(ctx, tx, claim)
	switch {
	case errors.Is(err, ledger.ErrNoClaim):
		return jobs, nil
	case err != nil:
		return nil, insertErr(err)
	}
	args = make([]deliveryArgs, len(claim))
	for i, p := range claim {
		args[i] = p.Args.(deliveryArgs)
	}
	return rest, nil
}

// queryEach runs a query in tx (a pgx.Tx, or a *sql.Tx or any other querier: the
// ledger's *sql.DB) and calls f with each row's Scan.
func queryEach(ctx context.Context, tx any, q string, args []any, f func(scan func(...any) error) error) error {
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
	case querier:
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
		if err := f(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}
