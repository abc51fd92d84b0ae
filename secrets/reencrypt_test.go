package secrets_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/ledger"
	"github.com/koder/eventhub/ledger/ledgertest"
	"github.com/koder/eventhub/secrets"
	"github.com/koder/eventhub/transports/webhook"
)

// endpointRows is a secrets.Rows over a table shaped like the webhook transport's
// endpoints: an id and a JSON array of secrets.
type endpointRows struct {
	db        *sql.DB
	failAfter int // Update fails once this many succeeded (0: never)
	updates   int
	// beforeUpdate runs before each Update (to change a row under the walk).
	beforeUpdate func(row secrets.Row)
}

const ddl = `CREATE TABLE IF NOT EXISTS sec_endpoints (id TEXT PRIMARY KEY, secrets TEXT NOT NULL)`

func (r *endpointRows) Next(ctx context.Context, after string, limit int) ([]secrets.Row, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT id, secrets FROM sec_endpoints WHERE id > $1 ORDER BY id LIMIT $2`, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []secrets.Row
	for rows.Next() {
		var id, js string
		if err := rows.Scan(&id, &js); err != nil {
			return nil, err
		}
		row := secrets.Row{Key: id, Context: id}
		if err := json.Unmarshal([]byte(js), &row.Values); err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

var errInterrupted = errors.New("interrupted")

func (r *endpointRows) Update(ctx context.Context, row secrets.Row, values []string) (bool, error) {
	if r.failAfter > 0 && r.updates == r.failAfter {
		return false, errInterrupted
	}
	if r.beforeUpdate != nil {
		r.beforeUpdate(row)
	}
	old, _ := json.Marshal(row.Values)
	next, _ := json.Marshal(values)
	res, err := r.db.ExecContext(ctx, `UPDATE sec_endpoints SET secrets = $1 WHERE id = $2 AND secrets = $3`, string(next), row.Key, string(old))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if n == 1 {
		r.updates++
	}
	return n == 1, err
}

func TestSEC_SecretsAtRest(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, func(t *testing.T, b ledger.Backend) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		db := ledgertest.Open(t, b, ledger.Config{}).DB()
		if _, err := db.ExecContext(ctx, ddl); err != nil {
			t.Fatal(err)
		}
		// Endpoints written before encryption was configured: plaintext secrets.
		plain := map[string][]string{}
		for i := range 250 {
			id := fmt.Sprintf("ep_%04d", i)
			vals := []string{webhook.NewSecret()}
			if i%10 == 0 {
				vals = append(vals, webhook.NewSecret()) // a rotation in its grace period
			}
			plain[id] = vals
			js, _ := json.Marshal(vals)
			if _, err := db.ExecContext(ctx, `INSERT INTO sec_endpoints (id, secrets) VALUES ($1, $2)`, id, string(js)); err != nil {
				t.Fatal(err)
			}
		}
		k1, k2 := secrets.GenerateKey(), secrets.GenerateKey()
		ring1, _ := secrets.NewKeyring(k1)

		// checkTable asserts that no plaintext secret is left in the table, every value
		// is under want's primary key, and that signing with the decrypted secrets
		// verifies against the original ones.
		checkTable := func(t *testing.T, want *secrets.Keyring) {
			t.Helper()
			rows, err := db.QueryContext(ctx, `SELECT id, secrets FROM sec_endpoints`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			n := 0
			for rows.Next() {
				var id, js string
				if err := rows.Scan(&id, &js); err != nil {
					t.Fatal(err)
				}
				n++
				for _, p := range plain[id] {
					if strings.Contains(js, p) || strings.Contains(js, strings.TrimPrefix(p, webhook.SecretPrefix)) {
						t.Fatalf("row %s still holds a plaintext secret", id)
					}
				}
				var vals []string
				_ = json.Unmarshal([]byte(js), &vals)
				keys := make([][]byte, len(vals))
				for i, v := range vals {
					if kid, _ := secrets.KeyOf(v); kid != want.PrimaryID() {
						t.Fatalf("row %s value %d under key %q, want %s", id, i, kid, want.PrimaryID())
					}
					pt, err := want.Decrypt(v, id)
					if err != nil {
						t.Fatal(err)
					}
					keys[i] = []byte(pt)
				}
				body := []byte(`{"id":"evt_1"}`)
				now := time.Now()
				orig := make([][]byte, len(plain[id]))
				for i, p := range plain[id] {
					orig[i] = []byte(p)
				}
				if err := webhook.Verify(webhook.Sign(now, body, keys...), body, orig, time.Minute, now); err != nil {
					t.Fatalf("row %s: a signature made with the decrypted secrets does not verify: %v", id, err)
				}
			}
			if err := rows.Err(); err != nil || n != 250 {
				t.Fatalf("%d rows %v", n, err)
			}
		}

		// Upgrade: HUB_SECRET_KEY set for the first time.
		res, err := secrets.Reencrypt(ctx, ring1, &endpointRows{db: db}, secrets.ReencryptOptions{BatchSize: 64})
		if err != nil || res.Scanned != 250 || res.Updated != 250 || res.Last != "ep_0249" {
			t.Fatalf("upgrade: %+v %v", res, err)
		}
		checkTable(t, ring1)

		// Idempotent.
		res, err = secrets.Reencrypt(ctx, ring1, &endpointRows{db: db}, secrets.ReencryptOptions{})
		if err != nil || res.Updated != 0 || res.Scanned != 250 {
			t.Fatalf("second run: %+v %v", res, err)
		}

		// Rotation, interrupted after 100 rows, then resumed from Last.
		ring2, _ := secrets.NewKeyring(k2, k1)
		var progress []secrets.ReencryptResult
		res, err = secrets.Reencrypt(ctx, ring2, &endpointRows{db: db, failAfter: 100}, secrets.ReencryptOptions{BatchSize: 30,
			Progress: func(r secrets.ReencryptResult) { progress = append(progress, r) }})
		if !errors.Is(err, errInterrupted) || res.Updated != 100 || res.Last != "ep_0099" {
			t.Fatalf("interrupted: %+v %v", res, err)
		}
		if len(progress) != 3 || progress[2].Last != "ep_0089" {
			t.Fatalf("progress %+v", progress)
		}
		res, err = secrets.Reencrypt(ctx, ring2, &endpointRows{db: db}, secrets.ReencryptOptions{After: res.Last})
		if err != nil || res.Updated != 150 || res.Scanned != 150 {
			t.Fatalf("resumed: %+v %v", res, err)
		}
		ring3, _ := secrets.NewKeyring(k2) // the old key dropped
		checkTable(t, ring3)

		// A row the application rewrites during a walk is left as it wrote it.
		k4 := secrets.GenerateKey()
		ring4, _ := secrets.NewKeyring(k4, k2)
		touched := false
		rows := &endpointRows{db: db, beforeUpdate: func(row secrets.Row) {
			if touched {
				return
			}
			touched = true
			v, _ := ring4.Encrypt(plain[row.Key][0], row.Key)
			js, _ := json.Marshal([]string{v})
			plain[row.Key] = plain[row.Key][:1]
			if _, err := db.ExecContext(ctx, `UPDATE sec_endpoints SET secrets = $1 WHERE id = $2`, string(js), row.Key); err != nil {
				t.Error(err)
			}
		}}
		res, err = secrets.Reencrypt(ctx, ring4, rows, secrets.ReencryptOptions{})
		if err != nil || res.Changed != 1 || res.Updated != 249 {
			t.Fatalf("walk under writes: %+v %v", res, err)
		}
		checkTable(t, ring4)

		// A ciphertext copied to another row does not decrypt there, and a walk stops on
		// it rather than skipping it.
		var a string
		if err := db.QueryRowContext(ctx, `SELECT secrets FROM sec_endpoints WHERE id = 'ep_0001'`).Scan(&a); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `UPDATE sec_endpoints SET secrets = $1 WHERE id = 'ep_0002'`, a); err != nil {
			t.Fatal(err)
		}
		var vals []string
		_ = json.Unmarshal([]byte(a), &vals)
		if _, err := ring4.Decrypt(vals[0], "ep_0002"); hub.Code(err) != hub.PermissionDenied {
			t.Fatalf("moved ciphertext: %v", err)
		}
		ring5, _ := secrets.NewKeyring(secrets.GenerateKey(), k4)
		res, err = secrets.Reencrypt(ctx, ring5, &endpointRows{db: db}, secrets.ReencryptOptions{})
		if hub.Code(err) != hub.PermissionDenied || res.Last != "ep_0001" || !strings.Contains(err.Error(), "ep_0002") {
			t.Fatalf("walk over a moved ciphertext: %+v %v", res, err)
		}
	})
}
