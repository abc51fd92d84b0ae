package engine

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/koder/eventhub/hub"
)

// The keyspace listing commands: KEYS, SCAN and DBSIZE over streams and live strings,
// the two kinds of key the engine holds (redis-cli --scan, RedisInsight's browser and
// ops scripts list keys before anything else).
//
// A SCAN cursor must be an unsigned 64-bit number (go-redis parses it as one), while
// the keyspace is ordered by name in the database, which no number can resume from
// without an integer key on every row. So, like kvrocks's numeric cursors, a cursor is
// a random number the engine maps to the last name a page returned: in memory
// (scanCursors keeps the newest maxScanCursors) and, on PostgreSQL, in the shared
// kdb_scan_cursors table too, so a page may be asked of any hub of the database (a
// client behind a load balancer), for scanCursorTTL. Every key present for a whole
// iteration is returned, and no key twice; a cursor the engine no longer knows (too
// old, or from a SQLite engine's earlier run) is an error, never a silent restart. Each
// page is one statement: the streams and the live strings after the cursor's name,
// merged in the database's own order of names.

// scanCursorTTL is how long a cursor stays valid in kdb_scan_cursors (PostgreSQL);
// an iteration idle for longer starts again.
const scanCursorTTL = time.Hour

// maxScanCursors bounds the iterations the engine remembers.
const maxScanCursors = 4096

// defaultScanCount is SCAN's COUNT when the client gives none (Redis's).
const defaultScanCount = 10

var errInvalidCursor = cmdErr(hub.InvalidArgument, "ERR invalid cursor")

// scanCursors maps cursor numbers to the name a page ended on.
type scanCursors struct {
	mu    sync.Mutex
	last  map[uint64]string
	order []uint64 // insertion order, oldest first, for eviction
}

func (c *scanCursors) put(name string) uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := binary.LittleEndian.Uint64(b[:]) | 1 // never 0, SCAN's end
	c.putID(id, name)
	return id
}

func (c *scanCursors) putID(id uint64, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = make(map[uint64]string)
	}
	c.last[id] = name
	c.order = append(c.order, id)
	if len(c.order) > maxScanCursors {
		delete(c.last, c.order[0])
		c.order = c.order[1:]
	}
}

// putCursor makes a cursor for name: in memory and, on PostgreSQL, in the shared
// table, pruning cursors past scanCursorTTL now and then (the table stays as small
// as the iterations of the last hour).
func (e *Engine) putCursor(ctx context.Context, name string) (uint64, error) {
	id := e.cursors.put(name)
	if !e.Postgres() {
		return id, nil
	}
	now := e.nowMs()
	if _, err := e.db.ExecContext(ctx, e.Rebind(`INSERT INTO kdb_scan_cursors (id, after, created_ms) VALUES (?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET after = excluded.after, created_ms = excluded.created_ms`), int64(id), name, now); err != nil {
		return 0, classify(err)
	}
	if id%64 == 1 {
		if _, err := e.db.ExecContext(ctx, e.Rebind(`DELETE FROM kdb_scan_cursors WHERE created_ms < ?`), now-scanCursorTTL.Milliseconds()); err != nil {
			return 0, classify(err)
		}
	}
	return id, nil
}

// cursorName returns where cursor id's page ended: this engine's memory first, then
// (PostgreSQL) the table another hub may have written it to.
func (e *Engine) cursorName(ctx context.Context, id uint64) (string, error) {
	if name, ok := e.cursors.get(id); ok {
		return name, nil
	}
	if !e.Postgres() {
		return "", errInvalidCursor
	}
	var name string
	err := e.db.QueryRowContext(ctx, e.Rebind(`SELECT after FROM kdb_scan_cursors WHERE id = ? AND created_ms >= ?`),
		int64(id), e.nowMs()-scanCursorTTL.Milliseconds()).Scan(&name)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", errInvalidCursor
	case err != nil:
		return "", classify(err)
	}
	e.cursors.putID(id, name)
	return name, nil
}

func (c *scanCursors) get(id uint64) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	name, ok := c.last[id]
	return name, ok
}

// ScanOptions are SCAN's options.
type ScanOptions struct {
	Match string // a glob (Redis's syntax); "" and "*" are every key
	Count int64  // keys examined in this page; 0 is defaultScanCount
	Type  string // "stream" or "string" only; "" is both
}

// Scan mirrors SCAN cursor [MATCH pattern] [COUNT n] [TYPE t]: it examines up to Count
// keys after cursor (0 starts an iteration) and returns those matching, and the cursor
// of the next page (0 when the iteration is over).
func (e *Engine) Scan(ctx context.Context, cursor uint64, o ScanOptions) (next uint64, keys []string, err error) {
	after, first := "", cursor == 0
	if !first {
		if after, err = e.cursorName(ctx, cursor); err != nil {
			return 0, nil, err
		}
	}
	count := o.Count
	if count <= 0 {
		count = defaultScanCount
	}
	names, kinds, err := e.listKeys(ctx, after, first, count+1)
	if err != nil {
		return 0, nil, err
	}
	more := int64(len(names)) > count
	if more {
		names, kinds = names[:count], kinds[:count]
	}
	keys = []string{}
	for i, n := range names {
		if (o.Type == "" || o.Type == kinds[i]) && (o.Match == "" || keyMatches(o.Match, n)) {
			keys = append(keys, n)
		}
	}
	if more {
		if next, err = e.putCursor(ctx, names[len(names)-1]); err != nil {
			return 0, nil, err
		}
	}
	return next, keys, nil
}

// Keys mirrors KEYS pattern: every key matching, in name order.
func (e *Engine) Keys(ctx context.Context, pattern string) ([]string, error) {
	names, _, err := e.listKeys(ctx, "", true, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, n := range names {
		if keyMatches(pattern, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// keyMatches is KEYS's and SCAN MATCH's test: "*" is every key, the empty name too
// (db.c's allkeys; Redis's glob alone does not match "" with "*").
func keyMatches(pattern, name string) bool { return pattern == "*" || globMatch(pattern, name, false) }

// DBSize mirrors DBSIZE: how many keys (streams and live strings) there are.
func (e *Engine) DBSize(ctx context.Context) (int64, error) {
	n, _, err := e.Keyspace(ctx)
	return n, err
}

// Keyspace is INFO keyspace's db0 line: the keys (streams and live strings) and how
// many of them expire.
func (e *Engine) Keyspace(ctx context.Context) (keys, expires int64, err error) {
	now := e.nowMs()
	err = e.inTxRelaxed(ctx, func(tx *sql.Tx) error {
		return e.queryRow(ctx, tx, `SELECT (SELECT count(*) FROM kdb_streams) +
				(SELECT count(*) FROM kdb_keys WHERE expires_at = 0 OR expires_at > ?),
			(SELECT count(*) FROM kdb_keys WHERE expires_at > ?)`, now, now).Scan(&keys, &expires)
	})
	return keys, expires, err
}

// listKeys returns up to limit names after after (from the first
// when first), streams and live strings in the database's order, with each one's type.
func (e *Engine) listKeys(ctx context.Context, after string, first bool, limit int64) (names, kinds []string, err error) {
	err = e.inTxRelaxed(ctx, func(tx *sql.Tx) error {
		names, kinds = nil, nil
		rows, err := e.query(ctx, tx, `SELECT name, kind FROM (
				SELECT name, 'stream' AS kind FROM kdb_streams WHERE (? OR name > ?)
				UNION ALL
				SELECT name, 'string' AS kind FROM kdb_keys WHERE (? OR name > ?) AND (expires_at = 0 OR expires_at > ?)
			) k ORDER BY name LIMIT ?`, first, after, first, after, e.nowMs(), limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var n, k string
			if err := rows.Scan(&n, &k); err != nil {
				return err
			}
			names, kinds = append(names, n), append(kinds, k)
		}
		return rows.Err()
	})
	return names, kinds, err
}

func (e *Engine) doKeys(ctx context.Context, a []string) (any, error) {
	keys, err := e.Keys(ctx, a[0])
	return bulks(keys), err
}

// bulks is a reply array of bulk strings.
func bulks(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func (e *Engine) doDBSize(ctx context.Context, _ []string) (any, error) { return e.DBSize(ctx) }

// doScan parses SCAN cursor [MATCH pattern] [COUNT count] [TYPE type] (db.c scanGenericCommand).
func (e *Engine) doScan(ctx context.Context, a []string) (any, error) {
	cursor, err := strconv.ParseUint(a[0], 10, 64)
	if err != nil {
		return nil, errInvalidCursor
	}
	var o ScanOptions
	for i := 1; i < len(a); i += 2 {
		if i+1 >= len(a) {
			return nil, errSyntax
		}
		switch strings.ToUpper(a[i]) {
		case "MATCH":
			o.Match = a[i+1]
		case "COUNT":
			n, err := parseInt(a[i+1])
			if err != nil {
				return nil, err
			}
			if n < 1 {
				return nil, errSyntax
			}
			o.Count = n
		case "TYPE":
			o.Type = strings.ToLower(a[i+1])
		default:
			return nil, errSyntax
		}
	}
	next, keys, err := e.Scan(ctx, cursor, o)
	if err != nil {
		return nil, err
	}
	return []any{strconv.FormatUint(next, 10), bulks(keys)}, nil
}

// globMatch is Redis's stringmatchlen (util.c, 7.0): * any run, ? one byte, [abc],
// [^abc] and [a-z] classes, \ escapes the next byte; nocase folds ASCII. A port rather
// than path.Match: path.Match stops * at '/' and reports bad patterns as errors, where
// Redis matches '/' like any byte and reads every pattern somehow (an unclosed [ is a
// class to the end). Backtracking is bounded as Redis bounds it: after a * fails for
// the rest of the string, earlier *s do not retry (skipLonger), and nesting stops at
// 1000.
func globMatch(pattern, s string, nocase bool) bool {
	skip := false
	return globMatchAt(pattern, s, nocase, &skip, 0)
}

// GlobMatch is Redis's glob (KEYS, SCAN MATCH, CONFIG GET), nocase folding ASCII.
func GlobMatch(pattern, s string, nocase bool) bool { return globMatch(pattern, s, nocase) }

func globMatchAt(p, s string, nocase bool, skipLonger *bool, nesting int) bool {
	if nesting > 1000 {
		return false
	}
	at := func(i int) byte { // p[i], or 0 past the end (C's terminator)
		if i < len(p) {
			return p[i]
		}
		return 0
	}
	fold := func(c byte) byte {
		if nocase && c >= 'A' && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for len(s) > 0 {
				if globMatchAt(p[1:], s, nocase, skipLonger, nesting+1) {
					return true
				}
				if *skipLonger {
					return false
				}
				s = s[1:]
			}
			*skipLonger = true
			return false
		case '?':
			s = s[1:]
		case '[':
			p = p[1:]
			not := at(0) == '^'
			if not {
				p = p[1:]
			}
			match := false
			for {
				if at(0) == '\\' && len(p) >= 2 {
					p = p[1:]
					if p[0] == s[0] {
						match = true
					}
				} else if at(0) == ']' || len(p) == 0 {
					// The class ends; an unclosed one ends with the pattern (Redis steps
					// back onto its last byte so that the step below empties it).
					break
				} else if len(p) >= 3 && p[1] == '-' {
					lo, hi, c := fold(p[0]), fold(p[2]), fold(s[0])
					if lo > hi {
						lo, hi = hi, lo
					}
					p = p[2:]
					if c >= lo && c <= hi {
						match = true
					}
				} else if fold(p[0]) == fold(s[0]) {
					match = true
				}
				p = p[1:]
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			s = s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if fold(p[0]) != fold(s[0]) {
				return false
			}
			s = s[1:]
		}
		if len(p) > 0 {
			p = p[1:]
		}
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}
