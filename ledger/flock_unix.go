//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package ledger

import (
	"errors"
	"os"
	"syscall"
)

// flockSupported: flock(2) is available, so SQLite ledgers hold a presence.
const flockSupported = true

// tryLock takes an exclusive flock on f without waiting: false when another open file
// holds it. The lock lasts until f is closed (or its process ends).
func tryLock(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		}
		return false, err
	}
}
