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
		res, err := secrets.Reencrypt(ctx, t.st.ring, secretRows{t.st}, opts)
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
	res, err := secrets.Reencrypt(ctx, t.st.ring, controlRows{t.st}, copts)
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
		rows, err := (secretRows{t.st}).Next(ctx, after, 500)
		if err != nil {
			return st, err
		}
		ctl, err := (controlRows{t.st}).Next(ctx, after, 500)
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
			for _, v := range append(r.Values, more[r.Key]...) {
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

// secretRows is the endpoint table as secrets.Reencrypt walks it: keyset pages by id,
// each row's secret values with the endpoint id as their context.
type secretRows struct{ st store }

func (r secretRows) Next(ctx context.Context, after string, limit int) ([]secrets.Row, error) {
	rows, err := r.st.db.QueryContext(ctx, `SELECT id, secrets FROM webhook_endpoints WHERE id > $1 ORDER BY id LIMIT $2`, after, limit)
	if err != nil {
		return nil, dbErr("read secrets", err)
	}
	defer rows.Close()
	var out []secrets.Row
	for rows.Next() {
		var id, col string
		if err := rows.Scan(&id, &col); err != nil {
			return nil, dbErr("read secrets", err)
		}
		ss, err := parseSecrets(id, col)
		if err != nil {
			return nil, err
		}
		out = append(out, secrets.Row{Key: id, Context: id, Values: secretValues(ss)})
	}
	return out, dbErr("read secrets", rows.Err())
}

// Update replaces the values of row.Key's secrets, keeping their expiries, if the row
// still holds exactly row.Values: the column is read and then written with its old text
// in the WHERE clause, so a write in between makes the update miss (false). The
// endpoint's version moves on, so an update that read the row before loses its
// optimistic lock and reads it again.
func (r secretRows) Update(ctx context.Context, row secrets.Row, values []string) (bool, error) {
	var col string
	err := r.st.db.QueryRowContext(ctx, `SELECT secrets FROM webhook_endpoints WHERE id = $1`, row.Key).Scan(&col)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil // deleted meanwhile
	}
	if err != nil {
		return false, dbErr("reencrypt secrets", err)
	}
	ss, err := parseSecrets(row.Key, col)
	if err != nil {
		return false, err
	}
	if !slices.Equal(secretValues(ss), row.Values) || len(values) != len(ss) {
		return false, nil
	}
	for i := range ss {
		ss[i].Value = values[i]
	}
	b, err := json.Marshal(ss)
	if err != nil {
		return false, hub.Wrap(hub.Internal, err)
	}
	res, err := r.st.db.ExecContext(ctx, `UPDATE webhook_endpoints SET secrets = $2, version = version + 1 WHERE id = $1 AND secrets = $3`,
		row.Key, string(b), col)
	if err != nil {
		return false, dbErr("reencrypt secrets", err)
	}
	n, err := res.RowsAffected()
	return n == 1, dbErr("reencrypt secrets", err)
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

var _ secrets.Rows = secretRows{}
