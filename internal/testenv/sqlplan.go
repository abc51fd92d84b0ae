package testenv

import (
	"context"
	"database/sql"
	"strings"
	"testing"
)

// SQLitePlan returns SQLite's EXPLAIN QUERY PLAN of query with args, its steps' details
// one per line ("SEARCH j USING INTEGER PRIMARY KEY (rowid=?)", ...), for tests that
// check which index a statement reads.
func SQLitePlan(t testing.TB, db *sql.DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		t.Fatalf("explain %s: %v", query, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail sql.NullString
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatalf("explain %s: %v", query, err)
		}
		plan = append(plan, detail.String)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("explain %s: %v", query, err)
	}
	return strings.Join(plan, "\n")
}
