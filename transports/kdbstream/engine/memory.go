package engine

import (
	"context"
	"database/sql"
	"math"
	"strings"
)

// Sizes of a row's fixed part in bytes (its integer columns and record header), added
// to the bytes of its text and blob columns. They make MEMORY USAGE's figure the size
// of the key's rows, not of Redis's structures; page slack and indexes are not counted.
const (
	streamRowBytes   = 80
	entryRowBytes    = 30
	groupRowBytes    = 40
	consumerRowBytes = 30
	pendingRowBytes  = 40
	stringRowBytes   = 16
)

// memorySampleEntries is how many entries one SAMPLES unit reads: Redis samples that
// many radix-tree nodes of up to stream-node-max-entries (100) entries each.
const memorySampleEntries = 100

// MemoryUsage mirrors MEMORY USAGE key [SAMPLES n]: about how many bytes the key takes
// in the database (ok false when there is no such key). A stream's entries are sized
// from its first n*100 entries (Redis's default n is 5; 0 reads them all) and scaled to
// its length; its groups, consumers and pending entries are counted whole.
//
// redis-cli --memkeys and Redis GUIs ask this of every key they list; the figure is the
// key's rows in SQL, so it compares keys with each other, not with a Redis's memory.
func (e *Engine) MemoryUsage(ctx context.Context, key string, samples int64) (n int64, ok bool, err error) {
	err = e.inTxRelaxed(ctx, func(tx *sql.Tx) error {
		n, ok = 0, false
		s, err := e.selectStream(ctx, tx, key)
		if err != nil {
			return err
		}
		if s == nil {
			v, _, live, err := e.liveString(ctx, tx, key, e.nowMs())
			if live {
				n, ok = int64(len(key)+len(v)+stringRowBytes), true
			}
			return err
		}
		ok = true
		n = int64(streamRowBytes + len(key))
		limit := int64(math.MaxInt64)
		if samples > 0 && samples < math.MaxInt64/memorySampleEntries {
			limit = samples * memorySampleEntries
		}
		var read, bytes int64
		if err := e.queryRow(ctx, tx, `SELECT count(*), COALESCE(SUM(octet_length(fields)), 0) FROM
				(SELECT fields FROM kdb_entries WHERE sid = ? ORDER BY ms, seq LIMIT ?) x`, s.sid, limit).Scan(&read, &bytes); err != nil {
			return err
		}
		if read > 0 {
			n += int64(float64(bytes+read*entryRowBytes) / float64(read) * float64(s.length))
		}
		var groups, groupBytes, consumers, consumerBytes, pending, pendingBytes int64
		if err := e.queryRow(ctx, tx, `SELECT
				(SELECT count(*) FROM kdb_groups WHERE sid = ?),
				(SELECT COALESCE(SUM(octet_length(name)), 0) FROM kdb_groups WHERE sid = ?),
				(SELECT count(*) FROM kdb_consumers WHERE sid = ?),
				(SELECT COALESCE(SUM(octet_length(grp) + octet_length(name)), 0) FROM kdb_consumers WHERE sid = ?),
				(SELECT count(*) FROM kdb_pending WHERE sid = ?) + (SELECT count(*) FROM kdb_pending_runs WHERE sid = ?),
				(SELECT COALESCE(SUM(octet_length(grp) + octet_length(consumer)), 0) FROM kdb_pending WHERE sid = ?) +
				(SELECT COALESCE(SUM(octet_length(grp) + octet_length(consumer) + octet_length(ids)), 0) FROM kdb_pending_runs WHERE sid = ?)`,
			s.sid, s.sid, s.sid, s.sid, s.sid, s.sid, s.sid, s.sid).Scan(&groups, &groupBytes, &consumers, &consumerBytes, &pending, &pendingBytes); err != nil {
			return err
		}
		n += groups*groupRowBytes + groupBytes + consumers*consumerRowBytes + consumerBytes + pending*pendingRowBytes + pendingBytes
		return nil
	})
	return n, ok, err
}

// doMemory serves MEMORY USAGE key [SAMPLES n] (object.c memoryCommand) and MEMORY
// HELP, with Redis's replies to bad arguments; Redis's other subcommands report on its
// allocator, which the engine has not.
func (e *Engine) doMemory(ctx context.Context, a []string) (any, error) {
	switch sub := strings.ToUpper(a[0]); sub {
	case "HELP":
		return []any{
			"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"USAGE <key> [SAMPLES <count>]",
			"    Return the bytes the key's rows take in the database. SAMPLES: how many",
			"    runs of 100 stream entries to size (default 5, 0 for all of them).",
			"HELP",
			"    Print this help.",
		}, nil
	case "USAGE":
		if len(a) < 2 {
			return nil, cmdErr(errSyntax.code, "ERR wrong number of arguments for 'memory|usage' command")
		}
		samples := int64(5)
		for i := 2; i < len(a); i += 2 {
			if !strings.EqualFold(a[i], "SAMPLES") || i+1 >= len(a) {
				return nil, errSyntax
			}
			n, err := parseInt(a[i+1])
			if err != nil {
				return nil, err
			}
			if n < 0 {
				return nil, errSyntax
			}
			samples = n
		}
		n, ok, err := e.MemoryUsage(ctx, a[1], samples)
		if err != nil || !ok {
			return nil, err
		}
		return n, nil
	default:
		return nil, cmdErr(errSyntax.code, "ERR unknown subcommand '%s'. Try MEMORY HELP.", a[0])
	}
}
