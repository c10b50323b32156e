package sandbox

import (
	"bytes"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The posix root's fast ways on Linux: a walk lists a directory with
// getdents(2) and opens its entries from its descriptor, one openat each,
// never through a symlink (O_NOFOLLOW), so an entry's real path is its
// directory's plus its name and needs no readlink.

const haveOpenChild = true

// openDirIn opens the directory name below r with one open that cannot
// block (O_DIRECTORY|O_NONBLOCK: a FIFO there, or swapped in, fails at
// once): the descriptor is the directory's handle, and a root on it is
// made from it only when something is opened below it by a path
// (rootOfFd).
func openDirIn(r *os.Root, name string) (*os.Root, *os.File, error) {
	f, err := r.OpenFile(name, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK, 0)
	return nil, f, err
}

// rootOfFd is a root on the directory open as fd, through
// /proc/self/fd: the very directory, never its name looked up again.
func rootOfFd(fd int) (*os.Root, error) {
	return os.OpenRoot("/proc/self/fd/" + strconv.Itoa(fd))
}

// fdPathOf is fdPath for a bare descriptor.
func fdPathOf(fd int, lexical string) (string, error) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err == nil && len(p) > 0 && p[0] == '/' {
		return p, nil
	}
	return fallbackPath(lexical)
}

// lstatAt describes the plain entry name from the directory's descriptor
// (fstatat, never following); ok is false for a name with '/' in it.
func (d *posixDir) lstatAt(name string) (facts, bool, error) {
	if strings.IndexByte(name, '/') >= 0 || d.fd < 0 {
		return facts{}, false, nil
	}
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return facts{}, true, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	return statFacts(&st, statMode(st.Mode)), true, nil
}

// statMode turns stat's st_mode into an fs.FileMode as os.Lstat does:
// type, permission, setuid, setgid and sticky bits.
func statMode(m uint32) fs.FileMode {
	mode := fileModeType(m) | fs.FileMode(m&0o777)
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// statFacts are the facts of a stat with the mode given.
func statFacts(st *unix.Stat_t, mode fs.FileMode) facts {
	return facts{Info: Info{Type: TypeOf(mode), Size: st.Size, Mode: mode,
		ModTime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec).UTC(), ATime: time.Unix(st.Atim.Sec, st.Atim.Nsec).UTC(),
		Nlink: uint64(st.Nlink), key: [2]uint64{uint64(st.Dev), st.Ino}}}
}

// openChild opens the entry name of d into f with one openat: O_NOFOLLOW
// (so the file is exactly d's entry and its real path is d's plus name,
// no readlink needed) and O_NONBLOCK (so a FIFO swapped in cannot block),
// then fstat. Only a file on another device than d costs an fstatfs. f's
// memory is reused (a search opens thousands of files through one File),
// so the path needs no allocation. A symlink is ELOOP.
func (d *posixDir) openChild(name string, f *File) (facts, error) {
	fd, err := openatScratch(d.fd, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NOCTTY, &f.px.cname)
	if err != nil {
		return facts{}, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return facts{}, err
	}
	fc := statFacts(&st, fileModeType(st.Mode)|fs.FileMode(st.Mode&0o777))
	fc.special = uint64(st.Dev) != d.dev && fdOnSpecialFS(fd)
	f.px.os, f.px.fd = nil, fd
	return fc, nil
}

// openChildDir opens the directory entry name of d with one openat
// (O_NOFOLLOW|O_DIRECTORY: exactly d's entry, so its real path is d's
// plus name). The result has no os.Root; a walk only lists it and opens
// its entries by descriptor. A symlink or a non-directory is ELOOP or
// ENOTDIR.
func (d *posixDir) openChildDir(name string) (dirHandle, facts, error) {
	rel, err := d.realRel()
	if err != nil {
		return nil, facts{}, err
	}
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, facts{}, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, facts{}, err
	}
	fc := statFacts(&st, fs.ModeDir|fs.FileMode(st.Mode&0o777))
	fc.Size = 0
	fc.special = uint64(st.Dev) != d.dev && fdOnSpecialFS(fd)
	if rel == "." {
		rel = name
	} else {
		rel = rel + "/" + name
	}
	return &posixDir{st: d.st, fd: fd, rel: rel, dev: uint64(st.Dev)}, fc, nil
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

// list reads every entry of d with getdents(2), appending to out[:0].
// The scratch buffers are reused from one directory to the next and the
// names share one string per directory, so a listing costs one allocation
// however many entries it has. Types come from d_type, or one fstatat
// where the filesystem does not fill it in.
func (d *posixDir) list(sc *listScratch, out []dirent) ([]dirent, error) {
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
			return nil, &fs.PathError{Op: "getdents", Path: path.Clean(d.rel), Err: err}
		}
		if n <= 0 {
			break
		}
		b := sc.buf[:n]
		for len(b) >= 19 {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			reclen := int(b[16]) | int(b[17])<<8
			if reclen < 19 || reclen > len(b) {
				return nil, &fs.PathError{Op: "getdents", Path: path.Clean(d.rel), Err: unix.EIO}
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
