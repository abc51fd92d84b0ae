package ledger

import "context"

// Test hooks for package ledger_test.

// PresencePID is the PostgreSQL server process holding l's presence lock (0 when none),
// so a test can terminate exactly that session.
func PresencePID(l *Ledger) uint32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.work == nil {
		return 0
	}
	if h, ok := l.work.pres.(*pgHeld); ok {
		return h.pid()
	}
	return 0
}

// DropPresence gives l's presence up while its River client keeps working: to the other
// Ledgers l now looks dead, which lets a test watch the takeover without a second
// process. Its running jobs go on (a real death would end them).
func DropPresence(l *Ledger) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.work != nil && l.work.pres != nil {
		l.work.pres.release()
	}
}

// CleanRetained runs one pass of the per-queue retention now.
func (l *Ledger) CleanRetained(ctx context.Context) (int, error) { return l.cleanRetained(ctx) }

// Woken is how many in-process wake-ups l's SQLite listeners returned to River.
func Woken(l *Ledger) int64 {
	if l.wake == nil {
		return 0
	}
	return l.wake.woken.Load()
}

// Fetches is how many times l's SQLite producers fetched jobs (-1 on PostgreSQL).
func Fetches(l *Ledger) int64 {
	if l.wake == nil {
		return -1
	}
	return l.wake.fetches.Load()
}

// UnusedRiverIndexes are the River indexes the ledger drops after migrating.
var UnusedRiverIndexes = unusedRiverIndexes

// ReindexIndexes is the list of indexes l gives River's reindexer (nil would be
// River's default).
func ReindexIndexes(l *Ledger) []string { return l.reindexList() }
