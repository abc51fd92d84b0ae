package engine

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// The key commands besides streams: Redis has one keyspace, and clients that move to
// the engine's Redis protocol front bring a few string keys along (the Redis
// transport's R5 idempotency store: EXISTS, SET NX EX; DEL of a dead-letter stream).
// Strings live in kdb_keys (name, value, expiry in Unix ms, 0 = none); DEL, EXISTS
// and TYPE see streams and strings as one keyspace, and a stream cannot be created
// under a live string's name (WRONGTYPE). An expired key reads as missing and is
// removed by a later SET (every sweepKeysEvery SETs delete the expired rows).

// sweepKeysEvery: one SET in this many also deletes expired strings.
const sweepKeysEvery = 1000

// SetOptions are SET's options.
type SetOptions struct {
	NX, XX  bool          // only if missing / only if present
	TTL     time.Duration // EX/PX: expire after TTL (0: no expiry)
	KeepTTL bool          // KEEPTTL: keep the present key's expiry
	Get     bool          // GET: return the old value
}

// SetResult is SET's reply: Set false is Redis's nil (NX/XX not met); Old is the old
// value with GET (OldOK false: there was none).
type SetResult struct {
	Set   bool
	Old   string
	OldOK bool
}

// liveString loads a live string key in tx.
func (e *Engine) liveString(ctx context.Context, tx *sql.Tx, key string, now int64) (value []byte, expires int64, ok bool, err error) {
	err = e.queryRow(ctx, tx, `SELECT value, expires_at FROM kdb_keys WHERE name = ?`, key).Scan(&value, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	if expires > 0 && expires <= now {
		return nil, 0, false, nil
	}
	return value, expires, true, nil
}

// Set mirrors SET key value [NX|XX] [GET] [EX s|PX ms|KEEPTTL]. A stream under key is
// replaced, as Redis's SET replaces a key of any type (with GET it is WRONGTYPE).
func (e *Engine) Set(ctx context.Context, key, value string, o SetOptions) (SetResult, error) {
	var res SetResult
	now := e.nowMs()
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		res = SetResult{}
		s, err := e.lockStream(ctx, tx, key, false)
		if err != nil {
			return err
		}
		old, exp, present, err := e.liveString(ctx, tx, key, now)
		if err != nil {
			return err
		}
		if s != nil {
			if o.Get {
				return errWrongType
			}
			present = true
		}
		res.Old, res.OldOK = string(old), present && s == nil
		if (o.NX && present) || (o.XX && !present) {
			return nil
		}
		if s != nil {
			if err := e.dropStream(ctx, tx, s); err != nil {
				return err
			}
		}
		expires := int64(0)
		switch {
		case o.TTL > 0:
			expires = now + o.TTL.Milliseconds()
		case o.KeepTTL && present && s == nil:
			expires = exp
		}
		if _, err := e.exec(ctx, tx, `INSERT INTO kdb_keys (name, value, expires_at) VALUES (?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`, key, []byte(value), expires); err != nil {
			return err
		}
		res.Set = true
		if e.keySets.Add(1)%sweepKeysEvery == 0 {
			_, err = e.exec(ctx, tx, `DELETE FROM kdb_keys WHERE expires_at > 0 AND expires_at <= ?`, now)
		}
		return err
	})
	return res, err
}

// Get mirrors GET: ok false for a missing key, WRONGTYPE for a stream.
func (e *Engine) Get(ctx context.Context, key string) (value string, ok bool, err error) {
	err = e.inTx(ctx, func(tx *sql.Tx) error {
		v, _, live, err := e.liveString(ctx, tx, key, e.nowMs())
		if err != nil || live {
			value, ok = string(v), live
			return err
		}
		s, err := e.selectStream(ctx, tx, key)
		if err == nil && s != nil {
			return errWrongType
		}
		return err
	})
	return value, ok, err
}

// PTTL mirrors PTTL: the remaining time to live, -1 without expiry, -2 for a missing key.
func (e *Engine) PTTL(ctx context.Context, key string) (int64, error) {
	var ttl int64
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		now := e.nowMs()
		_, exp, live, err := e.liveString(ctx, tx, key, now)
		switch {
		case err != nil:
			return err
		case live && exp > 0:
			ttl = exp - now
		case live:
			ttl = -1
		default:
			s, err := e.selectStream(ctx, tx, key)
			ttl = -2
			if s != nil {
				ttl = -1
			}
			return err
		}
		return nil
	})
	return ttl, err
}

// Type mirrors TYPE: "stream", "string" or "none".
func (e *Engine) Type(ctx context.Context, key string) (string, error) {
	t := "none"
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		s, err := e.selectStream(ctx, tx, key)
		if err != nil || s != nil {
			if s != nil {
				t = "stream"
			}
			return err
		}
		_, _, live, err := e.liveString(ctx, tx, key, e.nowMs())
		if live {
			t = "string"
		}
		return err
	})
	return t, err
}

// Exists mirrors EXISTS: how many of keys exist (a key named twice counts twice).
func (e *Engine) Exists(ctx context.Context, keys ...string) (int64, error) {
	var n int64
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		n = 0
		now := e.nowMs()
		for _, k := range keys {
			s, err := e.selectStream(ctx, tx, k)
			if err != nil {
				return err
			}
			_, _, live, err := e.liveString(ctx, tx, k, now)
			if err != nil {
				return err
			}
			if s != nil || live {
				n++
			}
		}
		return nil
	})
	return n, err
}

// Del mirrors DEL: streams (entries, groups, consumers, pending lists) and strings go;
// it returns how many keys existed. Readers blocked on a deleted stream are woken (and
// find no group).
func (e *Engine) Del(ctx context.Context, keys ...string) (int64, error) {
	var n int64
	var dropped []string
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		n, dropped = 0, nil
		now := e.nowMs()
		for _, k := range keys {
			s, err := e.lockStream(ctx, tx, k, false)
			if err != nil {
				return err
			}
			if s != nil {
				if err := e.dropStream(ctx, tx, s); err != nil {
					return err
				}
				n++
				dropped = append(dropped, k)
				continue
			}
			_, _, live, err := e.liveString(ctx, tx, k, now)
			if err != nil {
				return err
			}
			if _, err := e.exec(ctx, tx, `DELETE FROM kdb_keys WHERE name = ?`, k); err != nil {
				return err
			}
			if live {
				n++
			}
		}
		return nil
	})
	if err == nil {
		for _, k := range dropped {
			e.waiters.notify(k)
		}
	}
	return n, err
}

// dropStream deletes a locked stream and everything under it.
func (e *Engine) dropStream(ctx context.Context, tx *sql.Tx, s *stream) error {
	for _, q := range []string{
		`DELETE FROM kdb_pending WHERE sid = ?`,
		`DELETE FROM kdb_pending_runs WHERE sid = ?`,
		`DELETE FROM kdb_consumers WHERE sid = ?`,
		`DELETE FROM kdb_groups WHERE sid = ?`,
		`DELETE FROM kdb_entries WHERE sid = ?`,
		`DELETE FROM kdb_streams WHERE id = ?`,
	} {
		if _, err := e.exec(ctx, tx, q, s.sid); err != nil {
			return err
		}
	}
	return nil
}
