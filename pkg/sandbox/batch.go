package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// Batch is a set of changes to files in the workdir made as one: all of
// them or none (a patch over several files). Each change is staged first
// — Put writes the new content to a synced temporary file beside its
// target, Delete only notes the target — and Commit then, under the
// workdir's write lock:
//
//  1. re-checks every target: its pinned parent still lies where it was
//     checked, and, where asked, the file is still the one read
//     (Unchanged) or hashes as expected (Expect); any miss is conflict and
//     nothing has changed;
//  2. swaps each staged file in: a file that exists is exchanged with its
//     temporary file in one step (renameat2 RENAME_EXCHANGE), so the old
//     file waits at the temporary name; a new file takes its name only if
//     the name is still free (RENAME_NOREPLACE); a deleted file is renamed
//     to a temporary name. If a swap fails, those done are swapped back in
//     reverse order and the error returned: the tree is as it was;
//  3. unlinks the old files and syncs every directory touched.
//
// Readers see each file old or new, never half-written; between the first
// swap and the last, a reader may see some files new and others still
// old. Across a crash in step 2 the tree may hold such a mix until the
// journal's recovery runs (see the README).
type Batch struct {
	s     *Sandbox
	items []*batchItem
	done  bool
	// Staged files are synced in the background, a few at once, so the
	// filesystem can fold the syncs of a many-file batch together;
	// Commit and Abort wait for them.
	syncs sync.WaitGroup
	slots chan struct{}
	// ChangeID is the journal record's id once committed.
	ChangeID string
}

// batchSyncs is how many staged files sync at once.
const batchSyncs = 8

type batchItem struct {
	w       *WriteTarget
	tmp     string // the staged content (put), or the old file's new name (delete)
	del     bool
	o       CommitOptions
	res     ReplaceResult
	syncErr error      // the background sync's failure
	mode    string     // the staged file's permission bits (octal), for the journal
	before  *FileState // what the name held, as the journal kept it
	swapped bool
	exchang bool     // swapped by exchange: the old file is at tmp
	ob      *objItem // an object target's (batch_object.go); nil on a posix root
}

// NewBatch starts an empty batch.
func (s *Sandbox) NewBatch() *Batch { return &Batch{s: s, slots: make(chan struct{}, batchSyncs)} }

// Put stages content for w (a target from OpenWriteTarget; the batch does
// not close it): at most max bytes, with o's mode and checks. It is
// written and synced now; nothing is visible until Commit.
func (b *Batch) Put(w *WriteTarget, content []byte, max int64, o CommitOptions) error {
	if int64(len(content)) > max {
		if err := b.add(w); err != nil {
			return err
		}
		return overWriteCap(w.Path, max)
	}
	return b.PutFrom(w, bytes.NewReader(content), max, o)
}

func overWriteCap(given string, max int64) error {
	return &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Path: given,
		Msg: fmt.Sprintf("the new content of %s is over max_write_bytes = %d: nothing was written", given, max)}
}

// PutFrom is Put of what r yields (at most max bytes: more is too_large
// and the batch should be aborted), streamed to the staged file.
func (b *Batch) PutFrom(w *WriteTarget, r io.Reader, max int64, o CommitOptions) error {
	if err := b.add(w); err != nil {
		return err
	}
	if w.rt.st.kind() == kindObject {
		return b.putObjectItem(w, r, max, o)
	}
	tmp, f, err := w.createTemp()
	if err != nil {
		return err
	}
	it := &batchItem{w: w, tmp: tmp, o: o}
	b.items = append(b.items, it)
	h := sha256.New()
	var n int64
	n, err = io.CopyBuffer(io.MultiWriter(f, h), io.LimitReader(r, satAdd(max, 1)), make([]byte, 128<<10))
	if err == nil && n > max {
		f.Close()
		return overWriteCap(w.Path, max)
	}
	if err == nil {
		switch {
		case o.Mode != nil:
			err = f.Chmod(*o.Mode & fs.ModePerm)
		case w.Exists:
			err = f.Chmod(w.Info.Mode.Perm())
		}
	}
	if err != nil {
		f.Close()
		return ioErr(w.Path, err)
	}
	it.res = ReplaceResult{Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}
	if fi, err := f.Stat(); err == nil {
		it.mode = fmt.Sprintf("%04o", fi.Mode().Perm())
	}
	b.syncs.Add(1)
	b.slots <- struct{}{}
	go func() {
		defer b.syncs.Done()
		defer func() { <-b.slots }()
		err := f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			it.syncErr = ioErr(w.Path, err)
		}
	}()
	return nil
}

// Delete stages the removal of w's file (a regular file or a symlink,
// taken as itself), with o's checks (Unchanged, Expect).
func (b *Batch) Delete(w *WriteTarget, o CommitOptions) error {
	if err := b.add(w); err != nil {
		return err
	}
	if !w.Exists {
		return fserr.Errorf(fserr.CodeNotFound, w.Path, "%s does not exist", w.Path)
	}
	if w.Info.Type == "dir" {
		return fserr.Errorf(fserr.CodeNotAFile, w.Path, "%s is a directory: a batch deletes files only", w.Path)
	}
	it := &batchItem{w: w, tmp: tempName(), del: true, o: o}
	if w.rt.st.kind() == kindObject {
		it.tmp, it.ob = "", &objItem{}
	}
	b.items = append(b.items, it)
	return nil
}

// add refuses a second change to one name, and a finished batch.
func (b *Batch) add(w *WriteTarget) error {
	if len(b.items) > 0 && b.items[0].w.rt.st.kind() != w.rt.st.kind() {
		return fserr.Errorf(fserr.CodeUnsupported, w.Path, "%s and %s lie in roots of two kinds (%s, %s), and one change of several files is made in roots of one kind: nothing was changed", b.items[0].w.Path, w.Path, b.items[0].w.rt.st.kind(), w.rt.st.kind())
	}
	if b.done {
		return fserr.Errorf(fserr.CodeIO, w.Path, "the batch was already committed or aborted")
	}
	for _, it := range b.items {
		if it.w.rt == w.rt && it.w.dirRel == w.dirRel && it.w.Name == w.Name {
			return fserr.Errorf(fserr.CodeUsage, w.Path, "%s is changed twice in one batch", w.Path)
		}
	}
	return nil
}

// Abort drops what was staged; nothing in the tree changes.
func (b *Batch) Abort() {
	if b.done {
		return
	}
	b.done = true
	b.syncs.Wait()
	for _, it := range b.items {
		if !it.del && it.ob == nil {
			it.w.dir.Remove(it.tmp)
		}
	}
}

// Commit makes every staged change, or none (see Batch). It returns each
// change's result in staging order (a deletion's is zero).
func (b *Batch) Commit() ([]ReplaceResult, error) {
	if b.done {
		return nil, fserr.Errorf(fserr.CodeIO, "", "the batch was already committed or aborted")
	}
	defer b.Abort()
	ws, err := b.staged()
	if err != nil {
		return nil, err
	}
	var out []ReplaceResult
	id, err := b.s.change(ws, func(tx *Tx) error {
		var err error
		out, err = b.commitIn(tx)
		return err
	})
	b.ChangeID = id
	for i := range out {
		out[i].ChangeID = id
	}
	return out, err
}

// staged waits for the staged files' syncs and returns the targets.
func (b *Batch) staged() ([]*WriteTarget, error) {
	b.syncs.Wait()
	ws := make([]*WriteTarget, len(b.items))
	for i, it := range b.items {
		if it.syncErr != nil {
			return nil, it.syncErr
		}
		ws[i] = it.w
	}
	return ws, nil
}

// commitIn makes every staged change inside a change: the targets
// checked again (as their options ask), what each name holds kept in the
// journal, the plan written (a crash between two swaps is carried
// forward), every file swapped in (or, when one fails, every one done
// swapped back), then the old files dropped and the directories synced.
func (b *Batch) commitIn(tx *Tx) ([]ReplaceResult, error) {
	if len(b.items) > 0 && b.items[0].ob != nil {
		return b.commitObjects(tx)
	}
	ws := make([]*WriteTarget, len(b.items))
	for i, it := range b.items {
		ws[i] = it.w
		tx.require(it.w, cond{expect: it.o.Expect, unchanged: it.o.Unchanged})
	}
	if err := tx.recheck("batch.checked", ws...); err != nil { // a test's seam may move a parent here
		return nil, err
	}
	// The journal keeps what each name holds before any of them changes.
	var stored int64
	for _, it := range b.items {
		before, n, err := b.s.keepBefore(it.w)
		if err != nil {
			return nil, err
		}
		it.before, stored = before, stored+n
	}
	// The plan goes to the journal before the first swap: a crash between
	// two swaps leaves a mix that the next call carries forward.
	if tx.journal() != nil && len(b.items) > 1 {
		name, js, err := b.s.writePlan(b.items)
		if err != nil {
			return nil, err
		}
		defer func() {
			for _, j := range js {
				j.donePlan(name)
			}
		}()
	}
	tx.at("batch.planned")
	if err := b.swapAll(tx); err != nil {
		return nil, err
	}
	b.done = true
	// Swapped in: recorded, whatever the syncs that follow say.
	for _, it := range b.items {
		pc := PathChange{Path: it.w.Rel(), Before: it.before}
		if !it.del {
			pc.After = &FileState{Type: "file", SHA256: it.res.SHA256, Size: it.res.Bytes, Mode: it.mode}
		}
		tx.note(pc)
	}
	tx.stored(stored)
	tx.Made()
	return b.settle()
}

// swapAll swaps every staged change in, in order; when one fails, those
// done are swapped back in reverse order.
func (b *Batch) swapAll(tx *Tx) error {
	for i, it := range b.items {
		if err := it.swap(); err != nil {
			for j := i - 1; j >= 0; j-- {
				b.items[j].unswap()
			}
			return err
		}
		tx.at("batch.swapped")
	}
	return nil
}

// settle drops the old files the swaps left at temporary names and syncs
// each directory touched once; it returns each change's result.
func (b *Batch) settle() ([]ReplaceResult, error) {
	synced := map[string]bool{} // directories synced, by root and real path: targets pin one each
	var firstErr error
	out := make([]ReplaceResult, len(b.items))
	for i, it := range b.items {
		out[i] = it.res
		if it.del || it.exchang {
			if err := it.w.dir.Remove(it.tmp); err != nil && firstErr == nil && !errors.Is(err, fs.ErrNotExist) {
				firstErr = ioErr(it.w.Path, err)
			}
		}
		b.s.trail.bytesWritten.Add(it.res.Bytes)
		if key := it.w.rt.dir + "\x00" + it.w.dirRel; !synced[key] {
			synced[key] = true
			if err := it.w.dirF.Sync(); err != nil && firstErr == nil {
				firstErr = ioErr(it.w.Path, err)
			}
		}
	}
	return out, firstErr
}

// swap makes one staged change (under the write lock).
func (it *batchItem) swap() error {
	w := it.w
	var err error
	switch {
	case it.del:
		if err = renameNoReplaceFrom(w, w.Name, it.tmp); err == nil {
			if cerr := w.swappedOut(it.tmp, it.o); cerr != nil {
				it.swapped = true
				it.unswap() // a stranger renamed in: it goes back
				return cerr
			}
		}
	case w.Exists:
		if err = exchangeAt(w, it.tmp); err == nil {
			it.exchang = true
			if cerr := w.swappedOut(it.tmp, it.o); cerr != nil {
				it.swapped = true
				it.unswap()
				return cerr
			}
		}
	default:
		err = renameNoReplace(w, it.tmp)
		if errors.Is(err, fs.ErrExist) {
			return fserr.Errorf(fserr.CodeExists, w.Path, "%s appeared during the call: nothing was changed", w.Path)
		}
	}
	if err != nil {
		return ioErr(w.Path, err)
	}
	it.swapped = true
	return nil
}

// unswap undoes a swap (rollback after a later one failed).
func (it *batchItem) unswap() {
	if !it.swapped {
		return
	}
	w := it.w
	switch {
	case it.del:
		renameNoReplaceFrom(w, it.tmp, w.Name)
	case it.exchang:
		exchangeAt(w, it.tmp)
		it.exchang = false
	default:
		renameNoReplaceFrom(w, w.Name, it.tmp) // the new file back to its temporary name, removed by Abort
	}
	it.swapped = false
}

// createTemp creates a new temporary file beside the target.
func (w *WriteTarget) createTemp() (string, *os.File, error) {
	tmp := tempName()
	f, err := w.dir.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return "", nil, mapOpenErr(err, w.Path)
	}
	return tmp, f, nil
}

// exchangeByRenames swaps the target's name and tmp in three renames,
// through a third temporary name, where no one-step exchange exists.
func exchangeByRenames(w *WriteTarget, tmp string) error {
	aside := tempName()
	if err := w.dir.Rename(w.Name, aside); err != nil {
		return err
	}
	if err := w.dir.Rename(tmp, w.Name); err != nil {
		w.dir.Rename(aside, w.Name)
		return err
	}
	return w.dir.Rename(aside, tmp)
}
