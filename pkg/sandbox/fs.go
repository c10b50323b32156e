package sandbox

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

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
}

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
	os   *os.File
	fd   int      // >= 0: a raw descriptor (the walker's fast path), read directly
	s    *Sandbox // counts the bytes read when the file is closed
	n    int64    // bytes read so far
	// mapped counts the bytes searched through MapAt windows (CountRead)
	mapped int64 // (atomic)
	// borrowed: os belongs to someone else (a WriteTarget's checked
	// file); Close leaves it open
	borrowed bool

	cname []byte // scratch for the NUL-terminated name of Entry.OpenInto

	stream io.Reader // standard input (OpenStdin): read, never at an offset
}

func newFile(s *Sandbox, f *os.File, info Info) *File {
	return &File{os: f, fd: -1, Info: info, s: s}
}

// Read reads from the file's current offset.
func (f *File) Read(p []byte) (n int, err error) {
	if f.stream != nil {
		n, err = f.stream.Read(p)
		f.n += int64(n)
		return n, err
	}
	if f.fd >= 0 {
		n, err = rawRead(f.fd, p)
	} else {
		n, err = f.os.Read(p)
	}
	f.n += int64(n)
	return n, err
}

// ReadAt reads at an absolute offset.
func (f *File) ReadAt(p []byte, off int64) (n int, err error) {
	if f.stream != nil {
		return 0, errNotSeekable
	}
	if f.fd >= 0 {
		n, err = rawPread(f.fd, p, off)
	} else {
		n, err = f.os.ReadAt(p, off)
	}
	f.n += int64(n)
	return n, err
}

// Close releases the file.
func (f *File) Close() error {
	if f.s != nil {
		f.s.trail.bytesRead.Add(f.n + atomic.SwapInt64(&f.mapped, 0))
		f.n = 0
	}
	if f.fd >= 0 {
		fd := f.fd
		f.fd = -2
		return rawClose(fd)
	}
	if f.os == nil || f.borrowed || f.stream != nil {
		return nil // stdin belongs to the caller
	}
	return f.os.Close()
}

// Open opens a regular file for reading. It refuses directories
// (not_a_file), FIFOs, sockets and devices (denied, without blocking), and
// any file whose real path the policy denies.
func (s *Sandbox) Open(p string) (*File, error) {
	t, err := s.resolve(p)
	if err != nil {
		return nil, err
	}
	if err := s.lexicalChecks(t); err != nil {
		return nil, err
	}
	return s.openTarget(t)
}

// lexicalChecks are the checks on the spelling of a path, before any
// open: /proc, /sys and /dev, and deny patterns on the path as written.
func (s *Sandbox) lexicalChecks(t *target) error {
	clean := path.Clean(t.rel)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return deny(RuleRoot, t.given, "%s climbs out of its root with '..'", t.given)
	}
	if specialFS(t.rt.abs(clean)) {
		return deny(RuleSpecialFS, t.given, "%s is under /proc, /sys or /dev, which are never readable", t.given)
	}
	if err := s.checkPatterns(t.rt, clean, true, AccessRead, t.given); err != nil {
		return err
	}
	return nil
}

// kindCheck refuses what is neither a regular file nor (when wantDir) a
// directory.
func kindCheck(m fs.FileMode, wantDir bool, given string) error {
	switch {
	case m.IsRegular():
		if wantDir {
			return Errorf(CodeNotADir, given, "%s is not a directory", given)
		}
		return nil
	case m.IsDir():
		if !wantDir {
			return Errorf(CodeNotAFile, given, "%s is a directory, not a file", given)
		}
		return nil
	}
	return deny(RuleSpecialFile, given, "%s is a %s; FIFOs, sockets and devices are never opened", given, kindName(m))
}

// kindCheckAt is kindCheck for a path about to be opened: when the kind
// is wrong, a deny rule on where the path really leads still wins, so
// not_a_file/not_a_dir never tell what lies under a denied directory.
func (s *Sandbox) kindCheckAt(m fs.FileMode, wantDir bool, t *target) error {
	err := kindCheck(m, wantDir, t.given)
	if err != nil && AsError(err).Code != CodeDenied {
		if d := s.deniedAncestor(t.rt, path.Clean(t.rel), t.given); d != nil {
			return d
		}
	}
	return err
}

func kindName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "device"
	}
	return "special file"
}

// checkOpened applies the policy to what an open descriptor really is:
// its type, its filesystem, its real path and its link count.
func (s *Sandbox) checkOpened(f *os.File, t *target, wantDir bool, acc Access) (Info, error) {
	fi, err := f.Stat()
	if err != nil {
		return Info{}, s.mapErr(err, t)
	}
	if err := kindCheck(fi.Mode(), wantDir, t.given); err != nil {
		return Info{}, err
	}
	real, err := fdPath(f, t.rt.abs(path.Clean(t.rel)))
	if err != nil {
		return Info{}, &Error{Code: CodeIO, Path: t.given, Msg: "cannot tell where " + t.given + " leads: " + err.Error(), Err: err}
	}
	if specialFS(real) || onSpecialFS(f) {
		return Info{}, deny(RuleSpecialFS, t.given, "%s leads into /proc, /sys or /dev, which are never readable", t.given)
	}
	s.trail.note(t.given, real, true)
	rel, ok := t.rt.relOf(real)
	if !ok {
		return Info{}, deny(RuleSymlink, t.given, "%s leads out of its root", t.given)
	}
	if err := s.checkPatterns(t.rt, rel, fi.IsDir(), acc, t.given); err != nil {
		return Info{}, err
	}
	if acc == AccessWrite {
		if err := s.checkWrite(t.rt, rel, t.given); err != nil {
			return Info{}, err
		}
	}
	if !fi.IsDir() && s.policy.Paths.DenyHardlinks && nlink(fi) > 1 {
		return Info{}, deny(RuleHardlink, t.given, "%s has %d hard links and deny_hardlinks is on", t.given, nlink(fi))
	}
	return newInfo(path.Base(rel), t.display(), real, fi), nil
}

// mapErr maps an os.Root error, telling a '..' climb from a symlink escape.
// A path that does not exist is still denied when its nearest existing
// ancestor, resolved, lies under a deny rule: a missing name below a
// denied directory (reached through a symlink, say) must look exactly like
// an existing one, or not_found/denied becomes an existence oracle.
func (s *Sandbox) mapErr(err error, t *target) error {
	e := mapOpenErr(err, t.given)
	if e.Code == CodeNotFound {
		if d := s.deniedAncestor(t.rt, path.Clean(t.rel), t.given); d != nil {
			return d
		}
		e.Msg += s.whereLooked(t)
	}
	return e
}

// whereLooked says where a relative path that was not found was looked
// for when the current directory lies outside the workdir: "fsbox grep
// TODO server.go" from elsewhere looks in the workdir, not here.
func (s *Sandbox) whereLooked(t *target) string {
	if filepath.IsAbs(t.given) || strings.HasPrefix(t.given, "~") {
		return ""
	}
	cwd, err := os.Getwd()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(cwd); err != nil || within(real, s.work.dir) {
		return ""
	}
	return fmt.Sprintf(" (looked for %s: a relative path resolves against the workdir %s, and the current directory %s is not under it)",
		t.rt.abs(path.Clean(t.rel)), s.work.dir, cwd)
}

// deniedAncestor resolves the deepest existing ancestor of rel through the
// root and checks its real path plus the rest of rel against the deny
// rules; when the rest starts with a symlink (a dangling one, or one to a
// file where a directory was wanted), its target is followed the same
// way. It returns nil when nothing there is denied (or nothing resolves).
func (s *Sandbox) deniedAncestor(rt *root, rel, given string) *Error {
	return s.deniedBeyond(rt, rel, given, 0)
}

// maxLinkHops bounds the symlinks deniedAncestor follows, as the kernel's
// ELOOP limit does.
const maxLinkHops = 40

func (s *Sandbox) deniedBeyond(rt *root, rel, given string, hops int) *Error {
	if !s.hasPatterns || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil
	}
	dir, rest := path.Dir(rel), path.Base(rel)
	for {
		sub, err := openRoot(rt.r, dir)
		if err == nil {
			rrel, err := realRel(rt, sub, dir, given)
			var target string
			var lerr error
			first, more, _ := strings.Cut(rest, "/")
			if err == nil {
				target, lerr = sub.Readlink(first)
			}
			sub.Close()
			switch {
			case err != nil:
				if e := AsError(err); e.Code == CodeDenied {
					return e
				}
				return nil
			case lerr != nil || hops >= maxLinkHops:
				return s.checkPatterns(rt, path.Join(rrel, rest), true, AccessRead, given)
			case path.IsAbs(target):
				return deny(RuleSymlink, given, "%s leads through an absolute symlink", given)
			}
			return s.deniedBeyond(rt, path.Join(rrel, target, more), given, hops+1)
		}
		if dir == "." {
			return nil
		}
		dir, rest = path.Dir(dir), path.Join(path.Base(dir), rest)
	}
}

// Dir is an opened directory that passed every check. Entries below it are
// reached through its own handle, so each costs O(1) opens at any depth.
type Dir struct {
	s    *Sandbox
	rt   *root
	r    *os.Root     // pinned to this directory
	f    *os.File     // the same directory, for listing; nil for a walk's child (fd only)
	fd   int          // the directory's descriptor
	rel  string       // real root-relative path
	Info Info         // Info.Path: the path as reached (through symlinks, as spelled)
	refs atomic.Int32 // Close releases one; the handles close at zero
}

// OpenDir opens a directory for listing.
func (s *Sandbox) OpenDir(p string) (*Dir, error) {
	t, err := s.resolve(p)
	if err != nil {
		return nil, err
	}
	if err := s.lexicalChecks(t); err != nil {
		return nil, err
	}
	pre, err := t.rt.r.Stat(t.rel)
	if err != nil {
		return nil, s.mapErr(err, t)
	}
	if err := s.kindCheckAt(pre.Mode(), true, t); err != nil {
		return nil, err
	}
	sub, err := openRoot(t.rt.r, t.rel)
	if err != nil {
		return nil, s.mapErr(err, t)
	}
	return s.adoptDir(sub, t)
}

// adoptDir checks a freshly opened sub-root as the directory t names: its
// real path (from the kernel), filesystem and the policy. It takes
// ownership of sub.
func (s *Sandbox) adoptDir(sub *os.Root, t *target) (*Dir, error) {
	f, err := sub.Open(".")
	if err != nil {
		sub.Close()
		return nil, s.mapErr(err, t)
	}
	info, err := s.checkOpened(f, t, true, AccessRead)
	if err != nil {
		f.Close()
		sub.Close()
		return nil, err
	}
	rel, _ := t.rt.relOf(info.Abs)
	d := &Dir{s: s, rt: t.rt, r: sub, f: f, fd: int(f.Fd()), rel: rel, Info: info}
	d.refs.Store(1)
	return d, nil
}

// Close releases the directory (one reference of it).
func (d *Dir) Close() error {
	if d.refs.Add(-1) > 0 {
		return nil
	}
	if d.f != nil {
		d.f.Close()
	} else {
		rawClose(d.fd) // a walk's child directory: a bare descriptor
	}
	if d.r == nil {
		return nil
	}
	return d.r.Close()
}

// Listing is what ReadDir returns: the entries the policy shows, sorted by
// name, and how many it hid.
type Listing struct {
	Entries []Info
	Denied  int
}

// ReadDir lists the directory. Entries the policy denies are left out and
// counted; symlinks are reported as themselves, with their target.
func (d *Dir) ReadDir() (Listing, error) {
	ents, err := d.f.ReadDir(-1)
	if err != nil {
		return Listing{}, mapOpenErr(err, d.Info.Path)
	}
	var out Listing
	for _, e := range ents {
		name := e.Name()
		rel := name
		if d.rel != "." {
			rel = d.rel + "/" + name
		}
		fi, err := e.Info()
		if err != nil {
			continue // vanished since the listing was read
		}
		if d.s.checkLeaf(d.rt, rel, fi.IsDir(), AccessRead, name) != nil || specialFS(d.rt.abs(rel)) {
			out.Denied++
			continue
		}
		info := newInfo(name, displayPath(d.rt, d.childDisplay(name)), d.rt.abs(rel), fi)
		if fi.Mode()&fs.ModeSymlink != 0 {
			info.Target, _ = d.r.Readlink(name)
		}
		out.Entries = append(out.Entries, info)
	}
	sort.Slice(out.Entries, func(i, j int) bool { return out.Entries[i].Name < out.Entries[j].Name })
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

// Lstat describes a path without following a final symlink, as stat(1)
// does. Directories on the way are resolved through the root.
func (s *Sandbox) Lstat(p string) (Info, error) {
	t, err := s.resolve(p)
	if err != nil {
		return Info{}, err
	}
	if err := s.lexicalChecks(t); err != nil {
		return Info{}, err
	}
	i := strings.LastIndexByte(t.rel, '/')
	parent, name := ".", t.rel
	if i >= 0 {
		parent, name = t.rel[:i], t.rel[i+1:]
	}
	if t.rel == "." || name == ".." {
		d, err := s.OpenDir(p)
		if err != nil {
			return Info{}, err
		}
		defer d.Close()
		return d.Info, nil
	}
	sub, err := openRoot(t.rt.r, parent)
	if err != nil {
		return Info{}, s.mapErr(err, t)
	}
	defer sub.Close()
	pd, err := sub.Open(".")
	if err != nil {
		return Info{}, s.mapErr(err, t)
	}
	realParent, err := fdPath(pd, t.rt.abs(path.Clean(parent)))
	pd.Close()
	if err != nil {
		return Info{}, &Error{Code: CodeIO, Path: t.given, Msg: err.Error(), Err: err}
	}
	prel, ok := t.rt.relOf(realParent)
	if !ok {
		return Info{}, deny(RuleSymlink, t.given, "%s leads out of its root", t.given)
	}
	rel := name
	if prel != "." {
		rel = prel + "/" + name
	}
	abs := t.rt.abs(rel)
	if specialFS(abs) {
		return Info{}, deny(RuleSpecialFS, t.given, "%s leads into /proc, /sys or /dev, which are never readable", t.given)
	}
	if err := s.checkPatterns(t.rt, rel, true, AccessRead, t.given); err != nil {
		return Info{}, err
	}
	fi, err := sub.Lstat(name)
	if err != nil {
		return Info{}, s.mapErr(err, t)
	}
	if err := s.checkPatterns(t.rt, rel, fi.IsDir(), AccessRead, t.given); err != nil {
		return Info{}, err
	}
	info := newInfo(name, t.display(), abs, fi)
	if fi.Mode()&fs.ModeSymlink != 0 {
		info.Target, _ = sub.Readlink(name)
	}
	return info, nil
}
