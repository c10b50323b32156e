package sandbox

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const openReadFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY

// fdPath returns the absolute path an open descriptor refers to, from the
// kernel (/proc/self/fd), so a symlink swapped after the open cannot change
// the answer. Without /proc it falls back to resolving lexical.
func fdPath(f *os.File, lexical string) (string, error) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err == nil && len(p) > 0 && p[0] == '/' {
		return p, nil
	}
	return fallbackPath(lexical)
}

// onSpecialFS reports whether f lives on procfs or sysfs, wherever mounted.
func onSpecialFS(f *os.File) bool { return fdOnSpecialFS(int(f.Fd())) }

func fdOnSpecialFS(fd int) bool {
	var st unix.Statfs_t
	if unix.Fstatfs(fd, &st) != nil {
		return false
	}
	switch st.Type {
	case unix.PROC_SUPER_MAGIC, unix.SYSFS_MAGIC, unix.DEBUGFS_MAGIC, unix.TRACEFS_MAGIC,
		unix.SECURITYFS_MAGIC, unix.DEVPTS_SUPER_MAGIC, unix.CGROUP_SUPER_MAGIC, unix.CGROUP2_SUPER_MAGIC:
		return true
	}
	return false
}

func nlink(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// atime is a file's last access time.
func atime(fi fs.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Atim.Sec, st.Atim.Nsec).UTC()
	}
	return fi.ModTime().UTC()
}

// fileKey identifies a file by device and inode, for loop detection.
func fileKey(info Info) ([2]uint64, bool) {
	return info.key, info.key != [2]uint64{}
}

func devIno(fi fs.FileInfo) [2]uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return [2]uint64{uint64(st.Dev), st.Ino}
	}
	return [2]uint64{}
}

// rawRead reads a descriptor left in O_NONBLOCK mode: a regular file
// ignores the flag; anything else answers EAGAIN instead of blocking.
func rawRead(fd int, p []byte) (int, error) {
	for {
		n, err := unix.Read(fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, &fs.PathError{Op: "read", Path: "", Err: err}
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func rawPread(fd int, p []byte, off int64) (int, error) {
	total := 0
	for total < len(p) {
		n, err := unix.Pread(fd, p[total:], off+int64(total))
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return total, &fs.PathError{Op: "pread", Path: "", Err: err}
		case n == 0:
			return total, io.EOF
		}
		total += n
	}
	return total, nil
}

func rawClose(fd int) error { return unix.Close(fd) }

const syscallNonblock = syscall.O_NONBLOCK

// oNoFollow refuses a symlink as the last component of an open.
const oNoFollow = syscall.O_NOFOLLOW

// renameAt renames between two pinned directories; without force it uses
// RENAME_NOREPLACE, so an entry that appears meanwhile is never replaced.
func renameAt(src, dst *WriteTarget, force bool) error {
	flags := uint(unix.RENAME_NOREPLACE)
	if force {
		flags = 0
	}
	err := unix.Renameat2(int(src.dirF.Fd()), src.Name, int(dst.dirF.Fd()), dst.Name, flags)
	if err == unix.EEXIST {
		return fs.ErrExist
	}
	if err == unix.EINVAL && !force {
		// No RENAME_NOREPLACE on this filesystem: link(2), which fails on
		// an existing name too, then unlink; a directory cannot be linked,
		// and is refused rather than renamed over what may be there.
		return linkNoReplace(int(src.dirF.Fd()), src.Name, int(dst.dirF.Fd()), dst.Name)
	}
	return err
}

// exchangeBetween swaps the entries at src's and dst's names, between two
// pinned directories, in one step (renameat2 RENAME_EXCHANGE).
func exchangeBetween(src, dst *WriteTarget) error {
	err := unix.Renameat2(int(src.dirF.Fd()), src.Name, int(dst.dirF.Fd()), dst.Name, unix.RENAME_EXCHANGE)
	if err == unix.EINVAL || err == unix.ENOSYS {
		return errNoExchange
	}
	return err
}

// renameNoReplace gives the target's name to tmp only if the name is free
// (renameat2 RENAME_NOREPLACE; where a filesystem lacks it, link(2), which
// fails on an existing name too, then unlink of tmp).
func renameNoReplace(w *WriteTarget, tmp string) error {
	return renameNoReplaceFrom(w, tmp, w.Name)
}

// renameNoReplaceFrom renames from to to inside the target's pinned
// directory, only if to is free.
func renameNoReplaceFrom(w *WriteTarget, from, to string) error {
	dfd := int(w.dirF.Fd())
	err := unix.Renameat2(dfd, from, dfd, to, unix.RENAME_NOREPLACE)
	if err == unix.EINVAL || err == unix.ENOSYS {
		return linkNoReplace(dfd, from, dfd, to)
	}
	if err == unix.EEXIST {
		return fs.ErrExist
	}
	return err
}

// exchangeAt swaps the target's name and tmp in one step (renameat2
// RENAME_EXCHANGE); where a filesystem lacks it, in three renames.
func exchangeAt(w *WriteTarget, tmp string) error {
	dfd := int(w.dirF.Fd())
	err := unix.Renameat2(dfd, tmp, dfd, w.Name, unix.RENAME_EXCHANGE)
	if err == unix.EINVAL || err == unix.ENOSYS {
		return exchangeByRenames(w, tmp)
	}
	return err
}

// errNoExchange: the filesystem (or platform) has no one-step exchange.
var errNoExchange = errors.New("no RENAME_EXCHANGE here")

// exchangeOnly swaps the target's name and tmp in one step, or fails with
// errNoExchange (never in several renames: a write must not leave the
// name missing for a moment).
func exchangeOnly(w *WriteTarget, tmp string) error {
	dfd := int(w.dirF.Fd())
	err := unix.Renameat2(dfd, tmp, dfd, w.Name, unix.RENAME_EXCHANGE)
	if err == unix.EINVAL || err == unix.ENOSYS {
		return errNoExchange
	}
	return err
}

// renameInto renames name in the target's directory into dir (the
// journal's objects) as to.
func renameInto(w *WriteTarget, name string, dir *os.File, to string) error {
	return unix.Renameat(int(w.dirF.Fd()), name, int(dir.Fd()), to)
}
