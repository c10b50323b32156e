package sandbox

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"sync"
)

// The posix root: a directory on a file system, opened as an os.Root, so
// every name resolves beneath it (openat2 RESOLVE_BENEATH, or the walk
// component by component Go's os.Root makes where that is missing) and a
// symlink swapped in mid-call cannot lead out. Its handles are
// descriptors, and they stay here: the door sees facts (fstat's, and the
// kernel's path of a descriptor), never a descriptor. Every open is
// non-blocking (openReadFlags), so a FIFO swapped in cannot hang it.

// posixStore is one root directory, opened.
type posixStore struct {
	r   *os.Root
	dir string // canonical absolute path
}

func openPosixStore(dir string) (*posixStore, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &posixStore{r: r, dir: dir}, nil
}

func (p *posixStore) kind() rootKind { return kindPosix }
func (p *posixStore) exact() bool    { return haveOpenChild }
func (p *posixStore) close() error   { return p.r.Close() }

func (p *posixStore) stat(_ context.Context, name string) (facts, error) {
	fi, err := p.r.Stat(name)
	if err != nil {
		return facts{}, err
	}
	return factsOf(fi), nil
}

func (p *posixStore) openFile(_ context.Context, name string, f *File) (facts, error) {
	return openPosixFile(p.r, name, f)
}

func (p *posixStore) openDir(_ context.Context, name string) (dirHandle, facts, error) {
	return p.openDirIn(p.r, name, "")
}

// openPosixFile opens what name leads to below r for reading, into f.
func openPosixFile(r *os.Root, name string, f *File) (facts, error) {
	of, err := r.OpenFile(name, openReadFlags, 0)
	if err != nil {
		return facts{}, err
	}
	fi, err := of.Stat()
	if err != nil {
		of.Close()
		return facts{}, err
	}
	fc := factsOf(fi)
	fc.special = onSpecialFS(of)
	f.px = posixFile{os: of, fd: -1}
	return fc, nil
}

// openDirIn opens the directory name leads to below r as a sub-root of
// its own (openRoot: never blocking on a FIFO) and the directory itself;
// rel is its path from the root when the caller knows it ("": found by
// where when needed).
func (p *posixStore) openDirIn(r *os.Root, name, rel string) (dirHandle, facts, error) {
	sub, f, err := openDirIn(r, name)
	if err != nil {
		return nil, facts{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		if sub != nil {
			sub.Close()
		}
		return nil, facts{}, err
	}
	fc := factsOf(fi)
	fc.special = onSpecialFS(f)
	return &posixDir{st: p, r: sub, f: f, fd: int(f.Fd()), rel: rel, dev: fc.key[0]}, fc, nil
}

// posixDir is a directory held open: as a file (opened by path through
// the root), or as a bare descriptor (a walk's child, opened from its
// parent's descriptor), and as a sub-root for what is opened below it by
// a path (see root).
type posixDir struct {
	st *posixStore
	mu sync.Mutex // guards r, made on first need
	// r is a root on this very directory: made with it elsewhere than on
	// Linux (openDirIn), on first need on Linux, from the descriptor
	// itself (rootOfFd)
	r   *os.Root
	f   *os.File // nil for a walk's child
	fd  int
	rel string // its real path from the root ("" until where tells it)
	dev uint64 // its device: a child on another one is looked at for procfs
}

// realRel is the directory's real path from the root, from the kernel
// the first time it is asked.
func (d *posixDir) realRel() (string, error) {
	if d.rel != "" {
		return d.rel, nil
	}
	if _, err := d.where(d.st.dir); err != nil {
		return "", err
	}
	if d.rel == "" {
		return "", errors.New("the directory lies outside its root")
	}
	return d.rel, nil
}

func (d *posixDir) where(lexical string) (string, error) {
	var real string
	var err error
	if d.f != nil {
		real, err = fdPath(d.f, lexical)
	} else {
		real, err = fdPathOf(d.fd, lexical)
	}
	if err == nil && d.rel == "" {
		if rel, ok := relOfDir(d.st.dir, real); ok {
			d.rel = rel
		}
	}
	return real, err
}

func (d *posixDir) birth() int64 {
	if d.f == nil {
		return 0
	}
	return birthTime(d.f)
}

func (d *posixDir) readlink(name string) (string, error) {
	r, err := d.root()
	if err != nil {
		return "", err
	}
	return r.Readlink(name)
}

// lstat describes an entry as itself: from the descriptor held where the
// platform can (fstatat), else through the sub-root.
func (d *posixDir) lstat(name string) (facts, error) {
	if fc, ok, err := d.lstatAt(name); ok {
		return fc, err
	}
	r, err := d.root()
	if err != nil {
		return facts{}, err
	}
	fi, err := r.Lstat(name)
	if err != nil {
		return facts{}, err
	}
	return factsOf(fi), nil
}

// root is a root on this very directory, made on first need: from the
// descriptor itself (/proc/self/fd), else, without /proc, by its real
// path from the root (as the walk's children were always reached there).
func (d *posixDir) root() (*os.Root, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.r != nil {
		return d.r, nil
	}
	r, err := rootOfFd(d.fd)
	if err != nil {
		rel, rerr := d.realRel()
		if rerr != nil {
			return nil, rerr
		}
		if r, err = openRoot(d.st.r, rel); err != nil {
			return nil, err
		}
	}
	d.r = r
	return r, nil
}

func (d *posixDir) openFile(name string, f *File) (facts, error) {
	r, err := d.root()
	if err != nil {
		return facts{}, err
	}
	return openPosixFile(r, name, f)
}

func (d *posixDir) openDir(name string) (dirHandle, facts, error) {
	r, err := d.root()
	if err != nil {
		return nil, facts{}, err
	}
	return d.st.openDirIn(r, name, "")
}

func (d *posixDir) close() error {
	if d.f != nil {
		d.f.Close()
	} else {
		rawClose(d.fd)
	}
	if d.r == nil {
		return nil
	}
	return d.r.Close()
}

// posixTarget is what a write target pinned on a posix root: its parent
// directory, held open (so the name cannot be moved under the change),
// and the existing file, opened without following and checked.
type posixTarget struct {
	dir  *os.Root // the parent, pinned
	dirF *os.File // the same directory, for fsync, locking and *at calls
	cur  *os.File // a file target's existing file
	// curStat is cur's fstat when it was checked
	curStat fs.FileInfo
}

func (p *posixTarget) close() {
	if p.cur != nil {
		p.cur.Close()
		p.cur = nil
	}
	if p.dirF != nil {
		p.dirF.Close()
	}
	if p.dir != nil {
		p.dir.Close()
	}
}

// posixFile is a file held open for reading: an *os.File, or (the walk's
// fast way) a bare descriptor read directly. It lives inside File, by
// value, so a search that opens thousands of files through one File
// allocates nothing per file.
type posixFile struct {
	os    *os.File
	fd    int    // >= 0: a raw descriptor, read directly
	cname []byte // scratch for the NUL-terminated name of openChild
}

func (p *posixFile) Read(b []byte) (int, error) {
	if p.fd >= 0 {
		return rawRead(p.fd, b)
	}
	if p.os == nil {
		return 0, os.ErrClosed
	}
	return p.os.Read(b)
}

func (p *posixFile) ReadAt(b []byte, off int64) (int, error) {
	if p.fd >= 0 {
		return rawPread(p.fd, b, off)
	}
	if p.os == nil {
		return 0, os.ErrClosed
	}
	return p.os.ReadAt(b, off)
}

func (p *posixFile) close() error {
	if p.fd >= 0 {
		fd := p.fd
		p.fd = -2
		return rawClose(fd)
	}
	if p.os == nil {
		return nil
	}
	return p.os.Close()
}

func (p *posixFile) where(lexical string) (string, error) {
	if p.os == nil {
		return fdPathOf(p.fd, lexical)
	}
	return fdPath(p.os, lexical)
}

func (p *posixFile) birth() int64 {
	if p.os == nil {
		return 0
	}
	return birthTime(p.os)
}

// rewind puts a borrowed file (a write target's checked file) back at
// its start.
func (p *posixFile) rewind() error {
	if p.os == nil {
		return errors.New("no file to rewind")
	}
	_, err := p.os.Seek(0, io.SeekStart)
	return err
}

// relOfDir is abs relative to dir (root.relOf for a bare path).
func relOfDir(dir, abs string) (string, bool) {
	return (&root{dir: dir}).relOf(abs)
}
