//go:build linux || darwin

package sandbox

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes f's flock, shared or exclusive, waiting for it.
func lockFile(f *os.File, shared bool) error {
	how := unix.LOCK_EX
	if shared {
		how = unix.LOCK_SH
	}
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			return err
		}
	}
}

// unlockFile releases f's flock.
func unlockFile(f *os.File) { unix.Flock(int(f.Fd()), unix.LOCK_UN) }
