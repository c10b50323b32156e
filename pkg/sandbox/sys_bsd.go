//go:build unix && !linux && !darwin

package sandbox

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// renameNoReplace gives the target's name to tmp only if the name is
// free: link(2) fails on an existing name, then tmp is unlinked.
func renameNoReplace(w *WriteTarget, tmp string) error {
	return renameNoReplaceFrom(w, tmp, w.Name)
}

// renameNoReplaceFrom renames from to to inside the target's pinned
// directory, only if to is free (link, which fails on an existing name,
// then unlink).
func renameNoReplaceFrom(w *WriteTarget, from, to string) error {
	dfd := int(w.dirF.Fd())
	err := unix.Linkat(dfd, from, dfd, to, 0)
	if err == unix.EEXIST {
		return fs.ErrExist
	}
	if err == nil {
		unix.Unlinkat(dfd, from, 0)
	}
	return err
}

// exchangeAt swaps the target's name and tmp: in three renames here (not
// in one step; see the README's table of what holds where).
func exchangeAt(w *WriteTarget, tmp string) error { return exchangeByRenames(w, tmp) }
