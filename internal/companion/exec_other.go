//go:build !linux

package companion

import (
	"os"
	"syscall"
)

// execChecked opens the checked file, makes sure it is an executable
// regular file and the very file at canon, then runs it by path: Go's
// syscall package has no fexecve here (and no /proc/self/fd to run a
// descriptor by). The path was checked to lie, with every ancestor,
// outside every writable root, so nothing a sandboxed call may write can
// swap it between the check and the exec. (On Windows syscall.Exec is not
// supported and the call fails.)
func execChecked(lookup, canon string, writable, argv, env []string) error {
	f, err := os.OpenFile(canon, os.O_RDONLY|syscall.O_NONBLOCK, 0) // fsbox's own program file (package comment)
	if err != nil {
		if os.IsNotExist(err) {
			return &MissingError{Path: lookup, Err: err}
		}
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return &MissingError{Path: lookup}
	}
	again, err := os.Lstat(canon) // the same program file, checked again: no sandbox holds fsbox's own binaries
	if err != nil || !os.SameFile(fi, again) {
		return &os.PathError{Op: "open", Path: canon, Err: errMoved}
	}
	if err := syscall.Exec(canon, argv, env); err != nil {
		return &os.PathError{Op: "exec", Path: canon, Err: err}
	}
	return nil
}
