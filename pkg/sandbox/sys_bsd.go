//go:build unix && !linux

package sandbox

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// renameNoReplace gives the target's name to tmp only if the name is
// free: link(2) fails on an existing name, then tmp is unlinked.
func renameNoReplace(w *WriteTarget, tmp string) error {
	dfd := int(w.dirF.Fd())
	err := unix.Linkat(dfd, tmp, dfd, w.Name, 0)
	if err == unix.EEXIST {
		return fs.ErrExist
	}
	if err == nil {
		unix.Unlinkat(dfd, tmp, 0)
	}
	return err
}
