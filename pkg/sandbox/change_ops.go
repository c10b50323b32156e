package sandbox

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"strings"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// The acts of stage 6: each runs inside change (change.go).

const tempPrefix = ".fsbox-tmp-"

// tempName is a fresh temporary name (a random suffix: created with
// O_EXCL or renamed to without replacing, never guessed into use).
func tempName() string {
	var rnd [8]byte
	rand.Read(rnd[:])
	return tempPrefix + hex.EncodeToString(rnd[:])
}

// CommitOptions say how Commit and Append may change the target.
type CommitOptions struct {
	// Mode sets the permission bits (only 0777 count: setuid, setgid and
	// sticky bits are never set). Default: an existing file's permission
	// bits, or 0666 less the umask for a new one.
	Mode *fs.FileMode
	// NoReplace: the name must be free when the new file takes it, or the
	// call fails with exists and changes nothing (an exclusive commit:
	// of several concurrent creators exactly one wins).
	NoReplace bool
	// Expect, when set, is the sha256 (lower-case hex) the file at the
	// name must have at the moment of the change ("" = it must be
	// absent); checked under the write lock, so check and change are one
	// step for every fsbox process.
	Expect *string
	// Unchanged: the file at the name must still be the very file the
	// target opened, with the size, modification and change times it had
	// then (what edit read is what it replaces). Checked under the write
	// lock; cheaper than Expect, which hashes the file again.
	Unchanged bool
}

// ReplaceResult is what Replace wrote.
type ReplaceResult struct {
	Bytes  int64
	SHA256 string
	// ChangeID is the journal's id of the change ("" without a journal).
	ChangeID string
}

// Replace is Commit with only a mode.
func (w *WriteTarget) Replace(r io.Reader, max int64, mode *fs.FileMode) (ReplaceResult, error) {
	return w.Commit(r, max, CommitOptions{Mode: mode})
}

// commitPosix is Commit on a posix root: r goes to a new temporary file
// beside the target, synced, with its mode, and then, under the locks
// and after re-checking the target, it is renamed over the name and the
// directory synced.
func (w *WriteTarget) commitPosix(r io.Reader, max int64, o CommitOptions) (ReplaceResult, error) {
	rp := &replacement{w: w, o: o, ahead: w.hashAhead()} // the old file's hash, for the journal, while the new one is written
	defer rp.close()
	if err := rp.stage(r, max); err != nil {
		return ReplaceResult{}, err
	}
	id, err := w.s.change([]*WriteTarget{w}, func(tx *Tx) error {
		tx.require(w, cond{expect: o.Expect, unchanged: o.Unchanged})
		if err := tx.recheck("replace.checked", w); err != nil {
			return err
		}
		return rp.commit(tx)
	})
	if err != nil && id == "" && !rp.placed {
		return ReplaceResult{}, err
	}
	return ReplaceResult{Bytes: rp.n, SHA256: rp.sum, ChangeID: id}, err
}

// replacement is a Commit under way: its new content staged in a
// temporary file beside the target, then swapped in.
type replacement struct {
	w     *WriteTarget
	o     CommitOptions
	ahead chan hashed // the old file's hash, taken while the new one is written (nil: none)
	tmp   string      // the staged file's name ("": none yet)
	n     int64
	sum   string
	// placed: the staged file took the name (or is gone): nothing to
	// remove at the end.
	placed bool
	// before is what the name held, as the journal keeps it, and stored
	// the bytes that newly cost the journal.
	before *FileState
	stored int64
}

// stage writes r (at most max bytes) to a new temporary file beside the
// target with the mode the commit gives it, synced and hashed.
func (rp *replacement) stage(r io.Reader, max int64) error {
	w, o := rp.w, rp.o
	tmp, f, err := w.createTemp()
	if err != nil {
		return err
	}
	rp.tmp = tmp
	defer f.Close()
	// io.Copy into an *os.File lets the kernel move the bytes
	// (copy_file_range from a file, splice from a pipe) when it can.
	n, err := io.Copy(f, io.LimitReader(r, satAdd(max, 1)))
	if err != nil {
		return ioErr(w.Path, err)
	}
	if n > max {
		return &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Path: w.Path,
			Msg: fmt.Sprintf("the content is over max_write_bytes = %d: nothing was written", max)}
	}
	switch {
	case o.Mode != nil:
		err = f.Chmod(*o.Mode & fs.ModePerm)
	case w.Exists:
		err = f.Chmod(w.Info.Mode.Perm())
	}
	if err != nil {
		return ioErr(w.Path, err)
	}
	if rp.sum, err = syncHashing(f, n); err != nil {
		return ioErr(w.Path, err)
	}
	rp.n = n
	return ioErr(w.Path, f.Close())
}

// close drops what the replacement leaves: the staged file unless it
// took the name, and the hash ahead (it reads the target's file: done
// before the caller closes it).
func (rp *replacement) close() {
	if rp.ahead != nil {
		<-rp.ahead
	}
	if !rp.placed && rp.tmp != "" {
		rp.w.dir.Remove(rp.tmp)
	}
}

// commit swaps the staged file in (inside a change, its target checked).
// The journal keeps what the name holds now. When the name still holds
// the very file hashed ahead (one link, unchanged), the commit swaps the
// new file in with RENAME_EXCHANGE and moves the old one, now at the
// temporary name, into the journal: nothing is copied. Otherwise the old
// file is copied into the journal before a plain rename.
func (rp *replacement) commit(tx *Tx) error {
	w := rp.w
	tx.at("replace.locked")
	adopt, err := rp.keepBefore(tx)
	if err != nil {
		return err
	}
	tfi, err := w.dir.Lstat(rp.tmp)
	if errors.Is(err, fs.ErrNotExist) {
		return rp.dirGone()
	}
	if err != nil {
		return ioErr(w.Path, err)
	}
	if adopt, err = rp.swapIn(adopt); err != nil {
		return err
	}
	kept := func() error { return nil }
	if adopt {
		// The new file has the name; the old one waits at tmp.
		j := tx.journal()
		n, objsSynced, aerr := j.adopt(w, rp.tmp, rp.before.SHA256, rp.before.Size)
		if aerr != nil {
			w.dir.Remove(rp.tmp)
			rp.placed = true
			return fserr.Errorf(fserr.CodeIO, j.dir, "the change was made, but the journal %s cannot keep the prior content: %v", j.dir, aerr)
		}
		rp.stored, kept = n, func() error {
			if err := objsSynced(); err != nil {
				return fserr.Errorf(fserr.CodeIO, j.dir, "the change was made, but the journal %s cannot keep the prior content: %v", j.dir, err)
			}
			return nil
		}
	}
	rp.placed = true
	w.s.trail.bytesWritten.Add(rp.n)
	// The directory's sync, the journal's objects directory's sync and
	// the journal's record (its own sync) run side by side; the call
	// returns when all are done.
	synced := make(chan error, 1)
	go func() { synced <- w.dirF.Sync() }()
	tx.note(PathChange{Path: w.Rel(), Before: rp.before, After: stateOf(tfi, rp.sum)})
	tx.stored(rp.stored)
	tx.beside(kept)
	tx.beside(func() error {
		if err := <-synced; err != nil {
			return ioErr(w.Path, err)
		}
		sweepTemps(w)
		return nil
	})
	return nil
}

// keepBefore takes what the name holds into the journal's view: the hash
// taken ahead when the name still holds that file (adopt: its inode goes
// into the journal at the swap), else a copy kept now.
func (rp *replacement) keepBefore(tx *Tx) (adopt bool, err error) {
	w := rp.w
	if rp.ahead != nil {
		h := <-rp.ahead
		rp.ahead = nil
		if h.err == nil && tx.journal() != nil && w.unchanged() == nil {
			rp.before = &FileState{Type: "file", SHA256: h.sum, Size: w.curStat.Size(), Mode: fmt.Sprintf("%04o", w.curStat.Mode().Perm())}
			return !rp.o.NoReplace, nil
		}
	}
	rp.before, rp.stored, err = w.s.keepBefore(w)
	return false, err
}

// dirGone is the conflict of a staged file gone from the pinned
// directory: the directory was removed or moved meanwhile.
func (rp *replacement) dirGone() error {
	return fserr.Errorf(fserr.CodeConflict, rp.w.Path, "the directory of %s was removed or moved during the call: nothing was written", rp.w.Path)
}

// swapIn gives the staged file the name. With adopt the old file is
// exchanged out to the temporary name, for the journal to take in; it
// returns whether that happened. A precondition that checked a file
// exchanges too, so the file swapped out can be seen to be that very
// file (a stranger renamed over the name in between goes back:
// conflict), then drops it (the journal already holds its content).
func (rp *replacement) swapIn(adopt bool) (bool, error) {
	w, o, tmp := rp.w, rp.o, rp.tmp
	_, checked := w.checkedKey(o)
	var err error
	switch {
	case adopt:
		return rp.swapAdopting()
	case checked && !o.NoReplace:
		err = exchangeOnly(w, tmp)
		switch {
		case errors.Is(err, errNoExchange):
			err = w.dir.Rename(tmp, w.Name)
		case errors.Is(err, fs.ErrNotExist):
			return false, fserr.Errorf(fserr.CodeConflict, w.Path, "%s was removed by another process during the commit: nothing was written", w.Path)
		case err == nil:
			if cerr := w.swappedOut(tmp, o); cerr != nil {
				exchangeOnly(w, tmp)
				return false, cerr
			}
			w.dir.Remove(tmp)
		}
	case o.NoReplace:
		err = renameNoReplace(w, tmp)
		if errors.Is(err, fs.ErrExist) {
			return false, fserr.Errorf(fserr.CodeExists, w.Path, "%s exists: nothing was written", w.Path)
		}
	default:
		err = w.dir.Rename(tmp, w.Name)
	}
	return false, rp.swapErr(err)
}

// swapAdopting exchanges the staged file with the old one, which stays
// at the temporary name for the journal; without a one-step exchange it
// copies the old file into the journal, then renames.
func (rp *replacement) swapAdopting() (bool, error) {
	w, tmp := rp.w, rp.tmp
	err := exchangeOnly(w, tmp)
	switch {
	case errors.Is(err, errNoExchange):
		if rp.before, rp.stored, err = w.s.keepBefore(w); err != nil {
			return false, err
		}
		return false, rp.swapErr(w.dir.Rename(tmp, w.Name))
	case err == nil:
		if cerr := w.swappedOut(tmp, rp.o); cerr != nil {
			exchangeOnly(w, tmp) // the stranger goes back; the new file, at tmp, is removed
			return false, cerr
		}
		return true, nil
	}
	return false, rp.swapErr(err)
}

// swapErr maps the failure of the swap.
func (rp *replacement) swapErr(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		// The temporary file was made in the pinned directory a moment
		// ago: gone now, the directory was removed or moved meanwhile.
		return rp.dirGone()
	}
	return ioErr(rp.w.Path, err)
}

// appendPosix is Append on a posix root: a single write(2) on an
// O_APPEND descriptor, so parallel appenders never interleave within one
// call's data. The name is opened without following a symlink, and the
// descriptor gets every check a read gets. If the write fails (a full
// disk), the file is cut back to its old length.
func (w *WriteTarget) appendPosix(data []byte, o CommitOptions) (ReplaceResult, error) {
	var res ReplaceResult
	id, err := w.s.change([]*WriteTarget{w}, func(tx *Tx) error {
		tx.require(w, cond{expect: o.Expect})
		if err := tx.recheck("append.checked", w); err != nil {
			return err
		}
		var err error
		res, err = appendAt(tx, w, data, o)
		return err
	})
	if err != nil && id == "" {
		return ReplaceResult{}, err
	}
	res.ChangeID = id
	return res, err
}

// appendAt appends data to w's file (inside a change, its target checked).
func appendAt(tx *Tx, w *WriteTarget, data []byte, o CommitOptions) (ReplaceResult, error) {
	if err := w.sharedInode(); err != nil {
		return ReplaceResult{}, err // before the journal keeps anything of it
	}
	before, stored, err := w.s.keepBefore(w)
	if err != nil {
		return ReplaceResult{}, err
	}
	f, fi, err := openAppend(w, o)
	if err != nil {
		return ReplaceResult{}, err
	}
	defer f.Close()
	old := fi.Size()
	n, err := f.Write(data)
	if err == nil && n != len(data) {
		err = io.ErrShortWrite
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		// Nothing half-written stays behind: back to the old length.
		f.Truncate(old)
		f.Sync()
		return ReplaceResult{}, ioErr(w.Path, err)
	}
	w.s.trail.bytesWritten.Add(int64(n))
	sum, err := hashReader(io.NewSectionReader(f, 0, old+int64(n)), w.Path)
	if err != nil {
		return ReplaceResult{}, err
	}
	after, err := f.Stat()
	if err != nil {
		return ReplaceResult{}, ioErr(w.Path, err)
	}
	tx.note(PathChange{Path: w.Rel(), Before: before, After: stateOf(after, sum)})
	tx.stored(stored)
	return ReplaceResult{Bytes: int64(n), SHA256: sum}, nil
}

// openAppend opens w's name for appending (creating it) without
// following a symlink, and checks the descriptor as a read's: a regular
// file, one link, the file the precondition hashed; with a mode, the
// file gets exactly those bits (no umask), as Commit gives them.
func openAppend(w *WriteTarget, o CommitOptions) (*os.File, fs.FileInfo, error) {
	perm := fs.FileMode(0o666)
	if o.Mode != nil {
		perm = *o.Mode & fs.ModePerm
	}
	f, err := openNoFollow(w, w.Name, os.O_RDWR|os.O_APPEND|os.O_CREATE|syscallNonblock, uint32(perm))
	if err != nil {
		return nil, nil, noFollowErr(err, w.Path)
	}
	fail := func(err error) (*os.File, fs.FileInfo, error) { f.Close(); return nil, nil, err }
	fi, err := f.Stat()
	if err != nil {
		return fail(ioErr(w.Path, err))
	}
	if err := w.s.checkFileDesc(fi, w.Path); err != nil {
		return fail(err)
	}
	if err := sharedInode(fi, w.Path); err != nil {
		return fail(err) // the file opened, which may have gained a link since
	}
	if key, ok := w.checkedKey(o); ok && devIno(fi) != key {
		// Not the file the precondition hashed: renamed over the name
		// since. Nothing was appended to it.
		return fail(fserr.Errorf(fserr.CodeConflict, w.Path, "%s was replaced by another process during the commit: nothing was written", w.Path))
	}
	if o.Mode != nil && fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != perm {
		if err := f.Chmod(perm); err != nil {
			return fail(ioErr(w.Path, err))
		}
	}
	return f, fi, nil
}

// errLongPath is a tree scan meeting a path below its top longer than
// maxPathLen: such a path cannot be named to fsbox, and a walk does not
// enter it (skipped.long_paths); checking every path below it whole would
// cost the square of a chain's depth.
var errLongPath = errors.New("a path in the tree is too long")

// longPathErr turns errLongPath into too_large for the tree at given.
func longPathErr(err error, given string) error {
	if errors.Is(err, errLongPath) {
		return &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Path: given,
			Msg: fmt.Sprintf("%s holds a path longer than %d bytes: nothing was changed", given, maxPathLen)}
	}
	return err
}

// satAdd is a+b for non-negative values, saturating at the largest int64:
// a limit of 2^63-1 plus one must not wrap to a negative one.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// HintExpectSHA256 names the option that gives a change its precondition:
// the sha256 of the file it replaces or removes.
var HintExpectSHA256 = fserr.Hint{Option: "expect-sha256", Text: "pass %s with the file's current sha256 (read or stat --sha256 gives it)", Else: "read the file first"}

// HintExpectAbsent names the option that gives a new file its
// precondition: that the name is free.
var HintExpectAbsent = fserr.Hint{Option: "expect-absent", Text: "pass %s to create it (nothing is replaced)"}

// precondition refuses, under [write] require_precondition, a commit that
// names nothing it replaces: no expected sha256, no free name, no check
// that the file is the one read (whose caller checked its sha256). The
// operations refuse it earlier, with the option to pass; this is the
// floor beneath them.
func (w *WriteTarget) precondition(o CommitOptions) error {
	if o.Expect != nil || o.NoReplace || o.Unchanged || !w.s.RequirePrecondition() {
		return nil
	}
	return PreconditionRequired(w.Path, fmt.Sprintf("the policy requires every change to name what it replaces: %s was not written", w.Path), HintExpectSHA256)
}

// HintReplace: an existing name is replaced only with force.
var HintReplace = fserr.Hint{Option: "force", Text: "pass %s to replace it", Else: "move or remove it first"}

// moveRules checks that src's entry (fi) and, for a directory, every path
// below it may be written at its old place and at its new one, dst.
func (s *Sandbox) moveRules(src, dst *WriteTarget, fi fs.FileInfo) error {
	srcRel, dstRel := src.rootRel(), dst.rootRel()
	if err := s.allowAt(src.rt, srcRel, fi.IsDir(), src.Path); err != nil {
		return err
	}
	if err := s.allowAt(dst.rt, dstRel, fi.IsDir(), dst.Path); err != nil {
		return err
	}
	if !fi.IsDir() || !s.hasPatterns && len(s.writeDeny) == 0 {
		return nil
	}
	_, err := scanTree(src, devIno(fi), func(sub string, isDir bool) error {
		if e := s.admitChild(src.rt, srcRel+"/"+sub, isDir, AccessWrite, path.Join(src.Path, sub)); e != nil {
			return inSet(e, fserr.Deny(e.Rule, e.Path, "%s; nothing was moved", e.Msg))
		}
		if e := s.admitChild(dst.rt, dstRel+"/"+sub, isDir, AccessWrite, path.Join(dst.Path, sub)); e != nil {
			return inSet(e, fserr.Deny(e.Rule, e.Path, "%s (the new place of %s); nothing was moved", e.Msg, path.Join(src.Path, sub)))
		}
		if e := s.checkWrite(dst.rt, dstRel+"/"+sub, path.Join(dst.Path, sub)); e != nil {
			return e // (a typed nil would not be nil here)
		}
		return nil
	})
	return err
}

// probeRenamePosix is ProbeRename's check of src's entry on a posix root.
func (s *Sandbox) probeRenamePosix(src, dst *WriteTarget) error {
	fi, err := src.entryNow()
	if err != nil {
		return err
	}
	return s.moveRules(src, dst, fi)
}

// renamePosix is RenameExpect on a posix root.
func (s *Sandbox) renamePosix(src, dst *WriteTarget, force bool, expect *string) error {
	_, err := s.change([]*WriteTarget{src, dst}, func(tx *Tx) error {
		return renameIn(tx, src, dst, force, expect)
	})
	return err
}

// renameIn moves src's entry to dst's name inside a change: the rules on
// what moves are checked under the locks, then the targets again (the
// entry still the object checked, dst's content as expected), then it
// moves, and a stranger that arrived instead is moved straight back.
func renameIn(tx *Tx, src, dst *WriteTarget, force bool, expect *string) error {
	s := tx.s
	fi, err := s.renameRules(src, dst, force)
	if err != nil {
		return err
	}
	// The entry must still be the object that was checked (a directory
	// swapped in by another process would bring unchecked paths along).
	key := devIno(fi)
	tx.require(src, cond{entry: &key, verb: "moved"})
	if force {
		tx.require(dst, cond{expect: expect})
	}
	if err := tx.recheck("rename.checked", src, dst); err != nil {
		return err
	}
	if force && expect != nil {
		tx.at("rename.locked")
	}
	// What --force replaces goes to the journal first.
	if force {
		if err := keepReplaced(tx, dst); err != nil {
			return err
		}
	}
	if err := s.renameChecked(src, dst, force && fi.Mode().IsRegular(), force, expect); err != nil {
		if e, ok := err.(*fserr.Error); ok {
			return e
		}
		if errors.Is(err, fs.ErrExist) {
			return fserr.Errorf(fserr.CodeExists, dst.Path, "%s exists:", dst.Path).WithHint(HintReplace)
		}
		return ioErr(dst.Path, err)
	}
	// No system call renames "this inode": a process outside fsbox that
	// swaps the name in the instant between the identity check above and
	// the rename would have its own object moved. Look at what arrived,
	// and move a stranger straight back.
	if now, err := dst.entryNow(); err == nil && devIno(now) != key {
		if rerr := renameAt(dst, src, false); rerr != nil {
			return fserr.Errorf(fserr.CodeConflict, dst.Path, "%s was replaced by another process during the call and could not be moved back from %s: %v", src.Path, dst.Path, rerr)
		}
		return fserr.Errorf(fserr.CodeConflict, src.Path, "%s was replaced by another process during the call: it was moved back", src.Path)
	}
	dst.dirF.Sync()
	src.dirF.Sync()
	tx.moved(Move{From: src.Rel(), To: dst.Rel()})
	return nil
}

// renameRules is what mv decides under the locks before it re-checks:
// the entry at src now, a free dst (unless force), no move of a
// directory into itself, and the rules on what moves (moveRules).
func (s *Sandbox) renameRules(src, dst *WriteTarget, force bool) (fs.FileInfo, error) {
	fi, err := src.entryNow()
	if err != nil {
		return nil, err
	}
	if !force {
		if _, err := dst.dir.Lstat(dst.Name); err == nil {
			return nil, fserr.Errorf(fserr.CodeExists, dst.Path, "%s exists:", dst.Path).WithHint(HintReplace)
		}
	}
	srcRel, dstRel := src.rootRel(), dst.rootRel()
	if fi.IsDir() && src.rt == dst.rt && (dstRel == srcRel || strings.HasPrefix(dstRel+"/", srcRel+"/")) {
		return nil, fserr.Errorf(fserr.CodeUsage, dst.Path, "cannot move %s into itself", src.Path)
	}
	if err := s.moveRules(src, dst, fi); err != nil {
		return nil, err
	}
	return fi, nil
}

// keepReplaced keeps in the journal what mv --force replaces at dst (a
// file or a symlink; a directory is never replaced but by rename's own
// rules), and notes it.
func keepReplaced(tx *Tx, dst *WriteTarget) error {
	if _, err := dst.dir.Lstat(dst.Name); err != nil {
		return nil
	}
	before, n, err := tx.s.keepEntry(dst)
	if err != nil {
		return err
	}
	if before != nil && before.Type != "dir" {
		tx.note(PathChange{Path: dst.Rel(), Before: before})
		tx.stored(n)
	}
	return nil
}

// renameChecked is renameAt, except when force replaces a file a
// precondition hashed: then the two entries are exchanged in one step,
// the object now at src's name must be the file hashed (else it is
// exchanged back: conflict), and it is then unlinked (the journal holds
// its content). A file another process renamed over dst's name after the
// check is so never lost. Without a one-step exchange: renameAt.
// Only a file is exchanged (exchange, which takes a directory over a
// file where rename(2) refuses, is kept to what rename does).
func (s *Sandbox) renameChecked(src, dst *WriteTarget, exchange, force bool, expect *string) error {
	if !exchange || expect == nil || dst.hashed == nil {
		return renameAt(src, dst, force)
	}
	err := exchangeBetween(src, dst)
	switch {
	case errors.Is(err, errNoExchange):
		return renameAt(src, dst, force)
	case errors.Is(err, fs.ErrNotExist):
		return fserr.Errorf(fserr.CodeConflict, dst.Path, "%s was removed by another process during the commit: nothing was moved", dst.Path)
	case err != nil:
		return err
	}
	fi, err := src.dir.Lstat(src.Name)
	if err != nil || devIno(fi) != *dst.hashed {
		if berr := exchangeBetween(src, dst); berr != nil {
			return fserr.Errorf(fserr.CodeConflict, dst.Path, "%s was replaced by another process during the commit and could not be swapped back from %s: %v", dst.Path, src.Path, berr)
		}
		return fserr.Errorf(fserr.CodeConflict, dst.Path, "%s was replaced by another process during the commit: nothing was moved", dst.Path)
	}
	if err := unlinkAt(src); err != nil {
		return ioErr(src.Path, err)
	}
	return nil
}

// mkdirPosix is Mkdir on a posix root.
func (s *Sandbox) mkdirPosix(p string) (display string, created bool, err error) {
	w, err := s.openMade(p)
	if err != nil {
		if !fserr.Absent(err) {
			return "", false, err
		}
		// A parent is missing: in one change, the missing parents are
		// made one at a time, each checked where it lands, then p is
		// pinned in the parent just made and made too (mkdirIn).
		t, err := s.resolve(p)
		if err != nil {
			return "", false, err
		}
		_, err = s.changeIn([]*root{t.rt}, nil, func(tx *Tx) error {
			display, created, err = mkdirIn(tx, p)
			return err
		})
		if err != nil && !created {
			return "", false, err
		}
		return display, created, err
	}
	defer w.Close()
	if w.Exists {
		return madeExists(w, p)
	}
	_, err = s.change([]*WriteTarget{w}, func(tx *Tx) error {
		created, err = mkdirAt(tx, w, p)
		return err
	})
	if err != nil && !created {
		return "", false, err
	}
	return w.Path, created, err
}

// madeExists is Mkdir's answer for a name that exists: fine when it is a
// directory (nothing made), exists when it is not.
func madeExists(w *WriteTarget, p string) (string, bool, error) {
	if w.Info.Type != "dir" {
		return "", false, fserr.Errorf(fserr.CodeExists, p, "%s exists and is not a directory", p)
	}
	return w.Path, false, nil
}

// mkdirAt makes the directory w names (inside a change) and notes it;
// created is false when it appeared meanwhile.
func mkdirAt(tx *Tx, w *WriteTarget, given string) (created bool, err error) {
	if o, ok := w.rt.st.(*objectRoot); ok {
		return o.marker(tx, w, given)
	}
	if err := w.dir.Mkdir(w.Name, 0o777); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, mapOpenErr(err, given)
	}
	w.dirF.Sync()
	tx.note(PathChange{Path: w.Rel(), After: &FileState{Type: "dir"}})
	return true, nil
}

// missingDirs lists rel and its ancestors below rt that do not exist,
// outermost first (lexically: the journal's record of what mkdir -p made).
func missingDirs(rt *root, rel string) []string {
	var out []string
	if rt.r == nil {
		return nil // an object root: a prefix is never made
	}
	for d := path.Clean(rel); d != "." && d != "/" && d != ""; d = path.Dir(d) {
		if _, err := rt.r.Lstat(d); err == nil {
			break
		}
		out = append([]string{d}, out...)
	}
	return out
}

// removePosix is RemoveExpect on a posix root: every path below a
// directory is checked first, through descriptors, and the deletion then
// walks the same directories again by descriptor and removes exactly the
// objects that were checked (same device and inode).
func (s *Sandbox) removePosix(w *WriteTarget, recursive bool, expect *string) error {
	_, err := s.change([]*WriteTarget{w}, func(tx *Tx) error {
		return removeEntry(tx, w, recursive, expect)
	})
	return err
}

// removeEntry removes w's entry inside a change: it must still be the
// object the target pinned, and the policy must let it go.
func removeEntry(tx *Tx, w *WriteTarget, recursive bool, expect *string) error {
	fi, err := w.entryNow()
	if err != nil {
		return err
	}
	if devIno(fi) != w.Info.key {
		return fserr.Errorf(fserr.CodeConflict, w.Path, "%s was replaced during the call: nothing was removed", w.Path)
	}
	if err := tx.s.allowAt(w.rt, w.rootRel(), fi.IsDir(), w.Path); err != nil {
		return err
	}
	if fi.IsDir() {
		return removeDirIn(tx, w, recursive, expect)
	}
	if expect == nil && fi.Mode().IsRegular() && tx.s.RequirePrecondition() {
		return PreconditionRequired(w.Path, fmt.Sprintf("the policy requires a removal to name the content it removes: %s is not removed", w.Path), HintExpectSHA256)
	}
	tx.require(w, cond{expect: expect, entry: &w.Info.key, verb: "removed"})
	if err := tx.recheck("remove.checked", w); err != nil {
		return err
	}
	before, stored, err := tx.s.keepEntry(w)
	if err != nil {
		return err
	}
	if err := unlinkAt(w); err != nil {
		return ioErr(w.Path, err)
	}
	if before != nil {
		tx.note(PathChange{Path: w.Rel(), Before: before})
		tx.stored(stored)
	}
	return nil
}

// removeDirIn removes the directory w and everything below it (rm -r)
// inside a change: every path below is checked first, through
// descriptors, and kept in the journal; the deletion then removes
// exactly the objects that were checked.
func removeDirIn(tx *Tx, w *WriteTarget, recursive bool, expect *string) error {
	s := tx.s
	if expect != nil {
		return fserr.Errorf(fserr.CodeNotAFile, w.Path, "%s is a directory: an expected sha256 names a file's content", w.Path)
	}
	if !recursive {
		return fserr.Errorf(fserr.CodeNotAFile, w.Path, "%s is a directory:", w.Path).WithHint(fserr.Hint{Option: "recursive", Short: true, Text: "pass %s to remove it and everything below", Else: "remove what lies below it first"})
	}
	tree, err := scanTree(w, w.Info.key, s.removable(w))
	if err != nil {
		return err
	}
	if len(tree.kids) > 0 && s.RequirePrecondition() {
		// Nothing names what lies below: the policy wants every file
		// removed by its content, one at a time.
		return fserr.Errorf(fserr.CodePreconditionRequired, w.Path, "%s is not empty, and the policy requires every removal to name the content it removes: remove its files one at a time, by their sha256, then the empty directory", w.Path)
	}
	// The journal keeps the whole tree first (the directory, then what
	// lies below, parents before children).
	var kept []PathChange
	var stored int64
	if tx.journal() != nil {
		if kept, stored, err = s.keepTree(w); err != nil {
			return err
		}
		kept = append([]PathChange{{Path: w.Rel(), Before: &FileState{Type: "dir"}}}, kept...)
	}
	if err := tx.recheck("remove.checked", w); err != nil {
		return err
	}
	if err := removeTree(w, tree); err != nil {
		if e, ok := err.(*fserr.Error); ok {
			return e
		}
		return ioErr(w.Path, err)
	}
	w.dirF.Sync()
	tx.note(kept...)
	tx.stored(stored)
	return nil
}

// removable is rm -r's check of each path below w: never a journal of
// fsbox, and every path one the policy lets a change remove.
func (s *Sandbox) removable(w *WriteTarget) func(sub string, isDir bool) error {
	rel := w.rootRel()
	return func(sub string, isDir bool) error {
		if path.Base(sub) == journalMarker {
			// A journal of fsbox below (ownstate.go): never removed.
			holder := path.Join(w.Path, path.Dir(sub))
			return fserr.Deny(fserr.RuleOwnFile, holder, "%s holds a journal of fsbox (it holds %s): fsbox never reads or changes its own state; nothing was removed", holder, journalMarker)
		}
		if e := s.admitChild(w.rt, rel+"/"+sub, isDir, AccessWrite, path.Join(w.Path, sub)); e != nil {
			return inSet(e, fserr.Deny(e.Rule, e.Path, "%s; nothing was removed", e.Msg))
		}
		if e := s.checkWrite(w.rt, rel+"/"+sub, path.Join(w.Path, sub)); e != nil {
			return e
		}
		return nil
	}
}

// symlinkPosix is Symlink on a posix root.
func (s *Sandbox) symlinkPosix(p, target string) (created bool, err error) {
	w, err := s.openMade(p)
	if err != nil {
		return false, err
	}
	defer w.Close()
	if err := s.allowAt(w.rt, w.rootRel(), false, p); err != nil {
		return false, err
	}
	_, err = s.change([]*WriteTarget{w}, func(tx *Tx) error {
		created, err = symlinkAt(tx, w, p, target)
		return err
	})
	return created, err
}

// symlinkAt makes w's name a symlink to target (inside the change tx),
// replacing a symlink there, the one pinned (re-checked by identity
// first); false when it already is that symlink.
func symlinkAt(tx *Tx, w *WriteTarget, given, target string) (bool, error) {
	if w.Exists {
		if w.Info.Type != "symlink" {
			return false, fserr.Errorf(fserr.CodeExists, given, "%s exists and is not a symlink", given)
		}
		if w.Info.Target == target {
			return false, nil
		}
		tx.require(w, cond{entry: &w.Info.key, verb: "replaced"})
		if err := tx.recheck("symlink.checked", w); err != nil {
			return false, err
		}
		if err := unlinkAt(w); err != nil {
			return false, ioErr(given, err)
		}
	}
	if err := w.dir.Symlink(target, w.Name); err != nil {
		return false, ioErr(given, err)
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

// tempMaxAge is how old a leftover temporary file must be before a write
// in its directory removes it.
const tempMaxAge = time.Hour

var timeNow = time.Now
