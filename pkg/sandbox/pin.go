package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// Stage 3, pin: every named access starts with pin, then opens what the
// target names and checks the descriptor it got.

// pin is the one resolve-and-check every access of a named path starts
// with — read, list, stat, write target, entry (mv, rm, mkdir), explain:
// the path's shape, its root, a '..' climbing out of it, /proc, /sys and
// /dev, and the rules on the path as spelled (for a change, the write
// rules too: write_deny, a writable root, fsbox's own files). The stage
// that opens what the target names (openTarget, OpenDir, Lstat,
// openWriteTarget) then checks the descriptor it got: its kind, its real
// path against the same rules, its link count. isDir: the path is taken
// as a directory (allow rules do not apply to it).
func (s *Sandbox) pin(p string, acc Access, isDir bool) (*target, error) {
	t, err := s.resolve(p)
	if err != nil {
		return nil, err
	}
	if acc == AccessWrite && !t.rt.writable {
		// A read root inside a writable root is writable with it: a
		// change names the path from the writable root, so every write
		// rule of that root applies.
		for _, r := range s.roots {
			if prefix, ok := r.relOf(t.rt.dir); ok && r.writable {
				t = &target{given: t.given, rt: r, rel: path.Join(prefix, t.rel)}
				break
			}
		}
	}
	if err := s.lexicalChecks(t); err != nil {
		return nil, err
	}
	if acc == AccessWrite {
		clean := path.Clean(t.rel)
		if err := s.checkPatterns(t.rt, clean, isDir, AccessWrite, t.given); err != nil {
			return nil, err
		}
		if err := s.checkWrite(t.rt, clean, t.given); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// OpenDir opens a directory for listing.
func (s *Sandbox) OpenDir(p string) (*Dir, error) {
	t, err := s.pin(p, AccessRead, true)
	if err != nil {
		return nil, err
	}
	pre, err := t.rt.st.stat(s.context(), t.rel)
	if err != nil {
		return nil, s.mapErr(err, t)
	}
	if err := s.kindCheckAt(pre.Mode, true, t); err != nil {
		return nil, err
	}
	if o, ok := t.rt.st.(*objectRoot); ok {
		// A prefix has nothing to open: the stat just made is the
		// open's (openDir would ask the store the same again).
		return s.adoptDir(o.dirAt(s.context(), t.rel), pre, t, true)
	}
	h, fc, err := t.rt.st.openDir(s.context(), t.rel)
	if err != nil {
		return nil, s.mapErr(err, t)
	}
	return s.adoptDir(h, fc, t, true)
}

// adoptDir checks a freshly opened directory as the directory t names:
// its real path (from the kernel, on a posix root), filesystem and the
// policy. It takes ownership of h. With state, fsbox's state is looked
// for too: the directory is refused below a state directory, and marked
// as one when it is one (nothing in it is read); a walk's caller that
// opens the ancestors of a directory already checked leaves that out.
func (s *Sandbox) adoptDir(h dirHandle, fc facts, t *target, state bool) (*Dir, error) {
	info, err := s.checkOpened(h, fc, t, true, AccessRead)
	fail := func(err error) (*Dir, error) {
		h.close()
		return nil, err
	}
	if err != nil {
		return fail(err)
	}
	rel, _ := t.rt.relOf(info.Abs)
	d := &Dir{s: s, rt: t.rt, h: h, rel: rel, Info: info}
	if state {
		if pl := s.stateAbove(t.rt, rel); pl != nil {
			return fail(stateDenial(t.given, pl))
		}
		if rel == "." && t.rt.st.kind() != kindPosix {
			// An object root's own marker is looked at once
			// (stateOfRoot), not at every open of the root: two
			// requests a call.
			d.state, _ = s.stateOfRoot(t.rt)
		} else {
			d.state = s.stateOfOpenDir(h, info.key, info.Abs)
		}
	}
	d.refs.Store(1)
	return d, nil
}

// Lstat describes a path without following a final symlink, as stat(1)
// does. Directories on the way are resolved through the root.
func (s *Sandbox) Lstat(p string) (Info, error) {
	t, err := s.pin(p, AccessRead, true)
	if err != nil {
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
	dir, _, err := t.rt.st.openDir(s.context(), parent)
	if err != nil {
		return Info{}, s.mapErr(err, t)
	}
	defer dir.close()
	realParent, err := dir.where(t.rt.abs(path.Clean(parent)))
	if err != nil {
		return Info{}, &fserr.Error{Code: fserr.CodeIO, Path: t.given, Msg: err.Error(), Err: err}
	}
	prel, ok := t.rt.relOf(realParent)
	if !ok {
		return Info{}, t.rt.orGone(fserr.Deny(fserr.RuleSymlink, t.given, "%s leads out of its root", t.given), t.given)
	}
	rel := name
	if prel != "." {
		rel = prel + "/" + name
	}
	abs := t.rt.abs(rel)
	if specialFS(abs) {
		return Info{}, fserr.Deny(fserr.RuleSpecialFS, t.given, "%s leads into /proc, /sys or /dev, which are never readable", t.given)
	}
	if err := s.checkPatterns(t.rt, rel, true, AccessRead, t.given); err != nil {
		return Info{}, err
	}
	if pl := s.stateAbove(t.rt, rel); pl != nil {
		return Info{}, stateDenial(t.given, pl)
	}
	fc, err := dir.lstat(name)
	if err != nil {
		return Info{}, s.mapErr(err, t)
	}
	if err := s.checkPatterns(t.rt, rel, fc.Mode.IsDir(), AccessRead, t.given); err != nil {
		return Info{}, err
	}
	if pl := s.stateFile(fc.key); pl != nil && fc.Mode.IsRegular() {
		return Info{}, stateDenial(t.given, pl)
	}
	info := fc.named(name, t.display(), abs)
	if fc.Mode&fs.ModeSymlink != 0 {
		info.Target, _ = dir.readlink(name)
	}
	return info, nil
}

// openTarget is Open's core for a path already matched to its root.
// Special files are refused before they are opened (opening a device can
// have effects of its own), and the descriptor is checked again after.
func (s *Sandbox) openTarget(t *target) (*File, error) {
	// An object is opened by asking for it (a HEAD, which has no effect
	// of its own): its kind is checked on the facts opened, a request
	// fewer.
	posix := t.rt.st.kind() == kindPosix
	if posix {
		pre, err := t.rt.st.stat(s.context(), t.rel)
		if err != nil {
			return nil, s.mapErr(err, t)
		}
		if err := s.kindCheckAt(pre.Mode, false, t); err != nil {
			return nil, err
		}
	}
	atSeam("open.checked")
	f := &File{s: s}
	fc, err := t.rt.st.openFile(s.context(), t.rel, f)
	if err != nil {
		return nil, s.mapErr(err, t)
	}
	if !posix {
		if err := s.kindCheckAt(fc.Mode, false, t); err != nil {
			f.Close()
			return nil, err
		}
	}
	info, err := s.checkOpened(f.handle(), fc, t, false, AccessRead)
	if err == nil {
		if rel, ok := t.rt.relOf(info.Abs); ok {
			if pl := s.stateAbove(t.rt, rel); pl != nil {
				err = stateDenial(t.given, pl)
			}
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	f.Info = info
	return f, nil
}

// WriteTarget is a path about to be written: checked against the policy
// and with its parent directory held open, so the name cannot be moved
// under the write. Close releases it.
//
// Every change a target makes (Commit, Append, Rename, Remove, Mkdir,
// Symlink) runs under the workdir's write lock and first re-checks that the
// pinned parent still lies where it was checked, so no sequence of fsbox
// calls can move a checked path between the check and the act.
type WriteTarget struct {
	held bool // counted in targetsHeld until Close
	s    *Sandbox
	rt   *root
	// What the target pinned, as its root holds it: on a posix root the
	// parent directory and the existing file, opened (posixTarget,
	// root_posix.go); on an object root the existing object's version
	// (ob, nil when it is absent: Info.ver says which version a change
	// is conditioned on).
	posixTarget
	ob     *objFile
	dirRel string // real root-relative path of the parent
	Name   string
	Path   string // as output shows it
	Exists bool
	Info   Info // of the existing file (or entry)
	// hashed is the identity (device, inode) of the file expect last
	// hashed under the write lock: what a change may replace.
	hashed *[2]uint64
	// Survived, after rm -r of a directory in an object root, are the
	// keys below it that another writer made during the call: never
	// checked, so never removed.
	Survived []string
}

// OpenWriteTarget resolves p for writing: it must lie in the workdir,
// match no deny or write_deny pattern (on its real path), not be the
// policy file, and be a regular file or not exist. With mkdirs, missing
// parent directories are created. A symlink at p is followed while it
// stays in the workdir; an absolute or escaping one is refused. An
// existing file is opened without following and checked like a read
// (type, hard links), so what Current returns is exactly what was checked.
func (s *Sandbox) OpenWriteTarget(p string, mkdirs bool) (*WriteTarget, error) {
	var mk makeDirs
	if mkdirs {
		mk = s.mkdirAll
	}
	return s.openTarget4Write(p, mk, true, false)
}

// makeDirs makes a write target's missing parent directory rel (in rt)
// and its own missing parents, each checked where it lands: in a change
// of its own (Sandbox.mkdirAll) or inside the running one (Tx.mkdirAll).
// Nil: a missing parent is not found.
type makeDirs func(rt *root, rel, given string) error

// OpenEntry pins p's parent for a change to the entry itself (mv's source
// and destination, rm): a symlink is taken as itself and a directory is
// allowed; Info describes the entry (Exists false when absent).
func (s *Sandbox) OpenEntry(p string) (*WriteTarget, error) {
	return s.openTarget4Write(p, nil, false, true)
}

// openMade pins p's parent for an entry made (mkdir, a symlink) or kept
// as it is: as OpenEntry, but a directory that holds one of fsbox's own
// files is no refusal, since nothing below it moves.
func (s *Sandbox) openMade(p string) (*WriteTarget, error) {
	return s.openTarget4Write(p, nil, false, false)
}

func (s *Sandbox) openTarget4Write(p string, mkdirs makeDirs, follow, moves bool) (*WriteTarget, error) {
	w, err := s.pinTarget(p, mkdirs, follow, moves)
	if err == nil {
		w.held = true
		holdTarget()
	}
	return w, err
}

// pinTarget is the door of a change: pin, then the parent opened and
// checked on its real path (see openWriteTarget). moves: the entry itself
// is moved or removed, so what lies below it must be free to go too
// (fsbox's own files).
func (s *Sandbox) pinTarget(p string, mkdirs makeDirs, follow, moves bool) (*WriteTarget, error) {
	t, err := s.pin(p, AccessWrite, !follow)
	if err != nil {
		return nil, err
	}
	clean := path.Clean(t.rel)
	w, err := t.rt.st.pinTarget(s, t, clean, mkdirs, follow, moves)
	if err != nil {
		// not_found or not_a_dir must not tell what lies where a deny
		// rule reaches (through a symlink, say): denied wins.
		switch fserr.AsError(err).Code {
		case fserr.CodeNotFound, fserr.CodeNotADir, fserr.CodeNotAFile:
			if d := s.deniedAncestor(t.rt, clean, t.given); d != nil {
				return nil, d
			}
		}
	}
	return w, err
}

func (s *Sandbox) openWriteTarget(t *target, rel string, mkdirs makeDirs, follow, moves bool, depth int) (*WriteTarget, error) {
	rt, given := t.rt, t.given
	if rel == "." || path.Base(rel) == ".." {
		return nil, rootWriteDenial(rt, given)
	}
	if depth > 8 {
		return nil, fserr.Deny(fserr.RuleSymlink, given, "%s: too many levels of symbolic links", given)
	}
	parent, name := path.Dir(rel), path.Base(rel)
	if mkdirs != nil && parent != "." {
		// The target itself is checked where it would land before any
		// parent is made: a refused call makes no directory (a symlink
		// followed here names a target the pin never saw).
		realDir, err := s.mkdirAllLocked(rt, parent, given, false)
		if err != nil {
			return nil, err
		}
		if err := s.checkPatterns(rt, path.Join(realDir, name), !follow, AccessWrite, given); err != nil {
			return nil, err
		}
		if err := s.checkWrite(rt, path.Join(realDir, name), given); err != nil {
			return nil, err
		}
		if err := mkdirs(rt, parent, given); err != nil {
			return nil, err
		}
	}
	dir, err := openRoot(rt.r, parent)
	if err != nil {
		return nil, s.mapErr(err, &target{given: given, rt: rt, rel: rel})
	}
	w := &WriteTarget{s: s, rt: rt, posixTarget: posixTarget{dir: dir}, Name: name, Path: t.display()}
	fail := func(err error) (*WriteTarget, error) { w.Close(); return nil, err }
	if w.dirF, err = dir.Open("."); err != nil {
		return fail(mapOpenErr(err, given))
	}
	real, err := fdPath(w.dirF, rt.abs(parent))
	if err != nil {
		return fail(&fserr.Error{Code: fserr.CodeIO, Path: given, Msg: err.Error(), Err: err})
	}
	var ok bool
	if w.dirRel, ok = rt.relOf(real); !ok {
		return fail(rt.orGone(fserr.Deny(fserr.RuleSymlink, given, "%s leads out of the workdir", given), given))
	}
	if pl := s.stateDirOrAbove(rt, w.dirRel); pl != nil {
		return fail(stateDenial(given, pl))
	}
	if specialFS(real) || onSpecialFS(w.dirF) {
		return fail(fserr.Deny(fserr.RuleSpecialFS, given, "%s lies under /proc, /sys or /dev", given))
	}
	realRel := path.Join(w.dirRel, name)
	if err := s.checkPatterns(rt, realRel, !follow, AccessWrite, given); err != nil {
		return fail(err)
	}
	if err := s.checkWrite(rt, realRel, given); err != nil {
		return fail(err)
	}
	if moves {
		if err := s.checkOwn(rt, realRel, given, true); err != nil {
			return fail(err)
		}
	}
	fi, err := dir.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return w, nil
	case err != nil:
		return fail(mapOpenErr(err, given))
	case !follow:
		if fi.Mode().IsRegular() && s.policy.Paths.DenyHardlinks && nlink(fi) > 1 {
			// Renaming or removing one name of an inode shared with
			// outside is refused like reading or writing it (and as
			// explain says).
			return fail(fserr.Deny(fserr.RuleHardlink, given, "%s has %d hard links and deny_hardlinks is on", given, nlink(fi)))
		}
		w.Exists = true
		w.Info = newInfo(name, w.Path, rt.abs(realRel), fi)
		if fi.Mode()&fs.ModeSymlink != 0 {
			w.Info.Target, _ = dir.Readlink(name)
		}
		return w, nil
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := dir.Readlink(name)
		if err != nil {
			return fail(mapOpenErr(err, given))
		}
		next := path.Clean(path.Join(w.dirRel, target))
		if strings.HasPrefix(target, "/") || next == ".." || strings.HasPrefix(next, "../") {
			return fail(fserr.Deny(fserr.RuleSymlink, given, "%s is a symlink leading out of the workdir", given))
		}
		w.Close()
		return s.openWriteTarget(t, next, mkdirs, follow, moves, depth+1)
	case fi.IsDir():
		return fail(fserr.Errorf(fserr.CodeNotAFile, given, "%s is a directory, not a file", given))
	case !fi.Mode().IsRegular():
		return fail(fserr.Deny(fserr.RuleSpecialFile, given, "%s is a %s; FIFOs, sockets and devices are never opened", given, kindName(fi.Mode())))
	}
	if err := s.allowAt(rt, realRel, false, given); err != nil {
		return fail(err)
	}
	// The existing file, exactly the entry just checked: never a symlink
	// swapped in since, and checked on its descriptor like any read.
	if w.cur, err = openNoFollow(w, name, openReadFlags, 0); err != nil {
		return fail(noFollowErr(err, given))
	}
	if fi, err = w.cur.Stat(); err != nil {
		return fail(ioErr(given, err))
	}
	if err := s.checkFileDesc(fi, given); err != nil {
		return fail(err)
	}
	w.curStat = fi
	w.Exists = true
	w.Info = newInfo(name, w.Path, rt.abs(realRel), fi)
	return w, nil
}

// rootWriteDenial refuses a change to a writable root itself.
func rootWriteDenial(rt *root, given string) error {
	if !rt.work {
		return fserr.Deny(fserr.RuleRoot, given, "%s is a writable root or above it: it cannot be written or replaced", given)
	}
	return fserr.Deny(fserr.RuleRoot, given, "%s is the workdir or above it: it cannot be written or replaced", given)
}

// realRel is the real root-relative path of the opened directory sub
// (lexically dir), which must lie inside rt.
func realRel(rt *root, sub *os.Root, dir, given string) (string, error) {
	f, err := sub.Open(".")
	if err != nil {
		return "", mapOpenErr(err, given)
	}
	real, err := fdPath(f, rt.abs(dir))
	f.Close()
	if err != nil {
		return "", ioErr(given, err)
	}
	return realRelOf(rt, real, given)
}

// realRelOf is the real path real relative to rt, which it must lie in.
func realRelOf(rt *root, real, given string) (string, error) {
	rrel, ok := rt.relOf(real)
	if !ok {
		return "", rt.orGone(fserr.Deny(fserr.RuleSymlink, given, "%s leads out of the workdir", given), given)
	}
	return rrel, nil
}

// whereIn is the real root-relative path of the directory h (lexically
// dir), which must lie inside rt.
func whereIn(rt *root, h dirHandle, dir, given string) (string, error) {
	real, err := h.where(rt.abs(dir))
	if err != nil {
		return "", ioErr(given, err)
	}
	return realRelOf(rt, real, given)
}

// Close releases the parent directory and the existing file.
func (w *WriteTarget) Close() {
	if w.held {
		w.held = false
		releaseTarget()
	}
	w.posixTarget.close()
}

// HasModes: the target's root keeps permission bits (a directory does,
// an object store does not).
func (w *WriteTarget) HasModes() bool { return w.rt.st.kind() == kindPosix }

// Rel names the target's real path in the journal: relative to the
// workdir below it, absolute below another writable root (as output
// prints paths, and as undo can name them again).
func (w *WriteTarget) Rel() string { return w.rt.journalPath(w.rootRel()) }

// rootRel is the target's real path relative to its root.
func (w *WriteTarget) rootRel() string { return path.Join(w.dirRel, w.Name) }

// kindCheck refuses what is neither a regular file nor (when wantDir) a
// directory.
func kindCheck(m fs.FileMode, wantDir bool, given string) error {
	switch {
	case m.IsRegular():
		if wantDir {
			return fserr.Errorf(fserr.CodeNotADir, given, "%s is not a directory", given)
		}
		return nil
	case m.IsDir():
		if !wantDir {
			return fserr.Errorf(fserr.CodeNotAFile, given, "%s is a directory, not a file", given)
		}
		return nil
	}
	return fserr.Deny(fserr.RuleSpecialFile, given, "%s is a %s; FIFOs, sockets and devices are never opened", given, kindName(m))
}

// kindCheckAt is kindCheck for a path about to be opened: when the kind
// is wrong, a deny rule on where the path really leads still wins, so
// not_a_file/not_a_dir never tell what lies under a denied directory.
func (s *Sandbox) kindCheckAt(m fs.FileMode, wantDir bool, t *target) error {
	err := kindCheck(m, wantDir, t.given)
	if err != nil && fserr.AsError(err).Code != fserr.CodeDenied {
		if d := s.deniedAncestor(t.rt, path.Clean(t.rel), t.given); d != nil {
			return d
		}
	}
	return err
}

func kindName(m fs.FileMode) string { return policy.KindName(m) }

// checkOpened applies the policy to what an open descriptor really is:
// its type, its filesystem, its real path and its link count.
func (s *Sandbox) checkOpened(h handle, fc facts, t *target, wantDir bool, acc Access) (Info, error) {
	if err := kindCheck(fc.Mode, wantDir, t.given); err != nil {
		return Info{}, err
	}
	real, err := h.where(t.rt.abs(path.Clean(t.rel)))
	if err != nil {
		return Info{}, &fserr.Error{Code: fserr.CodeIO, Path: t.given, Msg: "cannot tell where " + t.given + " leads: " + err.Error(), Err: err}
	}
	if specialFS(real) || fc.special {
		return Info{}, fserr.Deny(fserr.RuleSpecialFS, t.given, "%s leads into /proc, /sys or /dev, which are never readable", t.given)
	}
	rel, ok := t.rt.relOf(real)
	if !ok && s.jn.base != "" && policy.Within(real, s.jn.base) {
		// A change replaced the file between the open and this check, and
		// the journal took the old one in: nothing escaped, the name
		// simply holds another file now.
		return Info{}, fserr.Errorf(fserr.CodeConflict, t.given, "%s was replaced while it was opened; read it again", t.given)
	}
	s.trail.note(t.given, real, true)
	if !ok {
		return Info{}, t.rt.orGone(fserr.Deny(fserr.RuleSymlink, t.given, "%s leads out of its root", t.given), t.given)
	}
	if err := s.checkPatterns(t.rt, rel, fc.Mode.IsDir(), acc, t.given); err != nil {
		return Info{}, err
	}
	if acc == AccessWrite {
		if err := s.checkWrite(t.rt, rel, t.given); err != nil {
			return Info{}, err
		}
	}
	if !fc.Mode.IsDir() && s.policy.Paths.DenyHardlinks && fc.Nlink > 1 {
		return Info{}, fserr.Deny(fserr.RuleHardlink, t.given, "%s has %d hard links and deny_hardlinks is on", t.given, fc.Nlink)
	}
	if pl := s.stateFile(fc.key); pl != nil && !fc.Mode.IsDir() {
		return Info{}, stateDenial(t.given, pl)
	}
	return fc.named(path.Base(rel), t.display(), real), nil
}

// mapErr maps an os.Root error, telling a '..' climb from a symlink escape.
// A path that does not exist is still denied when its nearest existing
// ancestor, resolved, lies under a deny rule: a missing name below a
// denied directory (reached through a symlink, say) must look exactly like
// an existing one, or not_found/denied becomes an existence oracle.
func (s *Sandbox) mapErr(err error, t *target) error {
	if c := capErr(t.given, err); c != nil {
		return c
	}
	e := mapOpenErr(err, t.given)
	if e.Code == fserr.CodeNotFound || e.Rule == fserr.RuleSymlink {
		if g := t.rt.goneErr(t.given); g != nil {
			return g
		}
	}
	if e.Code == fserr.CodeNotFound {
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
	if filepath.IsAbs(t.given) || strings.HasPrefix(t.given, "~") || s.work.url {
		return "" // an object workdir: no current directory could have been meant
	}
	cwd, err := os.Getwd()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(cwd); err != nil || policy.Within(real, s.work.dir) {
		return ""
	}
	return fmt.Sprintf(" (looked for %s: a relative path resolves against the workdir %s, and the current directory %s is not under it)",
		t.rt.abs(path.Clean(t.rel)), s.work.dir, cwd)
}

// deniedAncestor resolves the deepest existing ancestor of rel through the
// root and checks its real path plus the rest of rel against the deny
// rules and fsbox's state directories; when the rest starts with a
// symlink (a dangling one, or one to a file where a directory was
// wanted), its target is followed the same way. It returns nil when
// nothing there is denied (or nothing resolves).
func (s *Sandbox) deniedAncestor(rt *root, rel, given string) *fserr.Error {
	return s.deniedBeyond(rt, rel, given, 0)
}

// maxLinkHops bounds the symlinks deniedAncestor follows, as the kernel's
// ELOOP limit does.
const maxLinkHops = 40

func (s *Sandbox) deniedBeyond(rt *root, rel, given string, hops int) *fserr.Error {
	if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil
	}
	if !s.hasPatterns {
		// Only fsbox's state can deny here: the directories as spelled,
		// down to the first missing one, tell at no more cost, unless a
		// symlink (or a file) on the way needs resolving.
		if pl, sure := s.stateLexical(rt, path.Dir(rel)); sure {
			if pl != nil {
				return stateDenial(given, pl)
			}
			return nil
		}
	}
	dir, rest := path.Dir(rel), path.Base(rel)
	for {
		h, _, err := rt.st.openDir(s.context(), dir)
		if err == nil {
			rrel, err := whereIn(rt, h, dir, given)
			var target string
			var lerr error
			first, more, _ := strings.Cut(rest, "/")
			if err == nil {
				target, lerr = h.readlink(first)
			}
			h.close()
			switch {
			case err != nil:
				if e := fserr.AsError(err); e.Code == fserr.CodeDenied {
					return e
				}
				return nil
			case lerr != nil || hops >= maxLinkHops:
				// Below a state directory of fsbox, nothing exists
				// either: denied, as what does.
				if pl := s.stateDirOrAbove(rt, rrel); pl != nil {
					return stateDenial(given, pl)
				}
				return s.checkPatterns(rt, path.Join(rrel, rest), true, AccessRead, given)
			case path.IsAbs(target):
				return fserr.Deny(fserr.RuleSymlink, given, "%s leads through an absolute symlink", given)
			}
			return s.deniedBeyond(rt, path.Join(rrel, target, more), given, hops+1)
		}
		if dir == "." {
			return nil
		}
		dir, rest = path.Dir(dir), path.Join(path.Base(dir), rest)
	}
}

// mapOpenErr turns an error from os.Root into an *Error.
func mapOpenErr(err error, given string) *fserr.Error {
	if err == nil {
		return nil
	}
	var e *fserr.Error
	if errors.As(err, &e) {
		return e
	}
	msg := unwrapPathErr(err).Error()
	switch {
	case strings.Contains(msg, "path escapes from parent"):
		return fserr.Deny(fserr.RuleSymlink, given, "%s leads out of its root (through '..' or a symlink)", given)
	case errors.Is(err, syscall.ELOOP):
		return fserr.Deny(fserr.RuleSymlink, given, "%s: too many levels of symbolic links", given)
	case errors.Is(err, fs.ErrNotExist):
		return fserr.Errorf(fserr.CodeNotFound, given, "%s does not exist", given)
	case errors.Is(err, syscall.ENOTDIR), msg == "not a directory": // os.Root.OpenRoot on a file says so without ENOTDIR
		return fserr.Errorf(fserr.CodeNotFound, given, "%s does not exist (a parent is not a directory)", given)
	case errors.Is(err, syscall.ENAMETOOLONG):
		return fserr.Errorf(fserr.CodeUsage, given, "%s: path too long", given)
	}
	return &fserr.Error{Code: fserr.CodeIO, Path: given, Msg: fmt.Sprintf("%s: %s", given, msg), Err: err}
}

func unwrapPathErr(err error) error { return fserr.UnwrapPath(err) }

// checkFileDesc applies the descriptor checks every opened file gets, for
// reading or writing: a regular file, and one link unless the policy
// allows hard links (an inode shared with a file outside the policy).
func (s *Sandbox) checkFileDesc(fi fs.FileInfo, given string) error {
	if !fi.Mode().IsRegular() {
		return fserr.Deny(fserr.RuleSpecialFile, given, "%s is not a regular file", given)
	}
	if s.policy.Paths.DenyHardlinks && nlink(fi) > 1 {
		return fserr.Deny(fserr.RuleHardlink, given, "%s has %d hard links and deny_hardlinks is on", given, nlink(fi))
	}
	return nil
}

// noFollowErr maps the failure of an open that refuses symlinks.
func noFollowErr(err error, given string) error {
	if errors.Is(err, syscall.ELOOP) {
		return fserr.Deny(fserr.RuleSymlink, given, "%s became a symlink during the call", given)
	}
	return mapOpenErr(err, given)
}

// mkdirAllErr maps a failed MkdirAll of a path's parents: EEXIST (or
// ENOTDIR) means one of them is there but is not a directory.
func mkdirAllErr(err error, given string) *fserr.Error {
	if errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTDIR) {
		return fserr.Errorf(fserr.CodeNotADir, given, "%s: a parent exists and is not a directory", given)
	}
	return mapOpenErr(err, given)
}

// capErr is timeout when err is the call's request cap ([store]
// max_requests) stopping a request, else nil.
func capErr(given string, err error) *fserr.Error {
	var c interface{ MaxRequests() bool }
	if errors.As(err, &c) && c.MaxRequests() {
		return fserr.Timeout(given, err)
	}
	return nil
}

func ioErr(p string, err error) error {
	if err == nil {
		return nil
	}
	var e *fserr.Error
	if errors.As(err, &e) {
		return e
	}
	if c := capErr(p, err); c != nil {
		return c
	}
	if errors.Is(err, context.DeadlineExceeded) {
		// A reader made to stop at the call's deadline (write's stdin).
		return &fserr.Error{Code: fserr.CodeTimeout, Path: p, Err: err,
			Msg: "the call ran out of time (the policy's max_call_seconds, or the timeout the call asked for) before its input was in: nothing was changed"}
	}
	return &fserr.Error{Code: fserr.CodeIO, Path: p, Msg: fmt.Sprintf("%s: %v", p, unwrapPathErr(err)), Err: err}
}

// display is how output names a path: relative to the workdir inside it,
// absolute elsewhere. Lexical: it is the caller's spelling, cleaned.
func (t *target) display() string {
	return displayPath(t.rt, path.Clean(t.rel))
}

func displayPath(rt *root, rel string) string {
	if rt.work {
		return rel
	}
	if rel == "." {
		return rt.dir
	}
	if rt.url {
		return rt.abs(rel)
	}
	return path.Join(filepath.ToSlash(rt.dir), rel)
}

// journalPath names a root-relative real path in the journal: as is in
// the workdir, absolute in another writable root.
func (rt *root) journalPath(rel string) string {
	if rt.work {
		return rel
	}
	return filepath.ToSlash(rt.abs(rel))
}

// absReal is the absolute path of a root-relative real path.
func (rt *root) abs(rel string) string {
	if rel == "." {
		return rt.dir
	}
	if rt.url { // s3://BUCKET[/PREFIX]: a key is joined with '/', never cleaned as a path (which would fold "//")
		return rt.dir + "/" + rel
	}
	return filepath.Join(rt.dir, filepath.FromSlash(rel))
}

// relOf turns an absolute real path into one relative to rt, or reports
// that it is not below rt.
func (rt *root) relOf(abs string) (string, bool) {
	if abs == rt.dir {
		return ".", true
	}
	prefix := rt.dir
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	if !strings.HasPrefix(abs, prefix) {
		return "", false
	}
	return filepath.ToSlash(abs[len(prefix):]), true
}
