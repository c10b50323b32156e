package sandbox

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// WriteTarget is a path about to be written: checked against the policy
// and with its parent directory held open, so the name cannot be moved
// under the write. Close releases it.
type WriteTarget struct {
	s      *Sandbox
	rt     *root
	dir    *os.Root // the parent, pinned
	dirF   *os.File // the same directory, for fsync and locking
	dirRel string   // real root-relative path of the parent
	Name   string
	Path   string // as output shows it
	Exists bool
	Info   Info // of the existing file
}

const tempPrefix = ".fsbox-tmp-"

// OpenWriteTarget resolves p for writing: it must lie in the workdir,
// match no deny or write_deny pattern (on its real path), not be the
// policy file, and be a regular file or not exist. With mkdirs, missing
// parent directories are created. A symlink at p is followed while it
// stays in the workdir; an absolute or escaping one is refused.
func (s *Sandbox) OpenWriteTarget(p string, mkdirs bool) (*WriteTarget, error) {
	return s.openTarget4Write(p, mkdirs, true)
}

// OpenEntry pins p's parent for a change to the entry itself (mv's source
// and destination, rm): a symlink is taken as itself and a directory is
// allowed; Info describes the entry (Exists false when absent).
func (s *Sandbox) OpenEntry(p string) (*WriteTarget, error) {
	return s.openTarget4Write(p, false, false)
}

func (s *Sandbox) openTarget4Write(p string, mkdirs, follow bool) (*WriteTarget, error) {
	t, err := s.resolve(p)
	if err != nil {
		return nil, err
	}
	if err := s.lexicalChecks(t); err != nil {
		return nil, err
	}
	clean := path.Clean(t.rel)
	if err := s.checkPatterns(clean, false, AccessWrite, t.given); err != nil {
		return nil, err
	}
	if err := s.checkWrite(t.rt, clean, t.given); err != nil {
		return nil, err
	}
	return s.openWriteTarget(t.rt, clean, t.given, t.display(), mkdirs, follow, 0)
}

func (s *Sandbox) openWriteTarget(rt *root, rel, given, display string, mkdirs, follow bool, depth int) (*WriteTarget, error) {
	if rel == "." || path.Base(rel) == ".." {
		return nil, deny(RuleRoot, given, "%s is the workdir or above it: it cannot be written or replaced", given)
	}
	if depth > 8 {
		return nil, deny(RuleSymlink, given, "%s: too many levels of symbolic links", given)
	}
	parent, name := path.Dir(rel), path.Base(rel)
	if mkdirs && parent != "." {
		if err := s.checkPatterns(parent, true, AccessWrite, given); err != nil {
			return nil, err
		}
		if err := rt.r.MkdirAll(parent, 0o777); err != nil {
			return nil, mkdirAllErr(err, given)
		}
	}
	dir, err := openRoot(rt.r, parent)
	if err != nil {
		return nil, mapOpenErr(err, given)
	}
	w := &WriteTarget{s: s, rt: rt, dir: dir, Name: name, Path: display}
	fail := func(err error) (*WriteTarget, error) { w.Close(); return nil, err }
	if w.dirF, err = dir.Open("."); err != nil {
		return fail(mapOpenErr(err, given))
	}
	real, err := fdPath(w.dirF, rt.abs(parent))
	if err != nil {
		return fail(&Error{Code: CodeIO, Path: given, Msg: err.Error(), Err: err})
	}
	var ok bool
	if w.dirRel, ok = rt.relOf(real); !ok {
		return fail(deny(RuleSymlink, given, "%s leads out of the workdir", given))
	}
	if specialFS(real) || onSpecialFS(w.dirF) {
		return fail(deny(RuleSpecialFS, given, "%s lies under /proc, /sys or /dev", given))
	}
	realRel := path.Join(w.dirRel, name)
	if err := s.checkPatterns(realRel, false, AccessWrite, given); err != nil {
		return fail(err)
	}
	if err := s.checkWrite(rt, realRel, given); err != nil {
		return fail(err)
	}
	fi, err := dir.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return w, nil
	case err != nil:
		return fail(mapOpenErr(err, given))
	case !follow:
		w.Exists = true
		w.Info = newInfo(name, display, rt.abs(realRel), fi)
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
			return fail(deny(RuleSymlink, given, "%s is a symlink leading out of the workdir", given))
		}
		w.Close()
		return s.openWriteTarget(rt, next, given, display, mkdirs, follow, depth+1)
	case fi.IsDir():
		return fail(Errorf(CodeNotAFile, given, "%s is a directory, not a file", given))
	case !fi.Mode().IsRegular():
		return fail(deny(RuleSpecialFile, given, "%s is a %s; FIFOs, sockets and devices are never opened", given, kindName(fi.Mode())))
	}
	w.Exists = true
	w.Info = newInfo(name, display, rt.abs(realRel), fi)
	return w, nil
}

// Close releases the parent directory.
func (w *WriteTarget) Close() {
	if w.dirF != nil {
		w.dirF.Close()
	}
	w.dir.Close()
}

// Current opens the existing file for reading (regular files only,
// without blocking).
func (w *WriteTarget) Current() (*File, error) {
	f, err := w.dir.OpenFile(w.Name, openReadFlags, 0)
	if err != nil {
		return nil, mapOpenErr(err, w.Path)
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, deny(RuleSpecialFile, w.Path, "%s is not a regular file", w.Path)
	}
	return newFile(w.s, f, newInfo(w.Name, w.Path, w.Info.Abs, fi)), nil
}

// CurrentSHA256 hashes the existing content ("" when the file is absent).
func (w *WriteTarget) CurrentSHA256() (string, error) {
	if !w.Exists {
		return "", nil
	}
	f, err := w.Current()
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", AsError(err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Lock takes an exclusive advisory lock on the parent directory until
// Close, so check-then-replace sequences (--expect-sha256, edit) of
// cooperating fsbox processes never interleave.
func (w *WriteTarget) Lock() error { return lockDir(w.dirF) }

// ReplaceResult is what Replace wrote.
type ReplaceResult struct {
	Bytes  int64
	SHA256 string
}

// Replace writes r (at most max bytes) to a new temporary file beside the
// target, syncs it, gives it the old file's mode (or mode, or 0666 less
// the umask for a new file), renames it over the target and syncs the
// directory: readers see the old content or the new, never a mix. Over
// max: too_large, and nothing changes.
func (w *WriteTarget) Replace(r io.Reader, max int64, mode *fs.FileMode) (ReplaceResult, error) {
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := tempPrefix + hex.EncodeToString(rnd[:])
	f, err := w.dir.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return ReplaceResult{}, mapOpenErr(err, w.Path)
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			w.dir.Remove(tmp)
		}
	}()
	// io.Copy into an *os.File lets the kernel move the bytes
	// (copy_file_range from a file, splice from a pipe) when it can.
	n, err := io.Copy(f, io.LimitReader(r, max+1))
	if err != nil {
		return ReplaceResult{}, ioErr(w.Path, err)
	}
	if n > max {
		return ReplaceResult{}, &Error{Code: CodeTooLarge, Rule: RuleSizeCap, Path: w.Path,
			Msg: fmt.Sprintf("the content is over max_write_bytes = %d: nothing was written", max)}
	}
	switch {
	case mode != nil:
		err = f.Chmod(*mode)
	case w.Exists:
		err = f.Chmod(w.Info.Mode.Perm() | w.Info.Mode&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
	}
	if err != nil {
		return ReplaceResult{}, ioErr(w.Path, err)
	}
	sum, err := syncHashing(f, n)
	if err != nil {
		return ReplaceResult{}, ioErr(w.Path, err)
	}
	if err := f.Close(); err != nil {
		return ReplaceResult{}, ioErr(w.Path, err)
	}
	if err := w.dir.Rename(tmp, w.Name); err != nil {
		return ReplaceResult{}, ioErr(w.Path, err)
	}
	done = true
	w.s.trail.bytesWritten.Add(n)
	if err := w.dirF.Sync(); err != nil {
		return ReplaceResult{}, ioErr(w.Path, err)
	}
	return ReplaceResult{Bytes: n, SHA256: sum}, nil
}

// Append adds data to the end of the file (creating it) with a single
// write(2) on an O_APPEND descriptor, so parallel appenders never
// interleave within one call's data.
func (w *WriteTarget) Append(data []byte, mode *fs.FileMode) error {
	perm := fs.FileMode(0o666)
	if mode != nil {
		perm = mode.Perm() // os.Root refuses setuid/setgid/sticky here: Chmod below sets them
	}
	f, err := w.dir.OpenFile(w.Name, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscallNonblock, perm)
	if err != nil {
		return mapOpenErr(err, w.Path)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return deny(RuleSpecialFile, w.Path, "%s is not a regular file", w.Path)
	}
	if mode != nil && fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != *mode {
		// --mode sets the bits exactly (no umask), as Replace does.
		if err := f.Chmod(*mode); err != nil {
			return ioErr(w.Path, err)
		}
	}
	n, err := f.Write(data)
	w.s.trail.bytesWritten.Add(int64(n))
	if err != nil || n != len(data) {
		return ioErr(w.Path, err)
	}
	return ioErr(w.Path, f.Sync())
}

// mkdirAllErr maps a failed MkdirAll of a path's parents: EEXIST (or
// ENOTDIR) means one of them is there but is not a directory.
func mkdirAllErr(err error, given string) *Error {
	if errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTDIR) {
		return Errorf(CodeNotADir, given, "%s: a parent exists and is not a directory", given)
	}
	return mapOpenErr(err, given)
}

func ioErr(p string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeIO, Path: p, Msg: fmt.Sprintf("%s: %v", p, unwrapPathErr(err)), Err: err}
}

// Rel is the target's real path relative to the workdir.
func (w *WriteTarget) Rel() string { return path.Join(w.dirRel, w.Name) }

// Rename moves src's entry to dst's name (both pinned in the workdir). It
// refuses to replace an existing dst unless force.
func (s *Sandbox) Rename(src, dst *WriteTarget, force bool) error {
	if !force && dst.Exists {
		return Errorf(CodeExists, dst.Path, "%s exists: pass --force to replace it", dst.Path)
	}
	if src.Info.Type == "dir" && (dst.Rel() == src.Rel() || strings.HasPrefix(dst.Rel()+"/", src.Rel()+"/")) {
		return Errorf(CodeUsage, dst.Path, "cannot move %s into itself", src.Path)
	}
	if err := renameAt(src, dst, force); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return Errorf(CodeExists, dst.Path, "%s exists: pass --force to replace it", dst.Path)
		}
		return ioErr(dst.Path, err)
	}
	dst.dirF.Sync()
	src.dirF.Sync()
	return nil
}

// Mkdir creates p and its parents in the workdir; created reports whether
// p itself was new.
func (s *Sandbox) Mkdir(p string) (display string, created bool, err error) {
	w, err := s.OpenEntry(p)
	if err != nil {
		if AsError(err).Code != CodeNotFound {
			return "", false, err
		}
		// A parent is missing: create the parents, then try again.
		t, rerr := s.resolve(p)
		if rerr != nil {
			return "", false, rerr
		}
		parent := path.Dir(path.Clean(t.rel))
		if err := s.checkPatterns(parent, true, AccessWrite, p); err != nil {
			return "", false, err
		}
		if err := s.checkWrite(t.rt, parent, p); err != nil {
			return "", false, err
		}
		if err := t.rt.r.MkdirAll(parent, 0o777); err != nil {
			return "", false, mkdirAllErr(err, p)
		}
		if w, err = s.OpenEntry(p); err != nil {
			return "", false, err
		}
	}
	defer w.Close()
	if w.Exists {
		if w.Info.Type != "dir" {
			return "", false, Errorf(CodeExists, p, "%s exists and is not a directory", p)
		}
		return w.Path, false, nil
	}
	if err := w.dir.Mkdir(w.Name, 0o777); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return w.Path, false, nil
		}
		return "", false, mapOpenErr(err, p)
	}
	w.dirF.Sync()
	return w.Path, true, nil
}

// Remove deletes the entry (a symlink itself, never its target). A
// directory needs recursive; then every path below is checked first and
// one the policy denies stops the call before anything is removed.
func (s *Sandbox) Remove(w *WriteTarget, recursive bool) error {
	if !w.Exists {
		return Errorf(CodeNotFound, w.Path, "%s does not exist", w.Path)
	}
	if w.Info.Type != "dir" {
		return ioErr(w.Path, w.dir.Remove(w.Name))
	}
	if !recursive {
		return Errorf(CodeNotAFile, w.Path, "%s is a directory: pass -r to remove it and everything below", w.Path)
	}
	var denied error
	_, err := s.Walk(w.Path, WalkOptions{Hidden: true, NoIgnore: true, MaxDepth: -1, writeCheck: true, onDenied: func(p string) {
		if denied == nil {
			denied = deny(RuleDeny, p, "%s is protected by the policy: nothing was removed", p)
			// Name the rule that protects it (deny, write_deny, allow).
			if e := s.checkPatterns(p, false, AccessWrite, p); e != nil {
				denied = deny(e.Rule, p, "%s; nothing was removed", e.Msg)
			}
		}
	}}, func(e *Entry) error {
		e.Release()
		return nil
	})
	if err != nil {
		return err
	}
	if denied != nil {
		return denied
	}
	return ioErr(w.Path, w.dir.RemoveAll(w.Name))
}

// SelfPath is the absolute, symlink-free path of the running binary, the
// target of the links `fsbox links` creates.
func SelfPath() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(exe)
}

// Symlink creates (or refreshes) a symlink entry in the workdir pointing at
// target. An existing entry that is not a symlink is left alone: exists.
func (s *Sandbox) Symlink(p, target string) (created bool, err error) {
	w, err := s.OpenEntry(p)
	if err != nil {
		return false, err
	}
	defer w.Close()
	if w.Exists {
		if w.Info.Type != "symlink" {
			return false, Errorf(CodeExists, p, "%s exists and is not a symlink", p)
		}
		if w.Info.Target == target {
			return false, nil
		}
		if err := w.dir.Remove(w.Name); err != nil {
			return false, ioErr(p, err)
		}
	}
	if err := w.dir.Symlink(target, w.Name); err != nil {
		return false, ioErr(p, err)
	}
	return true, nil
}

// syncHashing flushes f's n bytes to disk while it hashes them back from
// the page cache on another core: SHA-256 of a large write costs nothing
// beyond the fsync it overlaps, and it is the hash of the bytes the file
// really holds.
func syncHashing(f *os.File, n int64) (string, error) {
	synced := make(chan error, 1)
	go func() { synced <- f.Sync() }()
	h := sha256.New()
	_, herr := io.CopyBuffer(h, io.NewSectionReader(f, 0, n), make([]byte, 256<<10))
	if err := <-synced; err != nil {
		return "", err
	}
	if herr != nil {
		return "", herr
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
