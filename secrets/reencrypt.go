package secrets

import (
	"context"
	"slices"

	"github.com/koder/eventhub/hub"
)

// Row is one stored row holding encrypted values (or legacy plaintexts).
type Row struct {
	// Key is the row's keyset position: unique, and Rows.Next returns rows in its
	// order. Usually the primary key (the endpoint id).
	Key string
	// Context is the additional data the values are bound to (usually Key too).
	Context string
	// Values are the stored values (an endpoint has one secret per live rotation).
	Values []string
	// Contexts, when set, gives each value its own additional data (Contexts[i] for
	// Values[i], same length), for a row whose values are bound to different uses (an
	// endpoint's TLS key and its header values); Context is then unused.
	Contexts []string
}

// contextOf is the additional data of value i.
func (r Row) contextOf(i int) string {
	if i < len(r.Contexts) {
		return r.Contexts[i]
	}
	return r.Context
}

// Rows is the table Reencrypt walks. Implementations are small: two queries.
type Rows interface {
	// Next returns up to limit rows whose Key is greater than after ("" = from the
	// start), in Key order; fewer than limit means the end.
	Next(ctx context.Context, after string, limit int) ([]Row, error)
	// Update stores values in place of row.Values, only if the row still holds exactly
	// row.Values (compare-and-swap), and reports whether it did. A row changed
	// meanwhile was written by the application, which encrypts with the primary key.
	Update(ctx context.Context, row Row, values []string) (bool, error)
}

// ReencryptOptions tune Reencrypt.
type ReencryptOptions struct {
	// After resumes a walk: the Last of an interrupted run ("" = from the start). A
	// fresh walk is also correct, only slower: current rows are skipped.
	After string
	// BatchSize rows per Next. Default 100.
	BatchSize int
	// Progress, when set, is called after each batch with the totals so far; its Last
	// is safe to persist as the resume point.
	Progress func(ReencryptResult)
}

// ReencryptResult counts a walk.
type ReencryptResult struct {
	Scanned int // rows read
	Updated int // rows rewritten under the primary key
	Changed int // rows that changed during the walk (left as the application wrote them)
	// Last is the Key of the last row fully handled: pass it as After to resume.
	Last string
}

// Reencrypt moves every value of rows to the primary key: plaintexts are encrypted
// (the upgrade path), values under older keys decrypted and encrypted again, current
// ones left alone. It is resumable (see ReencryptOptions.After) and idempotent. When a
// value does not decrypt (a key missing from the ring, a tampered row) it stops with
// that error, Last naming the last row handled, so nothing is skipped silently.
func Reencrypt(ctx context.Context, ring *Keyring, rows Rows, opts ReencryptOptions) (ReencryptResult, error) {
	batch := opts.BatchSize
	if batch <= 0 {
		batch = 100
	}
	res := ReencryptResult{Last: opts.After}
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		page, err := rows.Next(ctx, res.Last, batch)
		if err != nil {
			return res, err
		}
		for _, row := range page {
			if row.Key <= res.Last && res.Last != "" {
				return res, hub.Errorf(hub.Internal, "secrets: Rows.Next returned key %q after %q: not in key order", row.Key, res.Last)
			}
			res.Scanned++
			next, changed, err := reencryptRow(ring, row)
			if err != nil {
				return res, hub.Errorf(hub.Code(err), "secrets: row %s: %w", row.Key, err)
			}
			if changed {
				ok, err := rows.Update(ctx, row, next)
				if err != nil {
					return res, err
				}
				if ok {
					res.Updated++
				} else {
					res.Changed++
				}
			}
			res.Last = row.Key
		}
		if opts.Progress != nil && len(page) > 0 {
			opts.Progress(res)
		}
		if len(page) < batch {
			return res, nil
		}
	}
}

func reencryptRow(ring *Keyring, row Row) ([]string, bool, error) {
	if row.Contexts != nil && len(row.Contexts) != len(row.Values) {
		return nil, false, hub.Errorf(hub.Internal, "secrets: %d contexts for %d values", len(row.Contexts), len(row.Values))
	}
	next := slices.Clone(row.Values)
	changed := false
	for i, v := range row.Values {
		if IsEncrypted(v) {
			if _, _, err := parse(v); err != nil {
				return nil, false, err
			}
		}
		if !ring.NeedsReencrypt(v) {
			continue
		}
		pt, err := ring.Decrypt(v, row.contextOf(i))
		if err != nil {
			return nil, false, err
		}
		if next[i], err = ring.Encrypt(pt, row.contextOf(i)); err != nil {
			return nil, false, err
		}
		changed = true
	}
	return next, changed, nil
}
