package engine

import "testing"

// ForEachDialect exposes the shared dialect table to external tests (the Redis
// protocol front's differential mode): body runs once per database, as a parallel
// subtest named after it, with a fresh engine.
func ForEachDialect(t *testing.T, body func(t *testing.T, e *Engine)) {
	forEachDialect(t, func(t *testing.T, d testDialect) { body(t, d.open(t, nil)) })
}

// DifferentialSeeds are the seeds of TestR9_DifferentialAgainstRedis.
var DifferentialSeeds = differentialSeeds
