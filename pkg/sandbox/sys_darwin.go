package sandbox

// The platform layer on macOS: the same guarantees as on Linux, each
// through the call macOS offers for it (the README's "What holds where").
// Built and vetted by make cross on every change; not run here (no macOS
// machine), so each call is kept small and mirrors sys_linux.go.

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Every open is non-blocking (a FIFO swapped in cannot hang it) and takes
// no controlling terminal.
const openReadFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY

// fdPath returns the absolute path the open descriptor refers to, as the
// kernel knows it (fcntl F_GETPATH), so a symlink swapped after the open
// cannot change the answer. There is no fallback to the name: a
// descriptor whose path cannot be read is an error.
func fdPath(f *os.File, lexical string) (string, error) {
	buf := pathBufs.Get().(*[unix.PathMax]byte)
	defer pathBufs.Put(buf)
	// F_GETPATH fills a MAXPATHLEN buffer; x/sys has no typed wrapper, so
	// the buffer's address goes as fcntl's integer argument. The buffer
	// comes from a pool, so it lives on the heap, which never moves, and
	// KeepAlive holds it across the call.
	_, err := unix.FcntlInt(f.Fd(), unix.F_GETPATH, int(uintptr(unsafe.Pointer(&buf[0]))))
	runtime.KeepAlive(buf)
	if err != nil {
		return "", &fs.PathError{Op: "fcntl F_GETPATH", Path: lexical, Err: err}
	}
	p := buf[:]
	if i := bytes.IndexByte(p, 0); i >= 0 {
		p = p[:i]
	}
	if len(p) == 0 || p[0] != '/' {
		return "", &fs.PathError{Op: "fcntl F_GETPATH", Path: lexical, Err: fs.ErrInvalid}
	}
	return string(p), nil
}

var pathBufs = sync.Pool{New: func() any { return new([unix.PathMax]byte) }}

// onSpecialFS reports whether f lives on devfs or fdesc (macOS has no
// procfs or sysfs), wherever mounted.
func onSpecialFS(f *os.File) bool {
	var st unix.Statfs_t
	if unix.Fstatfs(int(f.Fd()), &st) != nil {
		return false
	}
	name := unix.ByteSliceToString(st.Fstypename[:])
	return name == "devfs" || name == "fdesc"
}

// atime is a file's last access time.
func atime(fi fs.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Atimespec.Sec, st.Atimespec.Nsec).UTC()
	}
	return fi.ModTime().UTC()
}

const syscallNonblock = syscall.O_NONBLOCK

// oNoFollow refuses a symlink as the last component of an open.
const oNoFollow = syscall.O_NOFOLLOW

// renameatx renames between two opened directories (never by path,
// which would resolve the names again).
func renameatx(fromDir *os.File, from string, toDir *os.File, to string, flags uint32) error {
	return unix.RenameatxNp(int(fromDir.Fd()), from, int(toDir.Fd()), to, flags)
}

// unsupported: the filesystem has no renameatx_np flag of this kind
// (ENOTSUP; EINVAL means a bad request, such as a directory into itself,
// and is returned as it is).
func unsupported(err error) bool { return err == unix.ENOTSUP || err == unix.EOPNOTSUPP }

// renameAt renames between two pinned directories; without force it uses
// RENAME_EXCL, so an entry that appears meanwhile is never replaced.
func renameAt(src, dst *WriteTarget, force bool) error {
	flags := uint32(unix.RENAME_EXCL)
	if force {
		flags = 0
	}
	err := renameatx(src.dirF, src.Name, dst.dirF, dst.Name, flags)
	if err == unix.EEXIST {
		return fs.ErrExist
	}
	if unsupported(err) && !force {
		// No RENAME_EXCL on this filesystem: link(2), which fails on an
		// existing name too, then unlink; a directory cannot be linked,
		// and is refused rather than renamed over what may be there.
		return linkNoReplace(int(src.dirF.Fd()), src.Name, int(dst.dirF.Fd()), dst.Name)
	}
	return err
}

// exchangeBetween swaps the entries at src's and dst's names, between two
// pinned directories, in one step (renameatx_np RENAME_SWAP).
func exchangeBetween(src, dst *WriteTarget) error {
	err := renameatx(src.dirF, src.Name, dst.dirF, dst.Name, unix.RENAME_SWAP)
	if unsupported(err) {
		return errNoExchange
	}
	return err
}

// renameNoReplace gives the target's name to tmp only if the name is free.
func renameNoReplace(w *WriteTarget, tmp string) error {
	return renameNoReplaceFrom(w, tmp, w.Name)
}

// renameNoReplaceFrom renames from to to inside the target's pinned
// directory, only if to is free (RENAME_EXCL; where a filesystem lacks
// it, link(2), which fails on an existing name too, then unlink).
func renameNoReplaceFrom(w *WriteTarget, from, to string) error {
	err := renameatx(w.dirF, from, w.dirF, to, unix.RENAME_EXCL)
	if unsupported(err) {
		return linkNoReplace(int(w.dirF.Fd()), from, int(w.dirF.Fd()), to)
	}
	if err == unix.EEXIST {
		return fs.ErrExist
	}
	return err
}

// exchangeAt swaps the target's name and tmp in one step (RENAME_SWAP);
// where a filesystem lacks it, in three renames.
func exchangeAt(w *WriteTarget, tmp string) error {
	err := renameatx(w.dirF, tmp, w.dirF, w.Name, unix.RENAME_SWAP)
	if unsupported(err) {
		return exchangeByRenames(w, tmp)
	}
	return err
}

// errNoExchange: the filesystem has no one-step exchange.
var errNoExchange = errors.New("no RENAME_SWAP here")

// exchangeOnly swaps the target's name and tmp in one step, or fails with
// errNoExchange.
func exchangeOnly(w *WriteTarget, tmp string) error {
	err := renameatx(w.dirF, tmp, w.dirF, w.Name, unix.RENAME_SWAP)
	if unsupported(err) {
		return errNoExchange
	}
	return err
}

// renameInto renames name in the target's directory into dir (the
// journal's objects) as to.
func renameInto(w *WriteTarget, name string, dir *os.File, to string) error {
	return unix.Renameat(int(w.dirF.Fd()), name, int(dir.Fd()), to)
}
