package webhook

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/secrets"
)

// Signing secrets at rest. With Config.Keyring, every secret value of an endpoint row is
// stored as secrets.Keyring.Encrypt made it (enc:v1:<kid>:...), bound to the endpoint
// id, so a copy of the database (a backup, a replica, a read-only role) cannot forge the
// hub's signatures, and a ciphertext moved to another row does not decrypt. Values are
// encrypted on every write and decrypted when a row is read for signing or changing;
// fan-out and the listings read rows without decrypting.
//
// Rows written before a key was configured hold plaintexts: Decrypt passes them through
// (they keep signing), and ReencryptSecrets encrypts them, as it moves values under an
// older key of the ring to its primary key after a rotation.

// sealSecrets returns the secrets column for endpoint id: the JSON array with every value
// encrypted under the ring's primary key (as given without a ring).
func (s store) sealSecrets(id string, ss []Secret) (string, error) {
	out := slices.Clone(ss)
	if s.ring != nil {
		for i := range out {
			if secrets.IsEncrypted(out[i].Value) {
				continue // never happens for values checkSecret let in; kept as read
			}
			v, err := s.ring.Encrypt(out[i].Value, id)
			if err != nil {
				return "", hub.Errorf(hub.Code(err), "webhook: endpoint %s: encrypt secret: %w", id, err)
			}
			out[i].Value = v
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", hub.Wrap(hub.Internal, err)
	}
	return string(b), nil
}

// openSecrets decrypts ss in place. A plaintext (a row from before encryption) passes
// through; an encrypted value without a ring, under a key the ring lacks, or that does
// not authenticate is an error naming the endpoint, never a silent passthrough.
func (s store) openSecrets(id string, ss []Secret) error {
	for i := range ss {
		if !secrets.IsEncrypted(ss[i].Value) {
			continue
		}
		if s.ring == nil {
			return hub.Errorf(hub.FailedPrecondition,
				"webhook: endpoint %s: its signing secret is encrypted and no secret key is configured (HUB_SECRET_KEY or a key file)", id)
		}
		v, err := s.ring.Decrypt(ss[i].Value, id)
		if err != nil {
			return hub.Errorf(hub.Code(err), "webhook: endpoint %s: %w", id, err)
		}
		ss[i].Value = v
	}
	return nil
}

// ReencryptSecrets moves every endpoint's values at rest to the key ring's primary key:
// the signing secrets, then the controls' mTLS client key and static header values
// (controls_at_rest.go). Plaintexts from before encryption are encrypted (the upgrade
// path), values under an older key of the ring are encrypted again, current ones are
// left alone. It is idempotent and resumable (opts.After: the Last of an interrupted
// run; the second walk's positions read "controls:<id>"), and each row is replaced only
// if nobody changed it meanwhile (a row changed by an update was written under the
// primary key already). Without Config.Keyring it is FailedPrecondition.
func (t *Transport) ReencryptSecrets(ctx context.Context, opts secrets.ReencryptOptions) (secrets.ReencryptResult, error) {
	if t.st.ring == nil {
		return secrets.ReencryptResult{Last: opts.After}, hub.Errorf(hub.FailedPrecondition, "webhook: no secret key is configured: nothing to encrypt with")
	}
	var first secrets.ReencryptResult
	after, inControls := strings.CutPrefix(opts.After, controlsWalk)
	if !inControls {
		res, err := secrets.Reencrypt(ctx, t.st.ring, secretRows(t.st), opts)
		if err != nil {
			return res, err
		}
		first, after = res, ""
	}
	copts := opts
	copts.After = after
	if opts.Progress != nil {
		copts.Progress = func(r secrets.ReencryptResult) { opts.Progress(sumWalks(first, r)) }
	}
	res, err := secrets.Reencrypt(ctx, t.st.ring, controlRows(t.st), copts)
	return sumWalks(first, res), err
}

// controlsWalk prefixes ReencryptSecrets' resume positions in the controls walk.
const controlsWalk = "controls:"

// sumWalks is the two walks' totals, Last in the controls walk's terms.
func sumWalks(secretsWalk, controls secrets.ReencryptResult) secrets.ReencryptResult {
	return secrets.ReencryptResult{
		Scanned: secretsWalk.Scanned + controls.Scanned,
		Updated: secretsWalk.Updated + controls.Updated,
		Changed: secretsWalk.Changed + controls.Changed,
		Last:    controlsWalk + controls.Last,
	}
}

// SecretsStatus says how the endpoints' secrets are stored, for operators deciding
// whether a re-encryption is due.
type SecretsStatus struct {
	// Endpoints is the number of endpoint rows.
	Endpoints int `json:"endpoints"`
	// Pending counts the rows ReencryptSecrets would rewrite: a plaintext value (a
	// signing secret, the mTLS key or a header value), or one under a key other than the
	// ring's primary. 0 without Config.Keyring.
	Pending int `json:"pending"`
	// Plaintext counts the rows holding a value that is not encrypted.
	Plaintext int `json:"plaintext"`
}

// SecretsStatus reads every endpoint row's secrets and controls columns, without
// decrypting.
func (t *Transport) SecretsStatus(ctx context.Context) (SecretsStatus, error) {
	var st SecretsStatus
	after := ""
	for {
		rows, err := (secretRows(t.st)).Next(ctx, after, 500)
		if err != nil {
			return st, err
		}
		ctl, err := (controlRows(t.st)).Next(ctx, after, 500)
		if err != nil {
			return st, err
		}
		more := map[string][]string{}
		for _, r := range ctl {
			more[r.Key] = r.Values
		}
		for _, r := range rows {
			st.Endpoints++
			pending, plain := false, false
			for _, v := range slices.Concat(r.Values, more[r.Key]) {
				if !secrets.IsEncrypted(v) {
					plain = true
				}
				if t.st.ring != nil && t.st.ring.NeedsReencrypt(v) {
					pending = true
				}
			}
			if pending {
				st.Pending++
			}
			if plain {
				st.Plaintext++
			}
			after = r.Key
		}
		if len(rows) < 500 {
			return st, nil
		}
	}
}

// columnRows is one column of the endpoint table as secrets.Reencrypt walks it: keyset
// pages by id, each row's values at rest. values reads them from the column's text
// (with per-value contexts, or nil for the endpoint id); replace writes new ones back
// into it. Update is a compare-and-swap on the column's text: read, check the values
// are still those the walk saw, write with the old text in the WHERE clause, so a write
// in between makes the update miss (false). The endpoint's version moves on, so an
// update that read the row before loses its optimistic lock and reads it again.
type columnRows struct {
	st      store
	column  string // "secrets" or "controls"
	values  func(id, col string) (values, contexts []string, err error)
	replace func(id, col string, values []string) (string, error)
}

// secretRows walks the signing secrets, bound to the endpoint id.
func secretRows(st store) columnRows {
	return columnRows{st: st, column: "secrets",
		values: func(id, col string) ([]string, []string, error) {
			ss, err := parseSecrets(id, col)
			return secretValues(ss), nil, err
		},
		replace: func(id, col string, values []string) (string, error) {
			ss, err := parseSecrets(id, col)
			if err != nil {
				return "", err
			}
			for i := range ss {
				ss[i].Value = values[i]
			}
			b, err := json.Marshal(ss)
			return string(b), err
		}}
}

func (r columnRows) Next(ctx context.Context, after string, limit int) ([]secrets.Row, error) {
	what := "read " + r.column
	rows, err := r.st.db.QueryContext(ctx, `SELECT id, `+r.column+` FROM webhook_endpoints WHERE id > $1 ORDER BY id LIMIT $2`, after, limit)
	if err != nil {
		return nil, dbErr(what, err)
	}
	defer rows.Close()
	var out []secrets.Row
	for rows.Next() {
		var id, col string
		if err := rows.Scan(&id, &col); err != nil {
			return nil, dbErr(what, err)
		}
		values, contexts, err := r.values(id, col)
		if err != nil {
			return nil, err
		}
		out = append(out, secrets.Row{Key: id, Context: id, Values: values, Contexts: contexts})
	}
	return out, dbErr(what, rows.Err())
}

func (r columnRows) Update(ctx context.Context, row secrets.Row, values []string) (bool, error) {
	what := "reencrypt " + r.column
	var col string
	err := r.st.db.QueryRowContext(ctx, `SELECT `+r.column+` FROM webhook_endpoints WHERE id = $1`, row.Key).Scan(&col)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil // deleted meanwhile
	}
	if err != nil {
		return false, dbErr(what, err)
	}
	now, _, err := r.values(row.Key, col)
	if err != nil {
		return false, err
	}
	if !slices.Equal(now, row.Values) || len(values) != len(now) {
		return false, nil
	}
	next, err := r.replace(row.Key, col, values)
	if err != nil {
		return false, hub.Wrap(hub.Internal, err)
	}
	res, err := r.st.db.ExecContext(ctx, `UPDATE webhook_endpoints SET `+r.column+` = $2, version = version + 1 WHERE id = $1 AND `+r.column+` = $3`,
		row.Key, next, col)
	if err != nil {
		return false, dbErr(what, err)
	}
	n, err := res.RowsAffected()
	return n == 1, dbErr(what, err)
}

func parseSecrets(id, col string) ([]Secret, error) {
	var ss []Secret
	if err := json.Unmarshal([]byte(col), &ss); err != nil {
		return nil, hub.Errorf(hub.Internal, "webhook: endpoint %s: secrets: %w", id, err)
	}
	return ss, nil
}

func secretValues(ss []Secret) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Value
	}
	return out
}

var _ secrets.Rows = columnRows{}
