package dedupe

import (
	"strings"
	"testing"

	"github.com/koder/eventhub/internal/testenv"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
	"time"
)

// TestLookupSearchesThePrimaryKey pins SQLite's plan of every statement Admit and Prune
// run: each key is a search of the primary key (or the expiry index for the prune),
// never a scan of the table, which holds a whole window of ids.
func TestLookupSearchesThePrimaryKey(t *testing.T) {
	t.Parallel()
	l := ledgertest.Open(t, ledger.SQLite, ledger.Config{})
	s, err := Open(testenv.Context(t, 30*time.Second), l, Config{PruneInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	plan := func(q string, args ...any) string { return testenv.SQLitePlan(t, l.DB(), q, args...) }
	for _, n := range []int{1, 2, 100} {
		args := make([]any, 0, 2*n+1)
		for range n {
			args = append(args, "acme", "evt_x")
		}
		p := plan(lookupSQLite(s.table, n), append(args, int64(1))...)
		if !strings.Contains(p, "SEARCH t USING PRIMARY KEY") || strings.Contains(p, "SCAN t") || strings.Contains(p, "_expires") {
			t.Errorf("lookup of %d keys: plan %q, want a primary-key search per key", n, p)
		}
	}
	p := plan(s.pruneQuery(), int64(1), 10)
	if strings.Contains(p, "SCAN "+s.table) {
		t.Errorf("prune plan %q scans the table", p)
	}
}
