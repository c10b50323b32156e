package sandbox

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

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

// openChild opens the regular file name directly inside the directory d
// into f with one openat: O_NOFOLLOW (so the file is exactly d's entry and
// its real path is d's plus name, no readlink needed) and O_NONBLOCK (so a
// FIFO swapped in cannot block), then checks the type on the descriptor.
// Only a file on another device than d costs an fstatfs. f's memory is
// reused (a search opens thousands of files through one File), so the
// path needs no allocation; f.Info.Abs is left empty.
func openChild(d *Dir, name, display string, f *File) error {
	fd, err := openatScratch(d.fd, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NOCTTY, &f.cname)
	if err != nil {
		if err == unix.ELOOP {
			return deny(RuleSymlink, display, "%s became a symlink", display)
		}
		return mapOpenErr(err, display)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return mapOpenErr(err, display)
	}
	var refuse error
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		refuse = deny(RuleSpecialFile, display, "%s is not a regular file", display)
	case uint64(st.Dev) != d.Info.key[0] && fdOnSpecialFS(fd):
		refuse = deny(RuleSpecialFS, display, "%s lies on procfs or sysfs", display)
	case d.s.policy.Paths.DenyHardlinks && st.Nlink > 1:
		refuse = deny(RuleHardlink, display, "%s has %d hard links and deny_hardlinks is on", display, st.Nlink)
	case d.s.state.fileIDs != nil && d.s.stateFile([2]uint64{uint64(st.Dev), st.Ino}) != nil:
		refuse = stateDenial(display, d.s.stateFile([2]uint64{uint64(st.Dev), st.Ino}))
	}
	if refuse != nil {
		unix.Close(fd)
		return AsError(refuse)
	}
	f.Info = Info{Name: name, Path: display, Type: "file", Size: st.Size, Mode: fs.FileMode(st.Mode & 0o777),
		ModTime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec).UTC(), ATime: time.Unix(st.Atim.Sec, st.Atim.Nsec).UTC(), Nlink: uint64(st.Nlink), key: [2]uint64{uint64(st.Dev), st.Ino}}
	f.os, f.fd, f.s, f.n = nil, fd, d.s, 0
	return nil
}

// openatScratch is openat(2) with the NUL-terminated name built in
// *scratch, which is kept for the next call: unix.Openat allocates one
// per call. Names from a directory listing never hold a NUL; anything
// else that does is refused as the kernel would refuse it.
func openatScratch(dirfd int, name string, flags int, scratch *[]byte) (int, error) {
	if strings.IndexByte(name, 0) >= 0 {
		return -1, unix.EINVAL
	}
	b := append(append((*scratch)[:0], name...), 0)
	*scratch = b
	for {
		fd, _, e := unix.Syscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&b[0])), uintptr(flags), 0, 0, 0)
		switch e {
		case 0:
			return int(fd), nil
		case unix.EINTR:
			continue
		}
		return -1, e
	}
}

const haveOpenChild = true

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

// listDir reads every entry of d with getdents(2), appending to out[:0].
// The scratch buffers are reused from one directory to the next and the
// names share one string per directory, so a listing costs one allocation
// however many entries it has. Types come from d_type, or one fstatat
// where the filesystem does not fill it in.
func listDir(d *Dir, sc *listScratch, out []dirent) ([]dirent, error) {
	if len(sc.buf) == 0 {
		sc.buf = make([]byte, 32<<10)
	}
	spans, arena := sc.spans[:0], sc.arena[:0]
	defer func() { sc.spans, sc.arena = spans, arena }()
	for {
		n, err := unix.Getdents(d.fd, sc.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "getdents", Path: d.Info.Path, Err: err}
		}
		if n <= 0 {
			break
		}
		b := sc.buf[:n]
		for len(b) >= 19 {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			reclen := int(b[16]) | int(b[17])<<8
			if reclen < 19 || reclen > len(b) {
				return nil, &fs.PathError{Op: "getdents", Path: d.Info.Path, Err: unix.EIO}
			}
			name := b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			typ := b[18]
			b = b[reclen:]
			if len(name) == 0 || (name[0] == '.' && (len(name) == 1 || (len(name) == 2 && name[1] == '.'))) {
				continue
			}
			sp := nameSpan{start: len(arena)}
			arena = append(arena, name...)
			sp.end = len(arena)
			switch typ {
			case unix.DT_REG:
			case unix.DT_DIR:
				sp.typ = fs.ModeDir
			case unix.DT_LNK:
				sp.typ = fs.ModeSymlink
			case unix.DT_FIFO:
				sp.typ = fs.ModeNamedPipe
			case unix.DT_SOCK:
				sp.typ = fs.ModeSocket
			case unix.DT_CHR:
				sp.typ = fs.ModeDevice | fs.ModeCharDevice
			case unix.DT_BLK:
				sp.typ = fs.ModeDevice
			default:
				sp.unknown = true
			}
			spans = append(spans, sp)
		}
	}
	names := string(arena)
	out = out[:0]
	for _, sp := range spans {
		e := dirent{name: names[sp.start:sp.end], typ: sp.typ}
		if sp.unknown {
			var st unix.Stat_t
			if err := unix.Fstatat(d.fd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				continue // vanished since the listing was read
			}
			e.typ = fileModeType(st.Mode)
		}
		out = append(out, e)
	}
	return out, nil
}

// fileModeType turns stat's st_mode into fs.FileMode's type bits.
func fileModeType(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return 0
}

// openChildDir opens the directory name inside d with one openat
// (O_NOFOLLOW|O_DIRECTORY: exactly d's entry, so its real path is d's plus
// name). The result has no os.Root; a walk only lists it and opens its
// entries by descriptor.
func openChildDir(d *Dir, name, display string) (*Dir, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		if err == unix.ELOOP || err == unix.ENOTDIR {
			return nil, deny(RuleSymlink, display, "%s is no longer a directory", display)
		}
		return nil, mapOpenErr(err, display)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, mapOpenErr(err, display)
	}
	if uint64(st.Dev) != d.Info.key[0] && fdOnSpecialFS(fd) {
		unix.Close(fd)
		return nil, deny(RuleSpecialFS, display, "%s lies on procfs or sysfs", display)
	}
	rel := name
	if d.rel != "." {
		rel = d.rel + "/" + name
	}
	info := Info{Name: name, Path: display, Abs: d.rt.abs(rel), Type: "dir", Mode: fs.ModeDir | fs.FileMode(st.Mode&0o777),
		ModTime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec).UTC(), ATime: time.Unix(st.Atim.Sec, st.Atim.Nsec).UTC(), Nlink: uint64(st.Nlink), key: [2]uint64{uint64(st.Dev), st.Ino}}
	sub := &Dir{s: d.s, rt: d.rt, fd: fd, rel: rel, Info: info}
	sub.refs.Store(1)
	return sub, nil
}

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
