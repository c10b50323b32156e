//go:build linux || darwin

package sandbox

import (
	"io/fs"

	"github.com/fsbox/fsbox/pkg/fserr"
	"golang.org/x/sys/unix"
)

// errNoReplaceDir: a directory on a filesystem without a no-replace
// rename cannot be moved without the risk of replacing a name that
// appeared meanwhile, so it is not moved (force takes that risk).
func errNoReplaceDir(to string) error {
	return fserr.Errorf(fserr.CodeConflict, to, "this filesystem has no rename that refuses to replace, and a directory cannot be linked: %s not moved", to).WithHint(fserr.Hint{Option: "force", Text: "(%s moves it anyway)"})
}

// linkNoReplace gives from's file the name to only if to is free, where
// the filesystem has no no-replace rename: link(2) fails on an existing
// name, then from is unlinked. A directory (which cannot be linked) is
// refused.
func linkNoReplace(fromDir int, from string, toDir int, to string) error {
	err := unix.Linkat(fromDir, from, toDir, to, 0)
	switch err {
	case nil:
		return unix.Unlinkat(fromDir, from, 0)
	case unix.EEXIST:
		return fs.ErrExist
	case unix.EPERM, unix.EISDIR:
		return errNoReplaceDir(to)
	}
	return err
}
