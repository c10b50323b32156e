package sandbox

import (
	"io/fs"
	"path"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// A change of several steps (undo's): one transaction whose steps each
// name a path. Every step pins its path through the door under the
// change's locks, when it runs (an earlier step may have made its
// parent), and acts as the one-step change of the same name would; the
// caller says what the journal records of it all (Note, Moves), once.

// Change runs fn as one change of the named paths (as output shows
// them: workdir-relative, or absolute below another writable root).
// Each is pinned for writing first (its root, the rules on it and the
// write rules), the change takes the locks of their roots and of the
// journal of the change undoes names (its home: the undo is recorded
// there), and fn acts through tx. A step may name only a path in a root
// the change locked. What fn notes is recorded once, when it returns
// nil or has passed Made; Change returns the record's id.
func (s *Sandbox) Change(paths []string, undoes string, fn func(tx *Tx) error) (string, error) {
	var roots []*root
	var claims []*target
	if j, _, ok := s.parseID(undoes); ok && j != nil {
		roots = append(roots, j.rt)
	}
	for _, p := range paths {
		t, err := s.pin(p, AccessWrite, true)
		if err != nil {
			return "", err
		}
		roots = addRoot(roots, t.rt)
		claims = append(claims, t)
	}
	return s.changeClaiming(roots, claims, nil, func(tx *Tx) error {
		tx.rec.Undoes = undoes
		defer tx.release()
		return fn(tx)
	})
}

// release drops what the steps staged and was not swapped in, and
// closes the targets the change held.
func (tx *Tx) release() {
	if tx.files != nil {
		tx.files.Abort()
	}
	for _, w := range tx.held {
		w.Close()
	}
}

// hold refuses a step in a root the change did not lock, or in an
// object root (the steps act through descriptors; the object root's
// acts are its changer's).
func (tx *Tx) hold(rt *root) error {
	if !rt.writable {
		return fserr.Deny(fserr.RuleReadOnly, rt.dir, "%s is not a writable root", rt.dir)
	}
	for _, r := range tx.roots {
		if r == rt {
			return nil
		}
	}
	return fserr.Errorf(fserr.CodeConflict, rt.dir, "%s is a writable root this change did not name: nothing more was changed", rt.dir)
}

// quietly runs a step: what the change records is the caller's to say.
func (tx *Tx) quietly(step func() error) error {
	rec := tx.rec
	err := step()
	tx.rec = rec
	return err
}

// inside is a target pinned inside the change (w, err), refused when
// it lies in a root the change did not lock.
func (tx *Tx) inside(w *WriteTarget, err error) (*WriteTarget, error) {
	if err != nil {
		return nil, err
	}
	if err := tx.hold(w.rt); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// entry pins p as an entry (a symlink as itself) inside the change.
func (tx *Tx) entry(p string) (*WriteTarget, error) { return tx.inside(tx.s.OpenEntry(p)) }

// Mkdir makes the directory p and its missing parents (as Sandbox.Mkdir;
// an existing directory is no error).
func (tx *Tx) Mkdir(p string) error {
	return tx.quietly(func() error {
		_, _, err := mkdirIn(tx, p)
		return err
	})
}

// RemoveLink removes p, which must be the symlink to target that it
// was when the caller looked (pinned under the change's locks, then
// re-checked by identity at the removal): anything else there, a file
// an outside writer put in its place included, is a conflict and stays.
func (tx *Tx) RemoveLink(p, target string) error {
	w, err := tx.entry(p)
	if err != nil {
		return err
	}
	defer w.Close()
	if !w.Exists || w.Info.Type != "symlink" || w.Info.Target != target {
		return fserr.Errorf(fserr.CodeConflict, w.Path, "%s is no longer the symlink to %s that the change made: it stays", w.Path, target)
	}
	return tx.quietly(func() error { return removeEntry(tx, w, false, nil) })
}

// Move renames the entry from to the name to, never over anything, with
// the rules Sandbox.Rename checks.
func (tx *Tx) Move(from, to string) error {
	src, err := tx.entry(from)
	if err != nil {
		return err
	}
	defer src.Close()
	var dst *WriteTarget
	if src.rt.st.kind() == kindObject {
		// A prefix is never made: the name moved back to may lie below
		// one that vanished with the keys a step before removed.
		dst, err = tx.inside(tx.s.openTarget4Write(to, tx.mkdirAll, false, true))
	} else {
		dst, err = tx.entry(to)
	}
	if err != nil {
		return err
	}
	defer dst.Close()
	if o, ok := src.rt.st.(*objectRoot); ok {
		if !src.Exists {
			return fserr.Errorf(fserr.CodeNotFound, src.Path, "%s does not exist", src.Path)
		}
		if err := o.probeRename(src, dst); err != nil {
			return err
		}
		return tx.quietly(func() error { return o.move(tx, src, dst, false, nil) })
	}
	return tx.quietly(func() error { return renameIn(tx, src, dst, false, nil) })
}

// Put stages content for the file p (missing parents are made, inside
// the change), with mode, and, when expect is set, the sha256 the file
// at p must have when Swap swaps it in ("" = absent). It returns the
// path as output shows it.
func (tx *Tx) Put(p string, content []byte, mode fs.FileMode, expect *string) (string, error) {
	w, err := tx.target(p, tx.mkdirAll)
	if err != nil {
		return "", err
	}
	max := tx.s.Limits().MaxWriteBytes
	o := CommitOptions{Expect: expect, Mode: &mode}
	if w.rt.st.kind() == kindObject {
		o.Mode = nil // an object has no mode (the journal records 0644)
	}
	return w.Path, tx.batch().Put(w, content, max, o)
}

// Delete stages the removal of the file p, under the same condition.
func (tx *Tx) Delete(p string, expect *string) (string, error) {
	w, err := tx.target(p, nil)
	if err != nil {
		return "", err
	}
	return w.Path, tx.batch().Delete(w, CommitOptions{Expect: expect})
}

// target pins p as a file target held until the change ends.
func (tx *Tx) target(p string, mkdirs makeDirs) (*WriteTarget, error) {
	w, err := tx.inside(tx.s.openTarget4Write(p, mkdirs, true, false))
	if err == nil {
		tx.held = append(tx.held, w)
	}
	return w, err
}

// batch is the files the change stages (Put, Delete).
func (tx *Tx) batch() *Batch {
	if tx.files == nil {
		tx.files = tx.s.NewBatch()
	}
	return tx.files
}

// Swap swaps every staged file in, all or none (as a Batch commits), and
// notes each in the record.
func (tx *Tx) Swap() error {
	b := tx.batch()
	if b.done {
		return fserr.Errorf(fserr.CodeIO, "", "the change's files were already swapped")
	}
	if _, err := b.staged(); err != nil {
		return err
	}
	_, err := b.commitIn(tx)
	return err
}

// Symlink makes p a symlink to target, as Sandbox.Symlink.
func (tx *Tx) Symlink(p, target string) error {
	w, err := tx.pinMade(p)
	if err != nil {
		return err
	}
	defer w.Close()
	if err := tx.s.allowAt(w.rt, w.rootRel(), false, p); err != nil {
		return err
	}
	_, err = symlinkAt(tx, w, p, target)
	return err
}

// pinMade pins p for an entry made (openMade) inside the change.
func (tx *Tx) pinMade(p string) (*WriteTarget, error) { return tx.inside(tx.s.openMade(p)) }

// RemoveEmptyDir removes the directory p if it is empty, and says
// whether it did. One that is not empty, is gone or is no longer a
// directory (or not the one pinned) stays: conflict, or, with leave, no
// error (undo with force).
func (tx *Tx) RemoveEmptyDir(p string, leave bool) (bool, error) {
	w, err := tx.entry(p)
	if err != nil {
		return false, err
	}
	defer w.Close()
	if err := rmdirAt(w); err != nil {
		if leave {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// Note adds paths to what the change records.
func (tx *Tx) Note(pcs ...PathChange) { tx.note(pcs...) }

// Moves adds renames to what the change records; first: they came
// before its other paths changed.
func (tx *Tx) Moves(first bool, ms ...Move) {
	tx.moved(ms...)
	tx.rec.MovesFirst = first
}

// Made marks the change made: from here, what fn noted is recorded even
// when a later step fails.
func (tx *Tx) Made() { tx.noReturn = true }

// mkdirAll makes rel and its missing parents in rt inside the change
// (a write target's makeDirs under the locks the change holds).
func (tx *Tx) mkdirAll(rt *root, rel, given string) error {
	if err := tx.hold(rt); err != nil {
		return err
	}
	_, err := tx.s.mkdirAllLocked(rt, rel, given, true)
	return err
}

// mkdirIn makes p and its missing parents inside a change, p pinned
// under its locks (in the parent just made, when it was missing), and
// notes every directory made.
func mkdirIn(tx *Tx, p string) (display string, created bool, err error) {
	w, err := tx.s.openMade(p)
	if err != nil {
		if !fserr.Absent(err) {
			return "", false, err
		}
		if w, err = tx.mkdirParents(p); err != nil {
			return "", false, err
		}
	}
	defer w.Close()
	if err := tx.hold(w.rt); err != nil {
		return "", false, err
	}
	if w.Exists {
		return madeExists(w, p)
	}
	created, err = mkdirAt(tx, w, p)
	return w.Path, created, err
}

// mkdirParents makes p's missing parents one at a time, each checked
// where it lands (mkdirAllLocked), notes them, and pins p in the parent
// just made.
func (tx *Tx) mkdirParents(p string) (*WriteTarget, error) {
	s := tx.s
	t, err := s.resolve(p)
	if err != nil {
		return nil, err
	}
	if err := tx.hold(t.rt); err != nil {
		return nil, err
	}
	parent := path.Dir(path.Clean(t.rel))
	made := missingDirs(t.rt, parent) // for the journal: what mkdir -p made
	if _, err := s.mkdirAllLocked(t.rt, parent, p, true); err != nil {
		return nil, err
	}
	for _, d := range made {
		tx.note(PathChange{Path: t.rt.journalPath(d), After: &FileState{Type: "dir"}})
	}
	if len(made) > 0 {
		tx.Made() // the parents stay, recorded, whatever follows
	}
	if t.rt.st.kind() == kindObject {
		// A prefix is never made: p is pinned as a target whose missing
		// parents are no refusal.
		return s.openTarget4Write(p, tx.mkdirAll, false, false)
	}
	return s.openMade(p)
}
