//go:build unix

package sandbox

import (
	"io/fs"
	"time"

	"golang.org/x/sys/unix"
)

// Stat returns the entry's size and modification time, for filters that
// need them (find --size, --changed-within), without opening it: an
// fstatat of its name in the directory the walk holds, never following a
// final symlink. An entry reached by following a symlink (-L) is opened
// through every check instead, and described as what it leads to.
func (e *Entry) Stat() (size int64, mtime time.Time, err error) {
	if e.dir == nil {
		return 0, time.Time{}, Errorf(CodeIO, e.Path, "%s was released before it was described", e.Path)
	}
	if e.via || e.dir.fd < 0 {
		return e.statOpened()
	}
	var st unix.Stat_t
	if err := unix.Fstatat(e.dir.fd, e.Name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, time.Time{}, mapOpenErr(&fs.PathError{Op: "stat", Path: e.Path, Err: err}, e.Path)
	}
	return st.Size, time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec)), nil
}
