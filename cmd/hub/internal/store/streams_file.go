package store

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite" // the pure-Go "sqlite" database/sql driver
)

// streamsPath is the SQLite file of the kdbstream engine: store.streams_sqlite when
// set, else the store's file. A store file that already holds stream entries while the
// streams file does not exist yet keeps the streams (an upgrade from one file must not
// hide the stream written so far): the setting is ignored with a warning.
func (s *Store) streamsPath(ctx context.Context) (string, error) {
	main, err := s.sqlitePath()
	if err != nil || s.cfg.StreamsSQLite == "" {
		return main, err
	}
	p := s.cfg.StreamsSQLite
	if s.file != nil {
		p = s.file.Resolve(p)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		return p, nil // exists (or cannot be looked at: opening it reports why)
	}
	if holdsStreams(ctx, main) {
		s.logger.Warn("kdbstream: the store's file already holds streams; they stay there (store.streams_sqlite ignored)",
			"file", main, "streams_sqlite", p)
		return main, nil
	}
	return p, nil
}

// holdsStreams reports whether the SQLite file at path has kdbstream entries.
func holdsStreams(ctx context.Context, path string) bool {
	if _, err := os.Stat(path); err != nil {
		return false
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return false
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM kdb_entries LIMIT 1)").Scan(&n); err != nil {
		return false // no such table: no streams
	}
	return n > 0
}
