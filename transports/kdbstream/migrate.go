package kdbstream

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/koder/eventhub/hub"
	"github.com/koder/eventhub/streams"
	"github.com/koder/eventhub/transports/kdbstream/engine"
)

// DefaultMigrateBatch is how many entries one XRANGE page (and one target transaction)
// carries.
const DefaultMigrateBatch = 1000

// MigrateOptions configures Migrate.
type MigrateOptions struct {
	// Streams to copy. Each stream's dead-letter stream (streams.DLQStreamFor) is
	// copied too when it exists and is not listed.
	Streams []string
	// DryRun reads the source and reports what would be copied, writing nothing.
	DryRun bool
	// Progress, when set, is called after each page of entries and after each stream's
	// group state with how far the copy is. Migrate only reports; drawing is the
	// caller's (hub migrate shows a progress bar). It runs on Migrate's goroutine, so
	// a slow Progress slows the copy.
	Progress func(Progress)
	// BatchSize is the XRANGE page size (default 1000).
	BatchSize int
}

// Progress is how far a migration is, as reported to MigrateOptions.Progress.
type Progress struct {
	// Stream is the stream being copied.
	Stream string
	// Done counts the entries and pending entries copied so far over all streams (that
	// would be copied, in a dry run). Total is their number in the sources when Migrate
	// started; entries appended since can take Done past it.
	Done, Total int64
}

// MigrateReport is what Migrate did (or, in a dry run, would do) per stream.
type MigrateReport struct {
	DryRun  bool           `json:"dry_run"`
	Streams []StreamReport `json:"streams"`
}

// StreamReport is one stream's migration.
type StreamReport struct {
	Stream       string        `json:"stream"`
	ResumedAfter string        `json:"resumed_after,omitempty"` // the target's last id when a previous run had copied part of it
	Copied       int64         `json:"copied"`                  // entries copied by this run (would copy, in a dry run)
	SourceLength int64         `json:"source_length"`
	TargetLength int64         `json:"target_length"` // after the run (0 in a dry run)
	Groups       []GroupReport `json:"groups"`
	Problems     []string      `json:"problems"` // verification differences; empty when the copy matches
}

// GroupReport is one group's migrated state.
type GroupReport struct {
	Name            string `json:"name"`
	LastDeliveredID string `json:"last_delivered_id"`
	Consumers       int    `json:"consumers"`
	Pending         int64  `json:"pending"`
}

// OK reports whether every stream verified.
func (r *MigrateReport) OK() bool {
	for _, s := range r.Streams {
		if len(s.Problems) > 0 {
			return false
		}
	}
	return true
}

// Migrate copies the in-flight state of streams from Redis into the engine (R9):
// entries with their ids (XRANGE in pages), then each group's last-delivered id and
// entries-read, its consumers, and its pending entries with owner, idle time and
// delivery count (XPENDING's extended form). Consumers then continue on kdbstream:
// every entry un-acked in Redis is pending (or not yet delivered) there, every acked
// one is neither.
//
// It is resumable: the target stream's last id is the checkpoint (written in the same
// transaction as each page), so a second run copies only what is missing, and the
// group state is replaced, not added to. Stop producers and consumers on Redis first
// (the runbook in docs/kdbstream.md); entries appended during the copy are picked up by
// a re-run. At the end it verifies lengths, counters and pending counts against the
// source and returns the report; err is non-nil when verification failed.
func Migrate(ctx context.Context, rdb redis.UniversalClient, eng *engine.Engine, opts MigrateOptions) (*MigrateReport, error) {
	if rdb == nil || eng == nil {
		return nil, hub.Errorf(hub.InvalidArgument, "kdbstream: Migrate needs a Redis client and an engine")
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultMigrateBatch
	}
	names, err := migrationStreams(ctx, rdb, opts.Streams)
	if err != nil {
		return nil, err
	}
	srcs := make([]*sourceStream, 0, len(names))
	var total int64
	for _, n := range names {
		src, err := readSource(ctx, rdb, n)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, src)
		total += src.info.Length + src.pendingTotal()
	}
	rep := &MigrateReport{DryRun: opts.DryRun}
	m := &migration{rdb: rdb, eng: eng, opts: opts, total: total}
	for _, src := range srcs {
		sr, err := m.stream(ctx, src)
		if err != nil {
			return rep, err
		}
		rep.Streams = append(rep.Streams, sr)
	}
	if !rep.OK() {
		return rep, hub.Errorf(hub.Internal, "kdbstream: migration verification failed: %v", rep.problems())
	}
	return rep, nil
}

func (r *MigrateReport) problems() []string {
	var out []string
	for _, s := range r.Streams {
		for _, p := range s.Problems {
			out = append(out, s.Stream+": "+p)
		}
	}
	return out
}

// migrationStreams adds each stream's existing DLQ stream to the list.
func migrationStreams(ctx context.Context, rdb redis.UniversalClient, names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, hub.Errorf(hub.InvalidArgument, "kdbstream: MigrateOptions.Streams is empty")
	}
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, s := range names {
		add(s)
	}
	for _, s := range names {
		dlq := streams.DLQStreamFor(s)
		n, err := rdb.Exists(ctx, dlq).Result()
		if err != nil {
			return nil, hub.Wrap(hub.Unavailable, err)
		}
		if n > 0 {
			add(dlq)
		}
	}
	return out, nil
}

type migration struct {
	rdb   redis.UniversalClient
	eng   *engine.Engine
	opts  MigrateOptions
	done  int64
	total int64
}

func (m *migration) progress(stream string, n int64) {
	m.done += n
	if m.opts.Progress != nil {
		m.opts.Progress(Progress{Stream: stream, Done: m.done, Total: m.total})
	}
}

func (m *migration) stream(ctx context.Context, src *sourceStream) (StreamReport, error) {
	sr := StreamReport{Stream: src.name, SourceLength: src.info.Length}
	start := "-"
	last, exists, err := m.eng.LastID(ctx, src.name)
	if err != nil {
		return sr, err
	}
	if exists && !last.IsZero() {
		sr.ResumedAfter = last.String()
		start = "(" + last.String()
	}
	// Copy entries page by page.
	for {
		page, err := xrange(ctx, m.rdb, src.name, start, m.opts.BatchSize)
		if err != nil {
			return sr, err
		}
		if len(page) == 0 {
			break
		}
		if !m.opts.DryRun {
			if err := m.eng.ImportEntries(ctx, src.name, page); err != nil {
				return sr, fmt.Errorf("kdbstream: migrate %s: entries after %s: %w", src.name, start, err)
			}
		}
		sr.Copied += int64(len(page))
		m.progress(src.name, int64(len(page)))
		start = "(" + page[len(page)-1].ID.String()
		if len(page) < m.opts.BatchSize {
			break
		}
	}
	for _, g := range src.groups {
		sr.Groups = append(sr.Groups, GroupReport{Name: g.Name, LastDeliveredID: g.LastDeliveredID.String(), Consumers: len(g.Consumers), Pending: int64(len(g.Pending))})
	}
	if m.opts.DryRun {
		m.progress(src.name, src.pendingTotal())
		return sr, nil
	}
	if err := m.eng.ImportState(ctx, src.name, src.state()); err != nil {
		return sr, fmt.Errorf("kdbstream: migrate %s: group state: %w", src.name, err)
	}
	m.progress(src.name, src.pendingTotal())
	return sr, m.verify(ctx, src, &sr)
}

// verify compares the target with the source snapshot.
func (m *migration) verify(ctx context.Context, src *sourceStream, sr *StreamReport) error {
	si, err := m.eng.XInfoStream(ctx, src.name)
	if err != nil {
		return err
	}
	sr.TargetLength = si.Length
	check := func(what string, want, got any) {
		if fmt.Sprint(want) != fmt.Sprint(got) {
			sr.Problems = append(sr.Problems, fmt.Sprintf("%s: source %v, target %v", what, want, got))
		}
	}
	check("length", src.info.Length, si.Length)
	check("last-generated-id", src.info.LastGeneratedID, si.LastGeneratedID.String())
	check("entries-added", src.info.EntriesAdded, si.EntriesAdded)
	gs, err := m.eng.XInfoGroups(ctx, src.name)
	if err != nil {
		return err
	}
	byName := map[string]engine.GroupInfo{}
	for _, g := range gs {
		byName[g.Name] = g
	}
	for _, g := range src.groups {
		t, ok := byName[g.Name]
		if !ok {
			sr.Problems = append(sr.Problems, "group "+g.Name+" missing")
			continue
		}
		check("group "+g.Name+" last-delivered-id", g.LastDeliveredID.String(), t.LastDeliveredID.String())
		check("group "+g.Name+" pending", len(g.Pending), t.Pending)
		check("group "+g.Name+" consumers", len(g.Consumers), t.Consumers)
	}
	return nil
}

// sourceStream is the Redis side of one stream, read before the copy.
type sourceStream struct {
	name   string
	info   redisInfo
	groups []engine.GroupState
}

type redisInfo struct {
	Length            int64
	LastGeneratedID   string
	MaxDeletedEntryID string
	EntriesAdded      int64
}

func (s *sourceStream) pendingTotal() int64 {
	var n int64
	for _, g := range s.groups {
		n += int64(len(g.Pending))
	}
	return n
}

func (s *sourceStream) state() engine.StreamState {
	last, _ := engine.ParseStrictID(s.info.LastGeneratedID)
	maxDel, _ := engine.ParseStrictID(s.info.MaxDeletedEntryID)
	return engine.StreamState{LastGeneratedID: last, EntriesAdded: s.info.EntriesAdded, MaxDeletedEntryID: maxDel, Groups: s.groups}
}
