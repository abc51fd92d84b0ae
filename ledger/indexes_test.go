package ledger_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

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
