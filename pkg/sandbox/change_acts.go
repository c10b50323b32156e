package sandbox

import (
	"io"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// The acts of a change as the door offers them: what each checks whatever
// the root (the policy's preconditions, the targets' rules, checked when
// they were pinned), then its root's changer, which makes it inside the
// door's transaction (changeIn: one change at a time, a posix root's
// locks, the deadline, the journal's record) and commits it conditioned
// on what the targets pinned.

// changer is the change side of a root's storage: each act, committed
// conditioned on the handles its targets pinned. On a posix root
// (change_ops.go, batch.go) that is the pinned parent's kernel path and
// the entry's identity, re-checked under the roots' locks, then
// renameat2 and its kin on the pinned directories; on an object root
// (root_object_change.go) a request conditioned on the version pinned
// (IfVersion; IfAbsent for a name that was free), which the store itself
// refuses once another writer has been there.
type changer interface {
	// pinTarget pins rel (t's path, cleaned and checked by pin) for a
	// change: the door's checks on where it really lies, then what it
	// holds now (see Sandbox.pinTarget).
	pinTarget(s *Sandbox, t *target, rel string, mkdirs makeDirs, follow, moves bool) (*WriteTarget, error)
	commit(w *WriteTarget, r io.Reader, max int64, o CommitOptions) (ReplaceResult, error)
	appendTo(w *WriteTarget, data []byte, o CommitOptions) (ReplaceResult, error)
	rename(src, dst *WriteTarget, force bool, expect *string) error
	probeRename(src, dst *WriteTarget) error
	remove(w *WriteTarget, recursive bool, expect *string) error
	mkdir(s *Sandbox, p string) (display string, created bool, err error)
	symlink(s *Sandbox, p, target string) (bool, error)
}

// Commit writes r (at most max bytes) as the target's whole content:
// readers see the old content or the new, never a mix. Over max:
// too_large, and nothing changes.
func (w *WriteTarget) Commit(r io.Reader, max int64, o CommitOptions) (ReplaceResult, error) {
	if err := w.precondition(o); err != nil {
		return ReplaceResult{}, err
	}
	return w.rt.st.commit(w, r, max, o)
}

// Append adds data to the end of the file (creating it); parallel
// appenders never interleave within one call's data. It returns the bytes
// appended and the sha256 of the whole file afterwards.
func (w *WriteTarget) Append(data []byte, o CommitOptions) (ReplaceResult, error) {
	if err := w.precondition(o); err != nil {
		return ReplaceResult{}, err
	}
	return w.rt.st.appendTo(w, data, o)
}

// Rename moves src's entry to dst's name (both pinned in the workdir). It
// refuses to replace an existing dst unless force. Rules follow content,
// not names: the entry and, for a directory, every path below it must be
// writable at its old place and at its new one (no deny, deny_regex,
// write_deny; an allow rule matched by every file), or nothing moves.
func (s *Sandbox) Rename(src, dst *WriteTarget, force bool) error {
	return s.RenameExpect(src, dst, force, nil)
}

// RenameExpect is Rename whose force replaces dst only while the file at
// dst's name hashes to expect (checked at the commit). Under [write]
// require_precondition, force without expect replaces nothing: an
// existing dst is exists, as without force.
func (s *Sandbox) RenameExpect(src, dst *WriteTarget, force bool, expect *string) error {
	if force && expect == nil && s.RequirePrecondition() {
		force = false
	}
	if err := sameKind(src, dst); err != nil {
		return err
	}
	return src.rt.st.rename(src, dst, force, expect)
}

// ProbeRename runs the rules Rename would check to move the entry from
// to the name to (what lies below a directory included), changing
// nothing; an absent from is no refusal.
func (s *Sandbox) ProbeRename(from, to string) error {
	src, err := s.OpenEntry(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := s.OpenEntry(to)
	if err != nil {
		return err
	}
	defer dst.Close()
	if !src.Exists {
		return nil
	}
	if err := sameKind(src, dst); err != nil {
		return err
	}
	return src.rt.st.probeRename(src, dst)
}

// sameKind refuses a move between roots of two kinds (a directory and an
// object store): no one request of either makes it.
func sameKind(src, dst *WriteTarget) error {
	if src.rt.st.kind() != dst.rt.st.kind() {
		return fserr.Errorf(fserr.CodeIO, dst.Path, "%s and %s lie in roots of two kinds (%s, %s), between which no request moves anything: copy, then remove", src.Path, dst.Path, src.rt.st.kind(), dst.rt.st.kind())
	}
	return nil
}

// Remove deletes the entry (a symlink itself, never its target). A
// directory needs recursive; then every path below is checked first, and
// one the policy denies (or any error while checking) stops the call
// before anything is removed; what is removed is exactly what was
// checked, and anything that changed in between stops it with conflict.
func (s *Sandbox) Remove(w *WriteTarget, recursive bool) error {
	return s.RemoveExpect(w, recursive, nil)
}

// RemoveExpect is Remove with a precondition: with expect, the entry must
// be a file whose content hashes to it at the commit. Under [write]
// require_precondition a file is removed only with expect, and a
// directory only when it is empty (precondition_required otherwise).
func (s *Sandbox) RemoveExpect(w *WriteTarget, recursive bool, expect *string) error {
	if !w.Exists {
		return fserr.Errorf(fserr.CodeNotFound, w.Path, "%s does not exist", w.Path)
	}
	return w.rt.st.remove(w, recursive, expect)
}

// Mkdir creates p and its parents in the workdir, as one change (one
// record in the journal, which undo takes back whole); created reports
// whether p itself was new.
func (s *Sandbox) Mkdir(p string) (display string, created bool, err error) {
	return s.changerOf(p).mkdir(s, p)
}

// Symlink creates (or refreshes) a symlink entry in the workdir pointing at
// target. An existing entry that is not a symlink is left alone: exists.
func (s *Sandbox) Symlink(p, target string) (created bool, err error) {
	return s.changerOf(p).symlink(s, p, target)
}

// changerOf is the changer of the root p names, as spelled (the act pins
// p itself, and answers for a p that names none): never another root's,
// so an act runs on the store its target lies in.
func (s *Sandbox) changerOf(p string) changer {
	if t, err := s.resolveLexical(p); err == nil {
		return t.rt.st
	}
	return s.work.st
}

// The posix root's acts (pin.go, change_ops.go).

func (*posixStore) pinTarget(s *Sandbox, t *target, rel string, mkdirs makeDirs, follow, moves bool) (*WriteTarget, error) {
	return s.openWriteTarget(t, rel, mkdirs, follow, moves, 0)
}

func (*posixStore) commit(w *WriteTarget, r io.Reader, max int64, o CommitOptions) (ReplaceResult, error) {
	return w.commitPosix(r, max, o)
}

func (*posixStore) appendTo(w *WriteTarget, data []byte, o CommitOptions) (ReplaceResult, error) {
	return w.appendPosix(data, o)
}

func (*posixStore) rename(src, dst *WriteTarget, force bool, expect *string) error {
	return src.s.renamePosix(src, dst, force, expect)
}

func (*posixStore) probeRename(src, dst *WriteTarget) error {
	return src.s.probeRenamePosix(src, dst)
}

func (*posixStore) remove(w *WriteTarget, recursive bool, expect *string) error {
	return w.s.removePosix(w, recursive, expect)
}

func (*posixStore) mkdir(s *Sandbox, p string) (string, bool, error) { return s.mkdirPosix(p) }

func (*posixStore) symlink(s *Sandbox, p, target string) (bool, error) {
	return s.symlinkPosix(p, target)
}
