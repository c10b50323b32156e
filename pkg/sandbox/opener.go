package sandbox

import (
	"path"
	"strings"
	"sync"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// Opener opens many named files for reading, each as Open would (the
// same answers), holding the directories it has walked to: files that
// share a parent cost an lstat, an open and an fstat each, not a walk
// from the root (stat --check over a list of a thousand paths).
//
// A directory is held once it is checked as OpenDir checks one (its real
// path from the kernel, inside its root, on no special file system); a
// file opened from it must be a regular file there (never a symlink,
// never a special file, which is not even opened), on no special file
// system, with no more links than deny_hardlinks allows, and its real
// path, the directory's and its name, must pass the policy's rules: the
// checks a walk makes of the files it opens from the directories it
// holds. Whenever that short way does not end in such a file (a symlink,
// a missing or denied path, anything odd), the path is opened by Open
// itself, whose answer is the answer; elsewhere than on Linux, always.
//
// An Opener is safe for concurrent use; Close releases the directories.
type Opener struct {
	s    *Sandbox
	mu   sync.Mutex
	dirs map[openerKey]*openerDir // nil value: that directory could not be opened
	// above: whether a directory (real, root-relative) is or lies below
	// one of fsbox's state directories, looked at once per Opener, as the
	// directories it holds are checked once
	above map[openerKey]bool
}

type openerKey struct {
	rt  *root
	rel string // the parent as spelled, cleaned, relative to the root
}

// maxOpenerDirs bounds the directories an Opener holds open (one
// descriptor each); past it, files are opened by Open.
const maxOpenerDirs = 256

// NewOpener returns an Opener for s.
func (s *Sandbox) NewOpener() *Opener {
	return &Opener{s: s, dirs: map[openerKey]*openerDir{}, above: map[openerKey]bool{}}
}

// Open opens p for reading, as s.Open(p) does.
func (o *Opener) Open(p string) (*File, error) {
	s := o.s
	t, err := s.pin(p, AccessRead, false)
	if err != nil {
		return nil, err
	}
	clean := path.Clean(t.rel)
	parent, name := ".", clean
	if i := strings.LastIndexByte(clean, '/'); i >= 0 {
		parent, name = clean[:i], clean[i+1:]
	}
	if name == "." || name == ".." || strings.Contains(parent, "..") {
		return s.openTarget(t)
	}
	if d := o.dir(t.rt, parent); d != nil {
		if f, ok := o.openFast(t, d, name); ok {
			return f, nil
		}
	}
	// Missing, a symlink, a directory, a special file, denied, or a
	// platform without the short way: Open's own answer.
	return s.openTarget(t)
}

// dir is the parent directory rel of root rt, opened once (nil when it
// cannot be, or when the Opener holds as many as it may).
func (o *Opener) dir(rt *root, rel string) *openerDir {
	k := openerKey{rt, rel}
	o.mu.Lock()
	defer o.mu.Unlock()
	if r, ok := o.dirs[k]; ok {
		return r
	}
	if len(o.dirs) >= maxOpenerDirs {
		return nil
	}
	d := openDirFast(o.s, rt, rel)
	if d != nil && o.inState(rt, d.rel, d.state) {
		d.close() // fsbox's state: Open answers (denied)
		d = nil
	}
	o.dirs[k] = d
	return d
}

// inState reports whether the real directory drel of rt (self: it is one
// of fsbox's state directories itself) is or lies below one: the
// directories above it are looked at through stateDirOrAbove once per
// parent (under o.mu), so files in sibling directories cost nothing more.
func (o *Opener) inState(rt *root, drel string, self bool) bool {
	if self {
		return true
	}
	if drel == "." {
		return o.s.stateDirOrAbove(rt, ".") != nil
	}
	k := openerKey{rt, path.Dir(drel)}
	v, ok := o.above[k]
	if !ok {
		v = o.s.stateDirOrAbove(rt, k.rel) != nil
		o.above[k] = v
	}
	return v
}

// Close releases the directories the Opener holds.
func (o *Opener) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k, d := range o.dirs {
		if d != nil {
			d.close()
		}
		delete(o.dirs, k)
	}
	return nil
}

// Settled reports a conflict unless f has now exactly the size and
// modification time it had when it was opened: a reader that stops at
// that size (a hash of the whole file) then read the whole file, as it
// was. (A write in the same clock tick as the open can go unseen, as for
// grep.)
func (f *File) Settled() error {
	now, err := f.stamp()
	if err != nil {
		return fserr.AsError(err)
	}
	if now.size != f.Info.Size || now.mtime != f.Info.ModTime.UnixNano() {
		return changedWhileRead(f.Info.Path, f.Info.Size, now.size)
	}
	return nil
}

// openerDir is a directory an Opener has walked to, checked as OpenDir
// checks one: its real path, inside its root, on no special file system.
type openerDir struct {
	h   dirHandle
	rel string // its real root-relative path
	// state: it is itself one of fsbox's state directories (by identity
	// or marker); Opener.inState looks above it
	state bool
}

// openDirFast opens and checks directory rel of rt (nil when it cannot
// be, or is not where a file may be read, or rt's entries cannot be
// opened exactly: then Open answers for every file), and whether it is
// itself one of fsbox's state directories.
func openDirFast(s *Sandbox, rt *root, rel string) *openerDir {
	if !rt.st.exact() {
		return nil
	}
	h, fc, err := rt.st.openDir(s.context(), rel)
	if err != nil {
		return nil
	}
	real, err := h.where(rt.abs(rel))
	drel, ok := rt.relOf(real)
	if err != nil || !ok || specialFS(real) || fc.special || !fc.Mode.IsDir() {
		h.close()
		return nil
	}
	d := &openerDir{h: h, rel: drel}
	_, merr := h.lstat(journalMarker)
	d.state = s.state.ids[fc.key] != nil || merr == nil
	return d
}

func (d *openerDir) close() { d.h.close() }

// openFast opens name, a plain entry of d, as Open would open target t
// (false: it did not, and Open must): a regular file (never a symlink,
// never a special file, which is not even opened), on no special file
// system, whose real path (d's real path and its name) the policy lets
// be read, with no more links than deny_hardlinks allows. On a posix
// root, three system calls: the check that it is a regular file, the
// open, the fstat.
func (o *Opener) openFast(t *target, d *openerDir, name string) (*File, bool) {
	s := o.s
	if fc, err := d.h.lstat(name); err != nil || !fc.Mode.IsRegular() {
		return nil, false
	}
	f := &File{s: s}
	fc, err := d.h.openChild(name, f)
	if err != nil {
		return nil, false
	}
	refuse := func() (*File, bool) { f.handle().close(); return nil, false }
	if !fc.Mode.IsRegular() || fc.special {
		return refuse()
	}
	rel := name
	if d.rel != "." {
		rel = d.rel + "/" + name
	}
	real := t.rt.abs(rel)
	if specialFS(real) || s.checkPatterns(t.rt, rel, false, AccessRead, t.given) != nil {
		return refuse()
	}
	if s.policy.Paths.DenyHardlinks && fc.Nlink > 1 || s.stateFile(fc.key) != nil {
		return refuse()
	}
	s.trail.note(t.given, real, true)
	f.Info = fc.named(name, t.display(), real)
	return f, true
}
