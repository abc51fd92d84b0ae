//go:build race

package webhook

// raceEnabled: the race detector slows modernc SQLite (C translated to Go) about 15x.
const raceEnabled = true
