package webhook

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"sort"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/secrets"
)

// Static header values at rest. They are often credentials (an Authorization or API-key
// header the receiver checks), so with Config.Keyring they are stored like the signing
// secrets and the mTLS key: each value encrypted under the ring's primary key, bound to
// the endpoint (context "<id>/headers"), decrypted only when a worker builds a request;
// views show the names only. ReencryptSecrets moves them, and the TLS key, to a new
// primary key after a rotation, and encrypts the plaintexts of rows written before a
// key was configured.

func headersContext(id string) string { return id + "/headers" }
func tlsContext(id string) string     { return id + "/tls" }

// sealHeaders returns h with every value encrypted for endpoint id (h itself without a
// ring). A value already encrypted (a row read without opening) is kept.
func (s store) sealHeaders(id string, h map[string]string) (map[string]string, error) {
	if s.ring == nil || len(h) == 0 {
		return h, nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		if secrets.IsEncrypted(v) {
			out[k] = v
			continue
		}
		ct, err := s.ring.Encrypt(v, headersContext(id))
		if err != nil {
			return nil, hub.Errorf(hub.Code(err), "webhook: endpoint %s: encrypt header %s: %w", id, k, err)
		}
		out[k] = ct
	}
	return out, nil
}

// openHeaders decrypts h in place; plaintexts (rows from before a key) pass through.
func (s store) openHeaders(id string, h map[string]string) error {
	for k, v := range h {
		if !secrets.IsEncrypted(v) {
			continue
		}
		if s.ring == nil {
			return hub.Errorf(hub.FailedPrecondition, "webhook: endpoint %s: its header values are encrypted and no secret key is configured", id)
		}
		pt, err := s.ring.Decrypt(v, headersContext(id))
		if err != nil {
			return hub.Errorf(hub.Code(err), "webhook: endpoint %s: header %s: %w", id, k, err)
		}
		h[k] = pt
	}
	return nil
}

// controlValues lists the encrypted-at-rest values of c in a fixed order (the TLS key,
// then the header values by name) with their contexts, and setControlValues puts
// values back in that order.
func controlValues(id string, c Controls) (values, contexts []string) {
	if c.TLS.ClientKey != "" {
		values, contexts = append(values, c.TLS.ClientKey), append(contexts, tlsContext(id))
	}
	for _, k := range sortedKeys(c.Headers) {
		values, contexts = append(values, c.Headers[k]), append(contexts, headersContext(id))
	}
	return values, contexts
}

func setControlValues(c *Controls, values []string) {
	i := 0
	if c.TLS.ClientKey != "" {
		c.TLS.ClientKey, i = values[0], 1
	}
	for _, k := range sortedKeys(c.Headers) {
		c.Headers[k] = values[i]
		i++
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// controlRows is the endpoint table's controls column as secrets.Reencrypt walks it:
// per endpoint its TLS key and header values, each with its own context.
type controlRows struct{ st store }

func (r controlRows) Next(ctx context.Context, after string, limit int) ([]secrets.Row, error) {
	rows, err := r.st.db.QueryContext(ctx, `SELECT id, controls FROM webhook_endpoints WHERE id > $1 ORDER BY id LIMIT $2`, after, limit)
	if err != nil {
		return nil, dbErr("read controls", err)
	}
	defer rows.Close()
	var out []secrets.Row
	for rows.Next() {
		var id, col string
		if err := rows.Scan(&id, &col); err != nil {
			return nil, dbErr("read controls", err)
		}
		c, err := parseControls(id, col)
		if err != nil {
			return nil, err
		}
		values, contexts := controlValues(id, c)
		out = append(out, secrets.Row{Key: id, Values: values, Contexts: contexts})
	}
	return out, dbErr("read controls", rows.Err())
}

// Update is secretRows.Update for the controls column: compare-and-swap on its text.
func (r controlRows) Update(ctx context.Context, row secrets.Row, values []string) (bool, error) {
	var col string
	err := r.st.db.QueryRowContext(ctx, `SELECT controls FROM webhook_endpoints WHERE id = $1`, row.Key).Scan(&col)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, dbErr("reencrypt controls", err)
	}
	c, err := parseControls(row.Key, col)
	if err != nil {
		return false, err
	}
	if now, _ := controlValues(row.Key, c); !slices.Equal(now, row.Values) || len(values) != len(now) {
		return false, nil
	}
	setControlValues(&c, values)
	b, err := json.Marshal(c)
	if err != nil {
		return false, hub.Wrap(hub.Internal, err)
	}
	res, err := r.st.db.ExecContext(ctx, `UPDATE webhook_endpoints SET controls = $2, version = version + 1 WHERE id = $1 AND controls = $3`,
		row.Key, string(b), col)
	if err != nil {
		return false, dbErr("reencrypt controls", err)
	}
	n, err := res.RowsAffected()
	return n == 1, dbErr("reencrypt controls", err)
}

func parseControls(id, col string) (Controls, error) {
	var c Controls
	if err := json.Unmarshal([]byte(col), &c); err != nil {
		return c, hub.Errorf(hub.Internal, "webhook: endpoint %s: controls: %w", id, err)
	}
	return c, nil
}
