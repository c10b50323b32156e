package companion

import (
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// execChecked opens the checked file, makes sure the descriptor is the
// file checked (an executable regular file whose canonical path, read
// through the descriptor, is canon and lies outside every writable root)
// and runs that descriptor. The kernel runs /proc/self/fd/N as the open
// file itself, whatever has become of its name; syscall.Exec (rather than
// a raw execveat) keeps the runtime's exec discipline. The descriptor is
// close-on-exec, which only a #! script would notice: the companion is a
// Go binary.
func execChecked(lookup, canon string, writable, argv, env []string) error {
	fd, err := unix.Open(canon, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		if err == unix.ELOOP || err == unix.ENOENT || err == unix.ENOTDIR {
			return &MissingError{Path: lookup, Err: err}
		}
		return &os.PathError{Op: "open", Path: canon, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &os.PathError{Op: "fstat", Path: canon, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o111 == 0 {
		return &MissingError{Path: lookup}
	}
	proc := "/proc/self/fd/" + strconv.Itoa(fd)
	got, err := os.Readlink(proc) // this process's own descriptor table, not a root
	if err != nil {
		return &os.PathError{Op: "confirming the opened file through", Path: proc, Err: err}
	}
	if got != canon {
		return &os.PathError{Op: "open", Path: canon, Err: errMoved}
	}
	if err := outside(got, writable); err != nil {
		return err
	}
	if err := syscall.Exec(proc, argv, env); err != nil {
		return &os.PathError{Op: "exec", Path: canon, Err: err}
	}
	return nil
}
