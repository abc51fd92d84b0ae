//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package ledger

import (
	"errors"
	"os"
)

// flockSupported: no flock(2) here; SQLite ledgers rely on the lease alone.
const flockSupported = false

func tryLock(*os.File) (bool, error) { return false, errors.New("ledger: file locks not supported") }
