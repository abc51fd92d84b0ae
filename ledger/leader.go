package ledger

import "hash/fnv"

// Leader reports whether this Ledger is the one, among the started Ledgers sharing its
// schema, that runs the work and exports the metrics that must happen once per schema
// rather than once per replica: pruning shared tables, gauges read from shared state
// (a webhook breaker's state is the same row on every replica; exported by all, a sum
// over replicas would count it N times).
//
// On PostgreSQL it is a session advisory lock on the schema, taken on the presence
// connection (presence.go) by the first started Ledger and retried by the others at
// every presence check, so when the leader dies or loses its connection another takes
// over within PresenceInterval/2. There may be a moment with no leader, never two at
// once on one server. On SQLite, whose file belongs to one hub process, a Ledger is its
// own leader. A Ledger that is not started, or runs with presence turned off, on
// PostgreSQL is not a leader.
func (l *Ledger) Leader() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.backend == SQLite {
		return true
	}
	if l.work == nil || l.work.pres == nil {
		return false
	}
	lp, ok := l.work.pres.(interface{ leads() bool })
	return ok && lp.leads()
}

// leaderKey is the advisory lock key of a schema's singleton lock.
func leaderKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("eventhub.ledger.leader\x00"))
	h.Write([]byte(schema))
	return int64(h.Sum64())
}
