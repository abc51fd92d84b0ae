package ledger_test

import (
	"context"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
)

// The ledger drops River's GIN indexes on river_job's args and metadata (open.go). A
// River release whose migrations name them again (to alter, rename or rely on them)
// must be looked at before it is taken: this fails then.
func TestRiverMigrationsLeaveGINIndexesAlone(t *testing.T) {
	m, err := rivermigrate.New[pgx.Tx](riverpgxv5.New(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, mig := range m.AllVersions() {
		for _, name := range ledger.UnusedRiverIndexes {
			mentioned := strings.Contains(mig.SQLUp, name) || strings.Contains(mig.SQLDown, name)
			if mig.Version == 2 && !strings.Contains(mig.SQLUp, name) {
				t.Errorf("River's migration 2 no longer creates %s: the ledger drops an index River does not make", name)
			}
			if mig.Version != 2 && mentioned {
				t.Errorf("River's migration %d names %s, which the ledger drops after migrating", mig.Version, name)
			}
		}
	}
}

// After Open on PostgreSQL the GIN indexes are gone, and a second Open (a replica, a
// restart) finds nothing to drop.
func TestOpenDropsRiversGINIndexes(t *testing.T) {
	ctx := context.Background()
	l := ledgertest.Open(t, ledger.Postgres, ledger.Config{})
	again, err := ledger.Open(ctx, l.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	rows, err := l.Pool().Query(ctx, `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'river_job'`,
		l.Config().Schema)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("no index on river_job: the query looked in the wrong schema")
	}
	for _, n := range names {
		for _, gone := range ledger.UnusedRiverIndexes {
			if n == gone {
				t.Errorf("index %s is still on river_job (indexes: %v)", n, names)
			}
		}
	}
}

// A role that may not drop River's indexes (the tables belong to the role that
// migrated them) still opens the ledger: the indexes stay, with a warning naming them.
func TestOpenLeavesGINIndexesItMayNotDrop(t *testing.T) {
	ctx := context.Background()
	owner := ledgertest.Open(t, ledger.Postgres, ledger.Config{})
	if _, err := owner.Pool().Exec(ctx, `CREATE INDEX river_job_args_index ON `+owner.Table("river_job")+` USING GIN(args)`); err != nil {
		t.Fatal(err)
	}
	var logs testenv.LogBuffer
	cfg := nonOwnerConfig(t, owner)
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	l, err := ledger.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open as a role that does not own river_job: %v", err)
	}
	defer l.Close()
	var n int
	if err := owner.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE schemaname = $1 AND indexname = 'river_job_args_index'`,
		owner.Config().Schema).Scan(&n); err != nil || n != 1 {
		t.Fatalf("river_job_args_index: %d, %v; want left in place", n, err)
	}
	if got := logs.String(); !strings.Contains(got, "river_job_args_index") {
		t.Fatalf("no warning names the index left in place; logs:\n%s", got)
	}
}

// nonOwnerConfig returns owner's configuration as a role of its own that may read and
// write the schema's tables and create in it, but owns none of them (a deployment whose
// tables belong to a migration role). The role is dropped at cleanup.
func nonOwnerConfig(t *testing.T, owner *ledger.Ledger) ledger.Config {
	t.Helper()
	ctx := context.Background()
	schema := owner.Config().Schema
	role := "lt_role_" + strings.TrimPrefix(schema, "lt_")
	for _, q := range []string{
		`CREATE ROLE ` + role + ` LOGIN`,
		`GRANT USAGE, CREATE ON SCHEMA ` + schema + ` TO ` + role,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ` + schema + ` TO ` + role,
		`GRANT USAGE ON ALL SEQUENCES IN SCHEMA ` + schema + ` TO ` + role,
	} {
		if _, err := owner.Pool().Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		_, _ = owner.Pool().Exec(context.Background(), `DROP OWNED BY `+role)
		_, _ = owner.Pool().Exec(context.Background(), `DROP ROLE `+role)
	})
	cfg := owner.Config()
	u, err := url.Parse(cfg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	cfg.DSN = u.String()
	return cfg
}
