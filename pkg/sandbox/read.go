package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// Stage 4, read: files and directories that passed the door.

// Info describes one filesystem object that passed the policy.
type Info struct {
	Name    string      // base name
	Path    string      // as output shows it: workdir-relative, or absolute under a read root
	Abs     string      // absolute path after symlinks
	Type    string      // file, dir, symlink, other
	Size    int64       // bytes
	Mode    fs.FileMode // permission bits and type
	ModTime time.Time
	ATime   time.Time // last access, where the platform layer reads it (Linux); else ModTime
	Target  string    // symlink target, as stored
	Nlink   uint64
	key     [2]uint64 // device and inode where known
	// ver is an object root's version of the object (its ETag): what a
	// change conditioned on this Info asks the store for. "" on a posix
	// root, whose identity is key.
	ver string
	// object: the facts are an object root's, where there are no modes
	// and a directory (a prefix) has no size or time of its own.
	object bool
	// storeSum is the sha256 (hex) an object store verified when the
	// object was written, "" where there is none.
	storeSum string
}

// StoreSHA256 is the content's sha256 (hex) as the object store verified
// it when the object was written: known without reading it. "" where
// there is none (every posix file, an object written without one).
func (i Info) StoreSHA256() string { return i.storeSum }

// OnObjectRoot reports whether i describes an object root's file or
// directory: output then leaves out its mode, and a directory's size and
// mtime, which an object store does not have.
func (i Info) OnObjectRoot() bool { return i.object }

// Key is the file's device and inode (zero where the platform gives
// none): with its size and mtime, what says a file is the one seen before.
func (i Info) Key() [2]uint64 { return i.key }

// TypeOf names a file mode as SPEC's `type` field does.
func TypeOf(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "other"
}

func newInfo(name, display, abs string, fi fs.FileInfo) Info {
	return Info{Name: name, Path: display, Abs: abs, Type: TypeOf(fi.Mode()), Size: fi.Size(),
		Mode: fi.Mode(), ModTime: fi.ModTime().UTC(), ATime: atime(fi), Nlink: nlink(fi), key: devIno(fi)}
}

// File is a regular file opened for reading that passed every check.
type File struct {
	Info Info
	// px is a posix root's descriptor, held by value: a search that
	// opens thousands of files through one File allocates nothing per
	// file. obj is another kind of root's handle (nil on a posix root).
	px  posixFile
	obj fileHandle
	s   *Sandbox // counts the bytes read when the file is closed
	n   int64    // bytes read so far
	// mapped counts the bytes searched through MapAt windows (CountRead)
	mapped int64 // (atomic)
	// borrowed: the handle belongs to someone else (a WriteTarget's
	// checked file); Close leaves it open
	borrowed bool

	stream io.Reader // standard input (OpenStdin): read, never at an offset
}

// handle is the file's pinned handle, whatever its root's kind.
func (f *File) handle() fileHandle {
	if f.obj != nil {
		return f.obj
	}
	return &f.px
}

// Read reads from the file's current offset.
func (f *File) Read(p []byte) (n int, err error) {
	if f.stream != nil {
		n, err = f.stream.Read(p)
	} else {
		n, err = f.handle().Read(p)
	}
	f.n += int64(n)
	return n, err
}

// ReadAt reads at an absolute offset.
func (f *File) ReadAt(p []byte, off int64) (n int, err error) {
	if f.stream != nil {
		return 0, errNotSeekable
	}
	n, err = f.handle().ReadAt(p, off)
	f.n += int64(n)
	return n, err
}

// Close releases the file.
func (f *File) Close() error {
	if f.s != nil {
		f.s.trail.bytesRead.Add(f.n + atomic.SwapInt64(&f.mapped, 0))
		f.n = 0
	}
	if f.borrowed || f.stream != nil {
		return nil // stdin belongs to the caller
	}
	return f.handle().close()
}

// Open opens a regular file for reading. It refuses directories
// (not_a_file), FIFOs, sockets and devices (denied, without blocking), and
// any file whose real path the policy denies.
func (s *Sandbox) Open(p string) (*File, error) {
	t, err := s.pin(p, AccessRead, false)
	if err != nil {
		return nil, err
	}
	return s.openTarget(t)
}

// Dir is an opened directory that passed every check. Entries below it are
// reached through its own handle, so each costs O(1) opens at any depth.
type Dir struct {
	s    *Sandbox
	rt   *root
	h    dirHandle    // pinned to this directory
	rel  string       // real root-relative path
	Info Info         // Info.Path: the path as reached (through symlinks, as spelled)
	refs atomic.Int32 // Close releases one; the handle closes at zero
	// state, when set, is the state directory of fsbox this directory
	// is (found when the door opened it): nothing in it is read.
	state *statePlace
}

// Close releases the directory (one reference of it).
func (d *Dir) Close() error {
	if d.refs.Add(-1) > 0 {
		return nil
	}
	return d.h.close()
}

// Listing is what ReadDir returns: the entries the policy shows, sorted by
// name, and how many it hid.
type Listing struct {
	Entries []Info
	Denied  int
}

// ReadDir lists the directory. Entries the policy denies are left out and
// counted; symlinks are reported as themselves, with their target.
func (d *Dir) ReadDir() (Listing, error) { return d.ReadDirContext(context.Background()) }

// ReadDirContext is ReadDir that stops once ctx is done: the entries are
// described in name order, so what it gives then, with ctx's error, is
// the listing's first entries (ls's part by the call's deadline).
func (d *Dir) ReadDirContext(ctx context.Context) (Listing, error) {
	atDirSeam(ctx, "dir.list", d.Info.Path)
	if err := ctx.Err(); err != nil {
		return Listing{}, err
	}
	var sc listScratch
	ents, err := d.h.list(&sc, nil)
	if err != nil {
		return Listing{}, mapOpenErr(err, d.Info.Path)
	}
	slices.SortFunc(ents, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	_, marked := slices.BinarySearchFunc(ents, journalMarker, func(e dirent, n string) int { return strings.Compare(e.name, n) })
	state := d.s.stateListed(d, marked) != nil // fsbox's state: every entry denied
	var out Listing
	for _, e := range ents {
		name := e.name
		if hasDirSeam() {
			atDirSeam(ctx, "dir.entry", displayPath(d.rt, d.childDisplay(name)))
		}
		if err := ctx.Err(); err != nil {
			return out, err // the entries before it, in name order
		}
		rel := name
		if d.rel != "." {
			rel = d.rel + "/" + name
		}
		fc, err := d.h.lstat(name)
		if err != nil {
			continue // vanished since the listing was read
		}
		if state || d.s.admitChild(d.rt, rel, fc.Mode.IsDir(), AccessRead, name) != nil {
			out.Denied++
			continue
		}
		info := fc.named(name, displayPath(d.rt, d.childDisplay(name)), d.rt.abs(rel))
		if fc.Mode&fs.ModeSymlink != 0 {
			info.Target, _ = d.h.readlink(name)
		}
		out.Entries = append(out.Entries, info)
	}
	return out, nil
}

func (d *Dir) childDisplay(name string) string {
	base := d.Info.Path
	if d.rt.work {
		if base == "." {
			return name
		}
		return base + "/" + name
	}
	rel, _ := d.rt.relOf(base)
	if rel == "" || rel == "." {
		return name
	}
	return rel + "/" + name
}

// Current opens the existing file for reading: the very file that was
// checked when the target was opened (never a name looked up again).
func (w *WriteTarget) Current() (*File, error) {
	if w.ob != nil {
		// An object root: the version pinned, read afresh.
		atSeam("edit.checked")
		ob := *w.ob
		ob.off, ob.body = 0, nil
		return &File{Info: w.Info, s: w.s, obj: &ob}, nil
	}
	if w.cur == nil {
		return nil, fserr.Errorf(fserr.CodeNotFound, w.Path, "%s does not exist", w.Path)
	}
	atSeam("edit.checked")
	f := &File{Info: w.Info, s: w.s, borrowed: true, px: posixFile{os: w.cur, fd: -1}}
	if err := f.px.rewind(); err != nil {
		return nil, ioErr(w.Path, err)
	}
	return f, nil
}

// CurrentSHA256 hashes the existing content ("" when the file is absent).
func (w *WriteTarget) CurrentSHA256() (string, error) {
	if w.cur == nil && w.ob == nil {
		return "", nil
	}
	f, err := w.Current()
	if err != nil {
		return "", err
	}
	defer f.Close()
	return hashReader(f, w.Path)
}

func hashReader(r io.Reader, p string) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", ioErr(p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// BirthTime is the creation time of the file or directory p where its
// file system records one (statx), read through the descriptor the
// sandbox opens to read it, as every access is; ok is false where none
// is recorded, on another platform, for a symlink (described as itself,
// never followed) and where p cannot be opened to read.
func (s *Sandbox) BirthTime(p string) (t time.Time, ok bool) {
	info, err := s.Lstat(p)
	if err != nil {
		return time.Time{}, false
	}
	var ns int64
	switch info.Type {
	case "dir":
		d, err := s.OpenDir(p)
		if err != nil {
			return time.Time{}, false
		}
		defer d.Close()
		ns = d.h.birth()
	case "file":
		f, err := s.Open(p)
		if err != nil {
			return time.Time{}, false
		}
		defer f.Close()
		ns = f.handle().birth()
	}
	if ns == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, ns).UTC(), true
}
