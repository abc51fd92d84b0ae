package ledger

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// filePresence is presence on SQLite: one lock file per worker in a directory next to
// the database (<database>-presence/<worker id>.lock), held with an exclusive flock for
// the worker's lifetime. flock locks belong to the open file, so another Ledger, in
// this process or another, cannot take one while its holder keeps it open, and the
// kernel drops it when the holder dies however it dies. See presence.go.
type filePresence struct {
	dir string
	log *slog.Logger
}

const lockSuffix = ".lock"

// newFilePresence returns nil where flock is not available: SQLite ledgers there use
// the lease alone.
func newFilePresence(dbPath string, log *slog.Logger) (*filePresence, error) {
	if !flockSupported {
		log.Info("ledger: no file locks on this platform; a dead process's jobs wait for the lease")
		return nil, nil
	}
	abs, err := filepath.Abs(dbPath)
	if err != nil {
		return nil, fmt.Errorf("ledger: presence directory of %s: %w", dbPath, err)
	}
	return &filePresence{dir: abs + "-presence", log: log}, nil
}

func (b *filePresence) grace() time.Duration { return 0 }

func (b *filePresence) path(id string) string { return filepath.Join(b.dir, id+lockSuffix) }

// hold creates the worker's lock file already locked: it is locked under a temporary
// name, then renamed into place, so a file under a worker's name is never seen
// unlocked while its worker lives (a sweeper would take that for a death).
func (b *filePresence) hold(_ context.Context, id string) (presence, error) {
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return nil, fmt.Errorf("ledger: presence directory: %w", err)
	}
	f, err := os.CreateTemp(b.dir, ".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("ledger: presence file: %w", err)
	}
	ok, err := tryLock(f)
	if err == nil && !ok {
		err = errors.New("a fresh file is locked by someone else")
	}
	if err == nil {
		err = os.Rename(f.Name(), b.path(id))
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("ledger: presence lock: %w", err)
	}
	return &fileHeld{f: f, path: b.path(id)}, nil
}

type fileHeld struct {
	f    *os.File
	path string
	once sync.Once
}

func (h *fileHeld) lost() <-chan struct{} { return nil } // held until the process ends

// release closes the file, which drops the lock. The file stays: it is what tells the
// others that the worker existed and is gone, should it have left running jobs. The
// Ledger removes it when it stopped without any (forget), or whoever takes them does.
func (h *fileHeld) release() {
	h.once.Do(func() { h.f.Close() })
}

// gone tests each worker's lock file: one that can be locked belongs to a dead worker.
// A missing file proves nothing (removed by hand, or a different directory): not gone.
func (b *filePresence) gone(_ context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, id := range ids {
		free, err := b.free(b.path(id))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return out, err
		}
		if free {
			out[id] = true
		}
	}
	return out, nil
}

// free reports whether nobody holds the lock of the file at path.
func (b *filePresence) free(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false, err
	}
	defer f.Close() // also drops our lock, if we got it
	return tryLock(f)
}

// forget removes the lock files of workers whose jobs were taken: they are dead, and
// their ids never come back.
func (b *filePresence) forget(ids []string) {
	for _, id := range ids {
		if err := os.Remove(b.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			b.log.Warn("ledger: remove presence file", slog.String("error", err.Error()))
		}
	}
}

// collect removes the files of dead workers that hold no job (killed while idle, or
// rescued by a process that died before forgetting them) and abandoned temporary files.
func (b *filePresence) collect(keep map[string]bool) {
	entries, err := os.ReadDir(b.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		id, isLock := strings.CutSuffix(name, lockSuffix)
		switch {
		case isLock && isWorkerID(id) && !keep[id]:
		case strings.HasPrefix(name, ".tmp-") && stale(e):
			// A temporary file is unlocked for an instant before its creator locks it:
			// only an old one is abandoned.
		default:
			continue
		}
		p := filepath.Join(b.dir, name)
		if free, err := b.free(p); err == nil && free {
			os.Remove(p)
		}
	}
}

var _ presenceBackend = (*filePresence)(nil)

func stale(e fs.DirEntry) bool {
	info, err := e.Info()
	return err == nil && time.Since(info.ModTime()) > time.Minute
}
