//go:build linux || darwin

package sandbox

import (
	"os"

	"golang.org/x/sys/unix"
)

// tryLockFile takes f's flock, shared or exclusive, if it is free now:
// false (and no error) when another open file description holds it.
func tryLockFile(f *os.File, shared bool) (bool, error) {
	how := unix.LOCK_EX
	if shared {
		how = unix.LOCK_SH
	}
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		switch err {
		case nil:
			return true, nil
		case unix.EWOULDBLOCK:
			return false, nil
		case unix.EINTR:
			continue
		}
		return false, err
	}
}

// unlockFile releases f's flock.
func unlockFile(f *os.File) { unix.Flock(int(f.Fd()), unix.LOCK_UN) }
