package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// The change side of an object root. A target is pinned by its key (no
// links: the path checked is the key) and, when it exists, the version
// read; each act runs inside the door's transaction (changeIn: one change
// at a time in this process, the deadline; no locks), keeps the version
// it replaces in the journal in the store (a copy made there, conditioned
// on that version: journal_object.go), and commits with one conditional
// request per key, so the store refuses it once another writer has been
// there: every write is conditioned on the version it checked (IfVersion)
// or on the name being free (IfAbsent) — a plain write pins again and
// retries when another writer came first, so it replaces what is there,
// kept — and a removal on the version pinned. An object the store gives
// no version is changed only by a plain write. Object roots have no
// links, no modes and no rename of directories; changes of several keys
// are batch_object.go's.

// pinTarget is the door's pin of a change's target on an object root:
// rel (cleaned, checked by pin) is the key, and the rules on it are the
// rules on what changes. With mkdirs a missing parent is no refusal (a
// prefix needs no making); follow: a file target (a directory there is
// not_a_file).
func (o *objectRoot) pinTarget(s *Sandbox, t *target, rel string, mkdirs makeDirs, follow, moves bool) (*WriteTarget, error) {
	rt, given := t.rt, t.given
	if rel == "." || path.Base(rel) == ".." {
		return nil, rootWriteDenial(rt, given)
	}
	parent, name := path.Dir(rel), path.Base(rel)
	if pl := s.stateDirOrAbove(rt, parent); pl != nil {
		return nil, stateDenial(given, pl)
	}
	if err := s.checkPatterns(rt, rel, !follow, AccessWrite, given); err != nil {
		return nil, err
	}
	if err := s.checkWrite(rt, rel, given); err != nil {
		return nil, err
	}
	if moves {
		if err := s.checkOwn(rt, rel, given, true); err != nil {
			return nil, err
		}
	}
	ctx := s.context()
	// A file target is pinned with the GET that opens a file (its first
	// 64 KiB: all of a small file, which an edit then reads with no
	// further request); anything else with a HEAD.
	var fc facts
	var err error
	var opened File
	if follow {
		fc, err = o.openFile(ctx, rel, &opened)
	} else {
		fc, err = rt.st.stat(ctx, rel)
	}
	// The parent: when the target exists, a prefix holds it, and only a
	// file of the parent's name (a key both an object and a prefix) is
	// asked about; else whether a directory is there at all.
	if perr := o.parentOf(ctx, s, t, parent, mkdirs != nil, err == nil); perr != nil {
		return nil, perr
	}
	w := &WriteTarget{s: s, rt: rt, dirRel: parent, Name: name, Path: t.display()}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return w, nil
	case err != nil:
		if c := capErr(given, err); c != nil {
			return nil, c
		}
		return nil, mapOpenErr(err, given)
	case follow && fc.Mode.IsDir():
		return nil, fserr.Errorf(fserr.CodeNotAFile, given, "%s is a directory, not a file", given)
	case follow:
		if err := s.allowAt(rt, rel, false, given); err != nil {
			return nil, err
		}
	}
	w.Exists, w.Info = true, fc.named(name, w.Path, rt.abs(rel))
	if fc.Mode.IsRegular() {
		w.ob = &objFile{root: o, ctx: ctx, key: rel, ver: fc.ver, size: fc.Size, sum: fc.storeSum}
		if of, ok := opened.obj.(*objFile); ok && !of.dir {
			w.ob.head, w.ob.mtime = of.head, of.mtime
			if w.ob.sum == "" && int64(len(of.head)) == fc.Size {
				sum := sha256.Sum256(of.head)
				w.ob.sum = hex.EncodeToString(sum[:])
			}
		}
	}
	return w, nil
}

// key is the target's key.
func (w *WriteTarget) key() string { return w.rootRel() }

// now is what the target's key holds now: its version and content's
// sha256 ("" and "" when absent). It reads the object whole.
func (o *objectRoot) now(ctx context.Context, w *WriteTarget) (ver, sum string, size int64, err error) {
	body, ob, err := o.obj.Get(ctx, w.key(), 0, -1, "")
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", 0, nil
	}
	if err != nil {
		return "", "", 0, ioErr(w.Path, err)
	}
	defer body.Close()
	h := sha256.New()
	if _, err := io.Copy(h, body); err != nil {
		return "", "", 0, ioErr(w.Path, err)
	}
	return ob.Version, hex.EncodeToString(h.Sum(nil)), ob.Size, nil
}

// condition is what a commit to w asks of the store, and the version it
// replaces (nil: none): with expect, the version found to hash to it now
// (absent: the name free); noReplace, the name free; else the version
// pinned (absent: the name free). A plain write (none of the three) is
// conditioned too, so that the journal keeps exactly what it replaces:
// its commit pins again when another writer came first (commitPlain).
func (o *objectRoot) condition(ctx context.Context, w *WriteTarget, expect *string, noReplace bool) (ObjectCond, *Object, error) {
	switch {
	case expect != nil:
		ver, have, size, err := o.now(ctx, w)
		if err != nil {
			return ObjectCond{}, nil, err
		}
		if have != *expect {
			return ObjectCond{}, nil, w.s.Mismatch(w.Path, have, *expect)
		}
		if have == "" || noReplace { // absent (an existing content's sha256 is never "")
			return ObjectCond{IfAbsent: true}, nil, nil
		}
		prior := &Object{Key: w.key(), Version: ver, Size: size, SHA256: have}
		if ver == "" {
			return ObjectCond{}, prior, noVersion(w.Path)
		}
		return ObjectCond{IfVersion: ver}, prior, nil
	case noReplace || w.ob == nil:
		return ObjectCond{IfAbsent: true}, nil, nil
	}
	prior := &Object{Key: w.key(), Version: w.ob.ver, Size: w.ob.size, SHA256: w.ob.sum}
	if w.ob.ver == "" {
		return ObjectCond{}, prior, noVersion(w.Path)
	}
	return ObjectCond{IfVersion: w.ob.ver}, prior, nil
}

// errNoVersion: the store gives an object no version (ETag): no request
// can be conditioned on the content read.
var errNoVersion = errors.New("the store gives the object no version")

// noVersion is the refusal of a change that must be conditioned on the
// version of an object the store gives none (versitygw, for a file put
// in its directory by another program): it could lose another writer's
// update. A plain write replaces such an object (and gives it one).
func noVersion(given string) error {
	return &fserr.Error{Code: fserr.CodeUnsupported, Path: given, Err: errNoVersion,
		Msg: fmt.Sprintf("the store gives %s no version (ETag), so a change cannot be conditioned on what was read, and another writer's update could be lost: nothing was changed (a plain write replaces it and gives it a version)", given)}
}

// pinAgain is what w's key holds now (nil: nothing), for a plain write
// whose condition another writer broke.
func (o *objectRoot) pinAgain(ctx context.Context, w *WriteTarget) (ObjectCond, *Object, error) {
	ob, err := o.obj.Head(ctx, w.key())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ObjectCond{IfAbsent: true}, nil, nil
	case err != nil:
		return ObjectCond{}, nil, ioErr(w.Path, err)
	}
	return ObjectCond{IfVersion: ob.Version}, &ob, nil
}

// keep keeps the version prior of w's key in the journal (nil: nothing
// to keep) and returns the state the change records as before.
func (o *objectRoot) keep(tx *Tx, w *WriteTarget, prior *Object) (*FileState, error) {
	if prior == nil {
		return nil, nil
	}
	st, n, err := tx.s.keepVersion(o, w.key(), *prior, w.Path)
	if err != nil {
		return nil, err
	}
	tx.stored(n)
	return st, nil
}

// refused is the error of a request the store refused on its condition.
func refused(w *WriteTarget, c ObjectCond, err error, verb string) error {
	switch {
	case errors.Is(err, ErrPrecondition) && c.IfAbsent:
		return fserr.Errorf(fserr.CodeExists, w.Path, "%s exists: nothing was %s", w.Path, verb)
	case errors.Is(err, ErrPrecondition):
		return fserr.Errorf(fserr.CodeConflict, w.Path, "%s was changed by another writer during the commit: nothing was %s", w.Path, verb)
	case errors.Is(err, fs.ErrExist):
		return fserr.Errorf(fserr.CodeExists, w.Path, "%s: a file and a directory would share the name: nothing was %s", w.Path, verb)
	}
	return ioErr(w.Path, err)
}

// noModes refuses a mode on an object root.
func noModes(w *WriteTarget, o CommitOptions) error {
	if o.Mode != nil {
		return fserr.Errorf(fserr.CodeUnsupported, w.Path, "%s lies in an object root, whose objects have no modes: nothing was written", w.Path)
	}
	return nil
}

// put commits body as key's content on condition c, after keeping the
// version it replaces (prior), and notes it; a refused condition is
// ErrPrecondition, unmapped.
func (o *objectRoot) put(tx *Tx, w *WriteTarget, body []byte, c ObjectCond, prior *Object) (string, error) {
	before, err := o.keep(tx, w, prior)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(body)
	if _, err := o.obj.Put(tx.s.context(), w.key(), bytes.NewReader(body), int64(len(body)), sum, c); err != nil {
		return "", err
	}
	tx.s.trail.bytesWritten.Add(int64(len(body)))
	hexSum := hex.EncodeToString(sum[:])
	tx.note(PathChange{Path: w.Rel(), Before: before, After: &FileState{Type: "file", SHA256: hexSum, Size: int64(len(body))}})
	return hexSum, nil
}

// parentOf checks the parent of a change's target: a directory (a
// prefix), or with mkdirs missing (a prefix needs no making).
func (o *objectRoot) parentOf(ctx context.Context, s *Sandbox, t *target, parent string, mkdirs, held bool) error {
	if parent == "." {
		return nil
	}
	var pf facts
	var err error
	if held {
		ob, herr := o.obj.Head(ctx, parent)
		switch {
		case errors.Is(herr, fs.ErrNotExist):
			return nil // no file there: the prefix holding the target is the directory
		case herr != nil:
			return s.mapErr(herr, t)
		}
		pf = fileFacts(ob)
	} else {
		pf, err = o.stat(ctx, parent)
	}
	switch {
	case err == nil && !pf.Mode.IsDir() && mkdirs:
		return fserr.Errorf(fserr.CodeNotADir, t.given, "%s: a parent exists and is not a directory", t.given)
	case err == nil && !pf.Mode.IsDir():
		return fserr.Errorf(fserr.CodeNotFound, t.given, "%s does not exist (a parent is not a directory)", t.given)
	case err != nil && (!errors.Is(err, fs.ErrNotExist) || !mkdirs):
		return s.mapErr(err, t)
	case err != nil:
		// Missing, and made by the change: what lies above must not be
		// a file either (a key under a file is not_a_dir), up to the
		// first directory there is.
		return o.parentOf(ctx, s, t, path.Dir(parent), mkdirs, false)
	}
	return nil
}

func (o *objectRoot) commit(w *WriteTarget, r io.Reader, max int64, co CommitOptions) (ReplaceResult, error) {
	if err := noModes(w, co); err != nil {
		return ReplaceResult{}, err
	}
	body, err := io.ReadAll(io.LimitReader(r, satAdd(max, 1)))
	if err != nil {
		return ReplaceResult{}, ioErr(w.Path, err)
	}
	if int64(len(body)) > max {
		return ReplaceResult{}, &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Path: w.Path,
			Msg: fmt.Sprintf("the content is over max_write_bytes = %d: nothing was written", max)}
	}
	var sum string
	plain := co.Expect == nil && !co.Unchanged && !co.NoReplace
	id, err := w.s.change([]*WriteTarget{w}, func(tx *Tx) error {
		tx.at("replace.checked")
		ctx := tx.s.context()
		c, prior, err := o.condition(ctx, w, co.Expect, co.NoReplace)
		if plain && errors.Is(err, errNoVersion) {
			err = nil // a plain write replaces whatever is there
		}
		if err != nil {
			return err
		}
		tx.at("replace.locked")
		for try := 1; ; try++ {
			sum, err = o.put(tx, w, body, c, prior)
			if !plain || !errors.Is(err, ErrPrecondition) || try == maxAppendTries {
				if err != nil && !isFsErr(err) {
					return refused(w, c, err, "written")
				}
				return err
			}
			// Another writer came first: a plain write replaces what
			// is there now, kept as it is.
			if c, prior, err = o.pinAgain(ctx, w); err != nil {
				return err
			}
		}
	})
	if err != nil {
		return ReplaceResult{}, err
	}
	return ReplaceResult{Bytes: int64(len(body)), SHA256: sum, ChangeID: id}, nil
}

// maxAppendTries bounds how often an append reads the object again after
// another writer changed it between its read and its put.
const maxAppendTries = 8

// appendTo appends by reading the object and putting it back with data
// after it, on the condition that it is still the version read: a writer
// in between makes it read again (never lost, never interleaved). With
// expect, the version read must hash to it, and another writer is a
// conflict.
func (o *objectRoot) appendTo(w *WriteTarget, data []byte, co CommitOptions) (ReplaceResult, error) {
	if err := noModes(w, co); err != nil {
		return ReplaceResult{}, err
	}
	var res ReplaceResult
	id, err := w.s.change([]*WriteTarget{w}, func(tx *Tx) error {
		tx.at("append.checked")
		for try := 1; ; try++ {
			err := o.appendOnce(tx, w, data, co.Expect, &res)
			if !errors.Is(err, ErrPrecondition) || co.Expect != nil || try == maxAppendTries {
				if errors.Is(err, ErrPrecondition) {
					return fserr.Errorf(fserr.CodeConflict, w.Path, "%s was changed by another writer during the append: nothing was written", w.Path)
				}
				return err
			}
		}
	})
	if err != nil {
		return ReplaceResult{}, err
	}
	res.ChangeID = id
	return res, nil
}

func (o *objectRoot) appendOnce(tx *Tx, w *WriteTarget, data []byte, expect *string, res *ReplaceResult) error {
	ctx := tx.s.context()
	body, ob, err := o.obj.Get(ctx, w.key(), 0, -1, "")
	var old []byte
	c := ObjectCond{IfAbsent: true}
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return ioErr(w.Path, err)
	default:
		old, err = io.ReadAll(body)
		body.Close()
		if err != nil {
			return ioErr(w.Path, err)
		}
		if ob.Version == "" {
			return noVersion(w.Path)
		}
		c = ObjectCond{IfVersion: ob.Version}
	}
	if expect != nil {
		have := ""
		if c.IfVersion != "" {
			s := sha256.Sum256(old)
			have = hex.EncodeToString(s[:])
		}
		if have != *expect {
			return w.s.Mismatch(w.Path, have, *expect)
		}
	}
	var prior *Object
	if c.IfVersion != "" {
		s := sha256.Sum256(old)
		prior = &Object{Key: w.key(), Version: ob.Version, Size: int64(len(old)), SHA256: hex.EncodeToString(s[:])}
	}
	before, err := o.keep(tx, w, prior)
	if err != nil {
		return err
	}
	whole := append(old, data...)
	sum := sha256.Sum256(whole)
	if _, err := o.obj.Put(ctx, w.key(), bytes.NewReader(whole), int64(len(whole)), sum, c); err != nil {
		if errors.Is(err, ErrPrecondition) {
			return err // read again (or, with expect, a conflict)
		}
		return refused(w, c, err, "written")
	}
	tx.s.trail.bytesWritten.Add(int64(len(data)))
	*res = ReplaceResult{Bytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	tx.note(PathChange{Path: w.Rel(), Before: before, After: &FileState{Type: "file", SHA256: res.SHA256, Size: int64(len(whole))}})
	return nil
}

// rename moves a file: a put of its content at dst (conditioned as a
// write: dst free unless force; with expect, dst's version hashed), then
// a removal of src conditioned on the version moved. Another writer at
// src in between undoes the put (conditioned on its own version) and is
// a conflict. A directory is not moved: an object store has no rename of
// prefixes, and moving every key one by one is no move.
func (o *objectRoot) rename(src, dst *WriteTarget, force bool, expect *string) error {
	s := src.s
	if err := o.probeRename(src, dst); err != nil {
		return err
	}
	if !src.Exists {
		return fserr.Errorf(fserr.CodeNotFound, src.Path, "%s does not exist", src.Path)
	}
	if !force && dst.Exists {
		return fserr.Errorf(fserr.CodeExists, dst.Path, "%s exists:", dst.Path).WithHint(HintReplace)
	}
	if force && dst.Info.Type == "dir" {
		return fserr.Errorf(fserr.CodeExists, dst.Path, "%s is a directory: a file does not replace it", dst.Path)
	}
	if src.key() == dst.key() {
		// A file moved onto itself stays as it is, as rename(2) leaves
		// it (a put and a delete of one key would remove it).
		return nil
	}
	_, err := s.change([]*WriteTarget{src, dst}, func(tx *Tx) error { return o.move(tx, src, dst, force, expect) })
	return err
}

// move is rename's commit: the put at dst, the conditional removal of
// src, the copy taken back when src changed meanwhile.
func (o *objectRoot) move(tx *Tx, src, dst *WriteTarget, force bool, expect *string) error {
	tx.at("rename.checked")
	ctx := tx.s.context()
	if src.ob.ver == "" {
		return noVersion(src.Path)
	}
	content, err := o.pinnedContent(ctx, src)
	if err != nil {
		return err
	}
	c := ObjectCond{IfAbsent: true}
	var prior *Object
	if force {
		if c, prior, err = o.condition(ctx, dst, expect, false); err != nil {
			return err
		}
	}
	tx.at("rename.locked")
	before, err := o.keep(tx, dst, prior)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(content)
	put, err := o.obj.Put(ctx, dst.key(), bytes.NewReader(content), int64(len(content)), sum, c)
	if err != nil {
		if errors.Is(err, ErrPrecondition) && c.IfAbsent {
			return fserr.Errorf(fserr.CodeExists, dst.Path, "%s exists:", dst.Path).WithHint(HintReplace)
		}
		return refused(dst, c, err, "moved")
	}
	if err := o.obj.Delete(ctx, src.key(), src.ob.ver); err != nil {
		// The source changed after it was read (or the call ended): the
		// copy goes, whatever stopped the call.
		rctx, cancel := uncapped(ctx)
		o.obj.Delete(rctx, dst.key(), put.Version)
		cancel()
		if errors.Is(err, ErrPrecondition) {
			return fserr.Errorf(fserr.CodeConflict, src.Path, "%s was changed by another writer during the call: nothing was moved", src.Path)
		}
		return ioErr(src.Path, err)
	}
	if before != nil {
		tx.note(PathChange{Path: dst.Rel(), Before: before})
	}
	tx.moved(Move{From: src.Rel(), To: dst.Rel()})
	return nil
}

// pinnedContent reads the version of w's file that w pinned (conflict
// when it is no longer there).
func (o *objectRoot) pinnedContent(ctx context.Context, w *WriteTarget) ([]byte, error) {
	body, _, err := o.obj.Get(ctx, w.key(), 0, -1, w.ob.ver)
	if err != nil {
		if errors.Is(err, ErrPrecondition) || errors.Is(err, fs.ErrNotExist) {
			return nil, fserr.Errorf(fserr.CodeConflict, w.Path, "%s was replaced during the call: nothing was moved", w.Path)
		}
		return nil, ioErr(w.Path, err)
	}
	defer body.Close()
	content, err := io.ReadAll(body)
	if err != nil {
		return nil, ioErr(w.Path, err)
	}
	return content, nil
}

// probeRename is what rename checks of the entry before it moves: a file
// (no rename of directories here), which the allow rules let be written
// at its old place and its new one.
func (o *objectRoot) probeRename(src, dst *WriteTarget) error {
	if dst.rt != src.rt {
		// Every request of the move goes to one store: the key written
		// must be the destination's, in the destination's store.
		return fserr.Errorf(fserr.CodeUnsupported, dst.Path, "%s and %s lie in different roots, and a move between roots of an object store is not supported: copy, then remove", src.Path, dst.Path)
	}
	if src.Info.Type == "dir" {
		return fserr.Errorf(fserr.CodeUnsupported, src.Path, "%s is a directory in an object root, which has no rename of directories: copy what lies below, then remove it", src.Path)
	}
	if err := src.s.allowAt(src.rt, src.rootRel(), false, src.Path); err != nil {
		return err
	}
	if err := src.s.allowAt(dst.rt, dst.rootRel(), false, dst.Path); err != nil {
		return err
	}
	return nil
}

func (o *objectRoot) remove(w *WriteTarget, recursive bool, expect *string) error {
	s := w.s
	if err := s.allowAt(w.rt, w.rootRel(), w.Info.Type == "dir", w.Path); err != nil {
		return err
	}
	if w.Info.Type == "dir" {
		return o.removeDir(w, recursive, expect)
	}
	if expect == nil && s.RequirePrecondition() {
		return PreconditionRequired(w.Path, fmt.Sprintf("the policy requires a removal to name the content it removes: %s is not removed", w.Path), HintExpectSHA256)
	}
	_, err := s.change([]*WriteTarget{w}, func(tx *Tx) error {
		tx.at("remove.checked")
		prior := &Object{Key: w.key(), Version: w.ob.ver, Size: w.ob.size, SHA256: w.ob.sum}
		if expect != nil {
			now, have, size, err := o.now(s.context(), w)
			if err != nil {
				return err
			}
			if have != *expect {
				return s.Mismatch(w.Path, have, *expect)
			}
			prior = &Object{Key: w.key(), Version: now, Size: size, SHA256: have}
		}
		if prior.Version == "" {
			return noVersion(w.Path)
		}
		before, err := o.keep(tx, w, prior)
		if err != nil {
			return err
		}
		if err := o.obj.Delete(s.context(), w.key(), prior.Version); err != nil {
			if errors.Is(err, ErrPrecondition) {
				return fserr.Errorf(fserr.CodeConflict, w.Path, "%s was replaced during the call: nothing was removed", w.Path)
			}
			return ioErr(w.Path, err)
		}
		tx.note(PathChange{Path: w.Rel(), Before: before})
		return nil
	})
	return err
}

// removeDir removes a prefix: every key below it is checked first (as
// rm -r checks every path below), then each is removed conditioned on
// the version checked; a key another writer changed stops it (conflict:
// what was removed before it stays removed, as a tree half removed by
// an error does on a file system).
func (o *objectRoot) removeDir(w *WriteTarget, recursive bool, expect *string) error {
	s := w.s
	if expect != nil {
		return fserr.Errorf(fserr.CodeNotAFile, w.Path, "%s is a directory: an expected sha256 names a file's content", w.Path)
	}
	if !recursive {
		return fserr.Errorf(fserr.CodeNotAFile, w.Path, "%s is a directory:", w.Path).WithHint(fserr.Hint{Option: "recursive", Short: true, Text: "pass %s to remove it and everything below", Else: "remove what lies below it first"})
	}
	keys, err := o.below(s.context(), w.key())
	if err != nil {
		return ioErr(w.Path, err)
	}
	check := s.removable(w)
	files := 0
	for _, k := range keys {
		sub := strings.TrimPrefix(k.Key, w.key()+"/")
		if sub == "" {
			continue // the directory's own marker
		}
		if cleanRel(strings.TrimSuffix(sub, "/")) != strings.TrimSuffix(sub, "/") || !utf8.ValidString(sub) {
			// A key no path spells ("d//x", "d/../x"): never removed
			// by a path that did not name it.
			return fserr.Errorf(fserr.CodeConflict, w.Path, "%s holds a key no path names (%q): nothing was removed", w.Path, sub)
		}
		files++
		for _, d := range parentsOf(sub) {
			if err := check(d, true); err != nil {
				return err
			}
		}
		if err := check(strings.TrimSuffix(sub, "/"), strings.HasSuffix(sub, "/")); err != nil {
			return err
		}
	}
	if files > 0 && s.RequirePrecondition() {
		return fserr.Errorf(fserr.CodePreconditionRequired, w.Path, "%s is not empty, and the policy requires every removal to name the content it removes: remove its files one at a time, by their sha256, then the empty directory", w.Path)
	}
	_, err = s.change([]*WriteTarget{w}, func(tx *Tx) error {
		tx.at("remove.checked")
		// Every file is kept first (each copy conditioned on the version
		// checked), then the keys go, deepest first, the marker last;
		// the record names each file and each marker removed, parents
		// first, so undo puts back exactly what was there.
		for _, k := range keys {
			if k.Version == "" {
				return noVersion(path.Join(w.Path, strings.TrimPrefix(k.Key, w.key()+"/")))
			}
		}
		var recs []PathChange
		for _, k := range keys {
			sub := strings.TrimPrefix(k.Key, w.key()+"/")
			if sub == "" {
				// Its own marker: the directory existed as itself (a
				// prefix alone comes back with its files).
				recs = append(recs, PathChange{Path: w.Rel(), Before: &FileState{Type: "dir"}})
				continue
			}
			rel := path.Join(w.Rel(), strings.TrimSuffix(sub, "/"))
			if strings.HasSuffix(sub, "/") {
				recs = append(recs, PathChange{Path: rel, Before: &FileState{Type: "dir"}})
				continue
			}
			before, n, err := s.keepVersion(o, k.Key, k, rel)
			if err != nil {
				return err
			}
			tx.stored(n)
			recs = append(recs, PathChange{Path: rel, Before: before})
		}
		slices.SortStableFunc(recs, func(a, b PathChange) int { return strings.Compare(a.Path, b.Path) })
		tx.note(recs...)
		for i := len(keys) - 1; i >= 0; i-- { // deepest first, the marker last
			if err := o.obj.Delete(s.context(), keys[i].Key, keys[i].Version); err != nil {
				if errors.Is(err, ErrPrecondition) {
					return fserr.Errorf(fserr.CodeConflict, w.Path, "%s changed during the call: nothing more was removed", path.Join(w.Path, strings.TrimPrefix(keys[i].Key, w.key()+"/")))
				}
				return ioErr(w.Path, err)
			}
			tx.Made()
		}
		// What another writer made below meanwhile was never checked:
		// it stays, and the caller reports it.
		if left, err := o.below(s.context(), w.key()); err == nil {
			for _, k := range left {
				w.Survived = append(w.Survived, path.Join(w.Path, strings.TrimSuffix(strings.TrimPrefix(k.Key, w.key()+"/"), "/")))
			}
		}
		return nil
	})
	return err
}

// below lists every key at or below the prefix key/, in key order.
func (o *objectRoot) below(ctx context.Context, key string) ([]Object, error) {
	return listAll(ctx, o.obj, key+"/")
}

// parentsOf lists the directories sub lies in, outermost first.
func parentsOf(sub string) []string {
	var out []string
	for i := strings.IndexByte(sub, '/'); i >= 0 && i < len(sub)-1; {
		out = append(out, sub[:i])
		j := strings.IndexByte(sub[i+1:], '/')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return out
}

// mkdir makes the directory p: its marker, put on condition that the
// name is free (a prefix needs no parents made).
func (o *objectRoot) mkdir(s *Sandbox, p string) (string, bool, error) {
	w, err := s.pinTarget(p, s.mkdirAll, false, false)
	if err != nil {
		return "", false, err
	}
	defer w.Close()
	if w.Exists {
		return madeExists(w, p)
	}
	created := false
	_, err = s.change([]*WriteTarget{w}, func(tx *Tx) error {
		created, err = o.marker(tx, w, p)
		return err
	})
	if err != nil {
		return "", false, err
	}
	return w.Path, created, nil
}

// marker makes the directory w: its marker, put on condition that the
// name is free (made meanwhile: not made by this call), noted.
func (o *objectRoot) marker(tx *Tx, w *WriteTarget, p string) (bool, error) {
	_, err := o.obj.Put(tx.s.context(), w.key()+"/", bytes.NewReader(nil), 0, sha256.Sum256(nil), ObjectCond{IfAbsent: true})
	switch {
	case errors.Is(err, ErrPrecondition):
		return false, nil
	case errors.Is(err, fs.ErrExist):
		return false, fserr.Errorf(fserr.CodeExists, p, "%s exists and is not a directory", p)
	case err != nil:
		return false, ioErr(p, err)
	}
	tx.note(PathChange{Path: w.Rel(), After: &FileState{Type: "dir"}})
	return true, nil
}

// rmdirAt removes the empty directory w: its marker, while no key lies
// below it (one that does is a conflict, and stays).
func (o *objectRoot) rmdirAt(w *WriteTarget) error {
	if !w.Exists || w.Info.Type != "dir" {
		return fserr.Errorf(fserr.CodeConflict, w.Path, "%s is not a directory (or gone): it stays", w.Path)
	}
	ctx := w.s.context()
	obs, _, err := o.obj.List(ctx, w.key()+"/", "", "", 2)
	if err != nil {
		return ioErr(w.Path, err)
	}
	// Every key is looked at before the marker goes: anything below
	// keeps the directory (and its marker) as it is.
	for _, ob := range obs {
		if ob.Key != w.key()+"/" {
			return fserr.Errorf(fserr.CodeConflict, w.Path, "%s is not empty (or gone): it stays", w.Path)
		}
	}
	for _, ob := range obs {
		if err := o.obj.Delete(ctx, ob.Key, ob.Version); err != nil {
			return fserr.Errorf(fserr.CodeConflict, w.Path, "%s changed during the call: it stays", w.Path)
		}
	}
	return nil
}

// symlink is refused: an object root has no links.
func (o *objectRoot) symlink(s *Sandbox, p, target string) (bool, error) {
	w, err := s.openMade(p)
	if err != nil {
		return false, err
	}
	defer w.Close()
	return false, fserr.Errorf(fserr.CodeUsage, p, "%s lies in an object root, which has no symlinks", p)
}

// prefixChecked is mkdirAllLocked on an object root: a prefix needs no
// making, and with no links the path checked is the key; the rules a
// directory made there would meet are checked.
func (s *Sandbox) prefixChecked(rt *root, rel, given string) (string, error) {
	if err := s.checkPatterns(rt, rel, true, AccessWrite, given); err != nil {
		return "", err
	}
	if err := s.checkWrite(rt, rel, given); err != nil {
		return "", err
	}
	return rel, nil
}

// isFsErr: err is already one of fsbox's errors (a refusal of the door
// or the journal), not a store's answer to map.
func isFsErr(err error) bool {
	var fe *fserr.Error
	return errors.As(err, &fe)
}
