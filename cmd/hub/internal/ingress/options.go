package ingress

import (
	"time"

	"github.com/koder/eventhub/hub"
)

// Options are the ingress's id rules and deduplication, as source.http keys. The zero
// value deduplicates over R5's 24 h window and accepts any id up to MaxIDLength.
type Options struct {
	// DedupeWindow is how long an accepted (tenant, event id) is remembered: the same
	// event again is answered as a duplicate and stored nowhere, other content under the
	// id is a 409. Default 24h (R5).
	DedupeWindow time.Duration `yaml:"dedupe_window"`
	// NoDedupe accepts every event as new (consumers still deduplicate, R5).
	NoDedupe bool `yaml:"no_dedupe"`
	// DedupeMaxEntries bounds the in-memory window used when the config has no store
	// (then the window is per process and forgotten on restart). Default 100000.
	DedupeMaxEntries int `yaml:"dedupe_max_entries"`
	// RequireULIDIDs refuses events whose id is not evt_<ULID> (C1), for publishers the
	// operator controls. Default false: CloudEvents allows any id.
	RequireULIDIDs bool `yaml:"require_ulid_ids"`
	// NoGroupCommit publishes every request on its own (one transaction and commit
	// each). Default false: concurrent requests are published together (group.go),
	// each answered only once its group committed, so N small requests cost about one
	// commit.
	NoGroupCommit bool `yaml:"no_group_commit"`
	// GroupCommit tunes the grouping: window (default 0: only the requests already
	// waiting), max_requests (64), max_events (1000), committers (2).
	GroupCommit GroupConfig `yaml:"group_commit"`
}

// SetDefaults fills the zero fields.
func (o *Options) SetDefaults() {
	if o.DedupeWindow == 0 {
		o.DedupeWindow = hub.DefaultIdempotencyTTL
	}
	if o.DedupeMaxEntries == 0 {
		o.DedupeMaxEntries = hub.DefaultIdempotencyMaxEntries
	}
}
