package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// Stage 6, change: the one place that locks and re-checks before anything
// changes (the acts themselves are in change_ops.go).

// Every change to a writable root goes through change: it takes the lock
// of each location the change touches, finishes a change a crash
// interrupted, re-checks every pinned target and only then acts. Nothing
// else locks, and no change acts outside it.
//
// Locks are per location, not per policy. A change takes an exclusive
// flock on each writable root it touches and a shared flock on every
// ancestor directory of those roots, each directory once (exclusive when
// it is one of the roots), all in one global order: the directory's
// identity (device, inode), never its path, so two names of one
// directory (a bind mount) are one lock taken once, and every process
// takes them in the same order whatever it calls them. So two policies
// whose roots nest — a CLI call on W and `fsbox mcp W/SUB` — still
// serialise their changes to one file: the outer one's exclusive lock on
// W meets the inner one's shared lock on W. Disjoint roots share only
// shared locks and never wait for each other. The descriptors are opened
// once per sandbox, before Landlock (which would refuse opening an
// ancestor later). Waiting for a lock, in this process or another,
// honours the call's deadline (SetContext): timeout, nothing changed.

// rootLock is the descriptors change locks for one writable root.
type rootLock struct {
	once  sync.Once
	err   error
	locks []heldLock // the root (exclusive), then its ancestors (shared)
}

type heldLock struct {
	f      *os.File
	depth  int
	key    [2]uint64 // device, inode
	shared bool
}

// prepare opens the root's and its ancestors' descriptors (once).
func (rt *root) prepareLock() error {
	rt.lock.once.Do(func() {
		if rt.r == nil {
			return // an object root: its changes are conditional requests, not locked
		}
		f, err := rt.r.Open(".")
		if err != nil {
			rt.lock.err = &fserr.Error{Code: fserr.CodeIO, Path: rt.dir, Msg: fmt.Sprintf("cannot lock the writable root %s: %v", rt.dir, unwrapPathErr(err)), Err: err}
			return
		}
		depth := strings.Count(filepath.ToSlash(rt.dir), "/")
		if rt.dir == "/" {
			depth = 0
		}
		rt.lock.locks = append(rt.lock.locks, heldLock{f: f, depth: depth, key: lockKey(f)})
		// Each ancestor, shared. One that cannot be opened (no read
		// permission on it) is left out: the lock then covers only
		// policies whose roots nest below it.
		for d, i := filepath.Dir(rt.dir), depth-1; ; d, i = filepath.Dir(d), i-1 {
			if a, err := os.Open(d); err == nil {
				rt.lock.locks = append(rt.lock.locks, heldLock{f: a, depth: i, key: lockKey(a), shared: true})
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	})
	return rt.lock.err
}

func lockKey(f *os.File) [2]uint64 {
	if fi, err := f.Stat(); err == nil {
		return devIno(fi)
	}
	return [2]uint64{}
}

// closeLock releases the root's lock descriptors.
func (rt *root) closeLock() {
	for _, l := range rt.lock.locks {
		l.f.Close()
	}
	rt.lock.locks = nil
}

// PrepareChanges opens the lock descriptors of every writable root; the
// CLI calls it (through Restrict) before Landlock for a call that may
// change something.
func (s *Sandbox) prepareChanges() error {
	s.ownFile("", false) // fsbox's own files canonical before the wall goes up
	for _, rt := range s.roots {
		if rt.writable {
			if err := rt.prepareLock(); err != nil {
				return err
			}
		}
	}
	return nil
}

// lockRoots takes the locks of the given roots (see change) and returns
// their release. It gives up when the call's context is done: timeout
// (or the caller's cancel), with no lock held and nothing changed.
func (s *Sandbox) lockRoots(rts []*root) (func(), error) {
	ctx := s.context()
	var all []heldLock
	for _, rt := range rts {
		if err := rt.prepareLock(); err != nil {
			return nil, err
		}
		all = append(all, rt.lock.locks...)
	}
	// By identity alone; one directory met twice (a root that is another
	// root's ancestor under another name, two roots' common ancestor) is
	// locked once, exclusively when either asks for that.
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.key != b.key {
			return a.key[0] < b.key[0] || a.key[0] == b.key[0] && a.key[1] < b.key[1]
		}
		return !a.shared && b.shared
	})
	if err := s.lockWrites(ctx); err != nil {
		return nil, err
	}
	var held []heldLock
	unlock := func() {
		for i := len(held) - 1; i >= 0; i-- {
			unlockFile(held[i].f)
		}
		<-s.writes
	}
	for i, l := range all {
		if i > 0 && l.key == all[i-1].key && l.key != ([2]uint64{}) {
			continue
		}
		if err := lockFileCtx(ctx, l.f, l.shared); err != nil {
			if l.shared && ctx.Err() == nil {
				continue // an ancestor whose file system refuses flock: the root's own lock still holds
			}
			unlock()
			if ctx.Err() != nil {
				return nil, lockWaitErr(ctx, l.f.Name())
			}
			return nil, &fserr.Error{Code: fserr.CodeIO, Path: l.f.Name(), Msg: fmt.Sprintf("cannot lock %s: %v", l.f.Name(), err), Err: err}
		}
		held = append(held, l)
	}
	return unlock, nil
}

// lockWrites takes the in-process side of the locks (one change at a
// time among the views of a sandbox), waiting no longer than ctx.
func (s *Sandbox) lockWrites(ctx context.Context) error {
	select {
	case s.writes <- struct{}{}:
		return nil
	default:
	}
	select {
	case s.writes <- struct{}{}:
		return nil
	case <-ctx.Done():
		return lockWaitErr(ctx, s.work.dir)
	}
}

// lockWaitMax bounds the pause between two tries of a lock another open
// file description holds (flock has no wait with a deadline).
const lockWaitMax = 16 * time.Millisecond

// lockFileCtx takes f's flock, trying again after a pause that doubles up
// to lockWaitMax while another holds it, until ctx is done.
func lockFileCtx(ctx context.Context, f *os.File, shared bool) error {
	ok, err := tryLockFile(f, shared)
	if ok || err != nil {
		return err
	}
	atSeam("lock.wait")
	wait := time.Millisecond
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if ok, err := tryLockFile(f, shared); ok || err != nil {
			return err
		}
		wait = min(2*wait, lockWaitMax)
		t.Reset(wait)
	}
}

// lockWaitErr is the error of a change that gave up waiting for a lock:
// timeout when the call's deadline passed (exit class 9), else the
// caller's cancel.
func lockWaitErr(ctx context.Context, dir string) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return &fserr.Error{Code: fserr.CodeTimeout, Path: dir, Err: err,
			Msg: fmt.Sprintf("the call ran out of time waiting for the lock of %s, which another change holds: nothing was changed", dir)}
	}
	return err
}

// SetContext makes ctx the context of the call this sandbox (a ForCall
// view, or the CLI's one sandbox) runs: a change waiting for a lock gives
// up when ctx is done, and every change checks ctx under its locks, just
// before it commits (after its input is in and any wait for a lock):
// past the deadline it is timeout and changes nothing; cancelled, it
// returns the context's error. Without it a change waits as long as it
// must and checks nothing.
func (s *Sandbox) SetContext(ctx context.Context) { s.ctx.Store(&ctx) }

func (s *Sandbox) context() context.Context {
	if p := s.ctx.Load(); p != nil {
		return *p
	}
	return context.Background()
}

// change runs act as one change of the targets ws (see changeIn).
func (s *Sandbox) change(ws []*WriteTarget, act func(*Tx) error) (string, error) {
	return s.changeIn(nil, ws, act)
}

// changeIn runs act as one transaction: under the locks of every
// writable root the targets lie in (and of the extra roots; the first of
// all is the change's home, whose journal records it), after a change a
// crash interrupted has been finished, after each target was re-checked
// (its pinned parent still lies where it was checked) and, past the
// call's deadline, not at all. act acts through the Tx: it says when its
// targets are checked again with the conditions it requires of them
// (Tx.recheck, the test seam before it), and notes what it changed.
// changeIn then records that in the journal, once, and returns the
// record's id ("": no journal, or nothing to record). What act noted is
// recorded when it returns nil, or when it failed after Tx.Made: a change
// made is recorded even when what followed it failed.
func (s *Sandbox) changeIn(extra []*root, ws []*WriteTarget, act func(*Tx) error) (string, error) {
	return s.changeClaiming(extra, nil, ws, act)
}

// changeClaiming is changeIn for a change that also claims the paths
// claims (undo's steps, pinned when they run): an interrupted change of
// another policy that overlaps a claim or a target makes it a conflict.
func (s *Sandbox) changeClaiming(extra []*root, claims []*target, ws []*WriteTarget, act func(*Tx) error) (string, error) {
	rts, err := s.changeRoots(extra, ws)
	if err != nil {
		return "", err
	}
	if err := s.useJournal(); err != nil {
		return "", err
	}
	home := rts[0]
	// The journals in the store are read once for the change: their
	// plans under way and their counters, at once.
	if err := s.beginObjectJournals(); err != nil {
		return "", err
	}
	defer s.endObjectJournals()
	locked := append([]*root(nil), rts...)
	for _, rt := range s.planRoots() {
		locked = addRoot(locked, rt) // recovery changes the roots an unfinished plan names: under their locks
	}
	atSeam("change.lock")
	unlock, err := s.lockRoots(locked)
	if err != nil {
		return "", err
	}
	defer unlock()
	// A change a crash interrupted is finished before any other.
	for _, w := range ws {
		claims = append(claims, &target{rt: w.rt, rel: w.rootRel()})
	}
	if err := s.recover(locked, claims); err != nil {
		return "", err
	}
	// Each root's journal changes under that root's lock; this change
	// records in its home's.
	s.jn.cur = home.jn
	defer func() { s.jn.cur = nil }()
	if j := s.jn.cur; j != nil {
		j.unkept = false
	}
	tx := &Tx{s: s, ws: ws, roots: locked}
	for _, w := range ws {
		if err := w.pinned(); err != nil {
			return "", err
		}
	}
	// The input is in (a change's content is in its temporary file) and
	// the locks are held: past the call's deadline nothing is changed.
	if err := s.callOver(ws); err != nil {
		return "", err
	}
	return tx.run(act)
}

// changeRoots is the roots a change of ws locks, its home first (the
// first extra root, else the first target's, else the workdir); each
// must be writable.
func (s *Sandbox) changeRoots(extra []*root, ws []*WriteTarget) ([]*root, error) {
	var rts []*root
	for _, rt := range extra {
		rts = addRoot(rts, rt)
	}
	for _, w := range ws {
		rts = addRoot(rts, w.rt)
	}
	if len(rts) == 0 {
		rts = addRoot(rts, s.work)
	}
	for _, rt := range rts {
		if !rt.writable {
			return nil, fserr.Deny(fserr.RuleReadOnly, rt.dir, "%s is not a writable root", rt.dir)
		}
	}
	return rts, nil
}

// addRoot is rts with rt, once.
func addRoot(rts []*root, rt *root) []*root {
	for _, r := range rts {
		if r == rt {
			return rts
		}
	}
	return append(rts, rt)
}

// Tx is one change under way, inside changeIn: the locks are held, a
// change a crash interrupted is finished, every target was found where
// it was pinned. An act does its work through it:
//
//   - require states what a target must still be at the commit (its
//     content's hash, the very file it opened, the entry it checked),
//     and recheck verifies it for the act's targets, with each one's
//     pin, after the test seam that names the act's check: the commit is
//     conditioned on what the call pinned and read;
//   - note, moved and stored say what the change did, for its one
//     journal record (written by changeIn once act returns);
//   - beside hands changeIn what runs alongside the record (a directory's
//     fsync) and must finish before the call returns;
//   - at is a test seam between two steps of the act (recheck fires the
//     one before the check), where a race test swaps a path or a crash
//     test exits.
//
// No act locks, re-checks by hand or writes the journal. A root that is
// not a directory tree (an object store) gives the same conditions to
// each request instead of holding a lock.
type Tx struct {
	s     *Sandbox
	ws    []*WriteTarget
	roots []*root // locked
	conds map[*WriteTarget]cond
	rec   Change
	waits []func() error
	// noReturn: the change is made (Made); what follows cannot take it
	// back, so its record is written even when that fails.
	noReturn bool
	// held and files are a change of several steps' (change_steps.go):
	// the targets it holds to the end, and the files it stages.
	held  []*WriteTarget
	files *Batch
}

// cond is what a change requires of one target at its commit, beyond
// its pinned parent still lying where it was checked.
type cond struct {
	// expect is the sha256 the file at the name must have ("" = absent).
	expect *string
	// unchanged: the name holds the very file the target opened, with
	// the size and times it had then.
	unchanged bool
	// entry, when set, is the object (device, inode) the name must hold;
	// verb says what is refused when it does not ("removed", "moved").
	entry *[2]uint64
	verb  string
}

// require sets what w (one of the change's targets) must be at the
// commit; recheck verifies it.
func (tx *Tx) require(w *WriteTarget, c cond) {
	if tx.conds == nil {
		tx.conds = map[*WriteTarget]cond{}
	}
	tx.conds[w] = c
}

// recheck is the check right before the commit of the act's targets
// ws: the test seam point (a race test swaps a path there), then, for
// each target in order, its pinned parent still where it was checked and
// what require asked of it. Any miss is a conflict (or a mismatch) and
// nothing has changed.
func (tx *Tx) recheck(point string, ws ...*WriteTarget) error {
	if point != "" {
		tx.at(point)
	}
	for _, w := range ws {
		if err := w.pinned(); err != nil {
			return err
		}
		if err := tx.conds[w].check(w); err != nil {
			return err
		}
	}
	return nil
}

// check verifies c of w, under the locks.
func (c cond) check(w *WriteTarget) error {
	if err := w.expect(c.expect); err != nil {
		return err
	}
	if c.unchanged {
		if err := w.unchanged(); err != nil {
			return err
		}
	}
	if c.entry != nil {
		if now, err := w.entryNow(); err != nil {
			return err
		} else if devIno(now) != *c.entry {
			return fserr.Errorf(fserr.CodeConflict, w.Path, "%s was replaced during the call: nothing was %s", w.Path, c.verb)
		}
	}
	return nil
}

// at is a test seam inside the change, between two of its steps (a
// race test swaps a path there; a crash test exits there).
func (tx *Tx) at(point string) { atSeam(point) }

// note adds paths to what the change records.
func (tx *Tx) note(pcs ...PathChange) { tx.rec.Paths = append(tx.rec.Paths, pcs...) }

// moved adds renames to what the change records.
func (tx *Tx) moved(ms ...Move) { tx.rec.Moved = append(tx.rec.Moved, ms...) }

// stored counts prior content the change newly stored in the journal.
func (tx *Tx) stored(n int64) { tx.rec.Bytes += n }

// beside adds what must finish before the change returns, run once its
// record is written (it runs alongside it: a directory's fsync). Its
// error is the change's when the record has none.
func (tx *Tx) beside(wait func() error) { tx.waits = append(tx.waits, wait) }

// journal is the journal the change records in (nil: none).
func (tx *Tx) journal() *journal { return tx.s.jn.cur }

// run runs act, then records what it noted and waits for what runs
// beside the record.
func (tx *Tx) run(act func(*Tx) error) (string, error) {
	err := act(tx)
	if err != nil && !tx.noReturn {
		return "", err
	}
	id, rerr := tx.s.recordChange(tx.rec)
	for _, wait := range tx.waits {
		if werr := wait(); werr != nil && rerr == nil {
			rerr = werr
		}
	}
	if err == nil {
		err = rerr
	}
	return id, err
}

// callOver is the call's end, as a change's error: timeout past its
// deadline, the context's error when it was cancelled, else nil.
func (s *Sandbox) callOver(ws []*WriteTarget) error {
	p := s.ctx.Load()
	if p == nil || *p == nil {
		return nil
	}
	err := (*p).Err()
	if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	given := ""
	if len(ws) > 0 {
		given = ws[0].Path
	}
	return &fserr.Error{Code: fserr.CodeTimeout, Path: given, Err: err,
		Msg: "the call ran out of time (the policy's max_call_seconds, or the timeout the call asked for) before its change was made: nothing was changed"}
}

// mkdirAll creates the directory rel (and its parents) in the workdir.
// Every directory to be made is checked first, on the real path of the
// deepest one that exists plus the rest, so no directory is ever created
// below a denied one (a symlink on the way is resolved, not trusted).
func (s *Sandbox) mkdirAll(rt *root, rel, given string) error {
	_, err := s.changeIn([]*root{rt}, nil, func(*Tx) error {
		_, err := s.mkdirAllLocked(rt, rel, given, true)
		return err
	})
	return err
}

// mkdirAllLocked checks the directory rel and its missing parents as
// mkdirAll does and, with make, creates them. It returns rel's real
// root-relative path (the deepest existing directory resolved, plus the
// rest).
func (s *Sandbox) mkdirAllLocked(rt *root, rel, given string, make bool) (string, error) {
	if rt.r == nil {
		return s.prefixChecked(rt, rel, given)
	}
	dir, rest := rel, ""
	for {
		sub, err := openRoot(rt.r, dir)
		if err == nil {
			defer func() { sub.Close() }()
			rrel, err := realRel(rt, sub, dir, given)
			if err != nil {
				return "", err
			}
			if rest == "" {
				return rrel, nil
			}
			full := path.Join(rrel, rest)
			if err := s.checkPatterns(rt, full, true, AccessWrite, given); err != nil {
				return "", err
			}
			if err := s.checkWrite(rt, full, given); err != nil {
				return "", err
			}
			if !make {
				return full, nil
			}
			// One directory at a time, each made in and entered from the
			// one above (never the whole path again from the root, which
			// would follow a symlink on the way), and each checked to be
			// the directory just made where the checks above said.
			for _, c := range strings.Split(rest, "/") {
				rrel = path.Join(rrel, c)
				if err := sub.Mkdir(c, 0o777); err != nil {
					if errors.Is(err, fs.ErrExist) {
						// It did not open as a directory, yet it exists: a
						// symlink leading nowhere, or a file.
						return "", fserr.Deny(fserr.RuleSymlink, given, "%s: %s exists but is not a directory (a dangling symlink?): nothing more was created", given, rrel)
					}
					return "", mkdirAllErr(err, given)
				}
				atSeam("mkdir.made")
				next, err := openRoot(sub, c)
				if err != nil {
					return "", mkdirAllErr(err, given)
				}
				sub.Close()
				sub = next
				if got, err := realRel(rt, sub, rrel, given); err != nil {
					return "", err
				} else if got != rrel {
					return "", fserr.Errorf(fserr.CodeConflict, given, "%s: %s was replaced while being created: nothing more was created", given, rrel)
				}
			}
			return full, nil
		}
		if !errors.Is(err, fs.ErrNotExist) || dir == "." {
			if errors.Is(err, syscall.ENOTDIR) || strings.Contains(err.Error(), "not a directory") {
				return "", fserr.Errorf(fserr.CodeNotADir, given, "%s: a parent exists and is not a directory", given)
			}
			return "", mapOpenErr(err, given)
		}
		dir, rest = path.Dir(dir), path.Join(path.Base(dir), rest)
	}
}

// pinned reports a conflict unless the pinned parent still lies where it
// was checked: an ancestor renamed by another process would put the name
// under other rules.
func (w *WriteTarget) pinned() error {
	if w.dirF == nil {
		return nil // an object root: no directory to move (its acts condition each request)
	}
	real, err := fdPath(w.dirF, w.rt.abs(w.dirRel))
	if err != nil {
		return ioErr(w.Path, err)
	}
	if rel, ok := w.rt.relOf(real); !ok || rel != w.dirRel {
		return w.rt.orGone(fserr.Errorf(fserr.CodeConflict, w.Path, "the directory of %s was moved during the call: nothing was changed", w.Path), w.Path)
	}
	return nil
}

// expect, when set, is the sha256 the file at the name must have now
// ("" = absent); checked under the write lock.
func (w *WriteTarget) expect(expect *string) error {
	if expect == nil {
		return nil
	}
	have := ""
	f, err := openNoFollow(w, w.Name, openReadFlags, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return noFollowErr(err, w.Path)
	default:
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return ioErr(w.Path, err)
		}
		if err := w.s.checkFileDesc(fi, w.Path); err != nil {
			return err
		}
		if have, err = hashReader(f, w.Path); err != nil {
			return err
		}
		key := devIno(fi)
		w.hashed = &key
	}
	if have != *expect {
		if have == "" {
			have = "absent"
		}
		return w.s.Mismatch(w.Path, have, *expect)
	}
	return nil
}

// Mismatch is the conflict of a precondition that does not hold: the file
// at given hashes to have ("" or "absent": there is none), not to want.
// Under [write] require_precondition the message leaves the current hash
// out, so a refused change cannot be retried blind with the hash its
// refusal gave: the caller reads the file again.
func (s *Sandbox) Mismatch(given, have, want string) *fserr.Error {
	if have == "" {
		have = "absent"
	}
	if want == "" {
		want = "absent"
	}
	if s.RequirePrecondition() {
		if want == "absent" {
			return fserr.Errorf(fserr.CodeConflict, given, "%s exists, and the call expected it absent: read it again", given)
		}
		if have == "absent" {
			return fserr.Errorf(fserr.CodeConflict, given, "%s does not exist, and the call expected its sha256 to be %s", given, want)
		}
		return fserr.Errorf(fserr.CodeConflict, given, "%s changed: its sha256 is not %s; read it again", given, want)
	}
	return fserr.Errorf(fserr.CodeConflict, given, "%s changed: its sha256 is %s, not %s", given, have, want)
}

// RequirePrecondition says whether the policy in force requires every
// change to name what it replaces ([write] require_precondition).
func (s *Sandbox) RequirePrecondition() bool {
	return s.policy != nil && s.policy.Write.RequirePrecondition
}

// PreconditionRequired is the refusal of a change that does not name what
// it replaces while the policy requires it; hint names the option that
// would (each face spells it its own way).
func PreconditionRequired(given, msg string, hint fserr.Hint) *fserr.Error {
	return (&fserr.Error{Code: fserr.CodePreconditionRequired, Path: given, Msg: msg}).WithHint(hint)
}

// checkedKey is the identity of the file a change's precondition checked:
// the file expect hashed under the lock, else (Unchanged) the file the
// target opened; ok is false when the change checked no file.
func (w *WriteTarget) checkedKey(o CommitOptions) (key [2]uint64, ok bool) {
	switch {
	case o.Expect != nil && w.hashed != nil:
		return *w.hashed, true
	case o.Unchanged && w.cur != nil:
		return w.Info.key, true
	}
	return key, false
}

// swappedOut checks, after a change swapped its new file in by exchange
// (or moved the old one aside), that the object now at name, the one
// swapped out, is the file the precondition checked: a file another
// process renamed over the name between the check and the swap is a
// conflict (the caller swaps it back). A writer in place cannot be seen
// this way: it changes the checked file itself.
func (w *WriteTarget) swappedOut(name string, o CommitOptions) error {
	key, ok := w.checkedKey(o)
	if !ok {
		return nil
	}
	fi, err := w.dir.Lstat(name)
	if err != nil {
		return ioErr(w.Path, err)
	}
	if devIno(fi) != key {
		return fserr.Errorf(fserr.CodeConflict, w.Path, "%s was replaced by another process during the commit: nothing was changed", w.Path)
	}
	return nil
}

// unchanged reports a conflict unless the name still holds the file the
// target opened, as it was then.
func (w *WriteTarget) unchanged() error {
	if w.cur == nil {
		return nil
	}
	changed := fserr.Errorf(fserr.CodeConflict, w.Path, "%s changed since it was read: nothing was written", w.Path)
	now, err := w.entryNow()
	if err != nil || devIno(now) != w.Info.key {
		return changed
	}
	fi, err := w.cur.Stat()
	if err != nil {
		return ioErr(w.Path, err)
	}
	if fi.Size() != w.Info.Size || !fi.ModTime().Equal(w.curStat.ModTime()) || changeTime(fi) != changeTime(w.curStat) {
		return changed
	}
	return nil
}

// entryNow re-reads the entry under the write lock: what it is now, which
// is what the change will act on.
func (w *WriteTarget) entryNow() (fs.FileInfo, error) {
	fi, err := w.dir.Lstat(w.Name)
	if err != nil {
		return nil, mapOpenErr(err, w.Path)
	}
	return fi, nil
}

// sharedInode refuses a change in place to the file the target opened
// when it has more than one link: every other name of the inode (one
// outside the sandbox, say) would change too.
func (w *WriteTarget) sharedInode() error {
	if w.cur == nil {
		return nil
	}
	fi, err := w.cur.Stat()
	if err != nil {
		return ioErr(w.Path, err)
	}
	return sharedInode(fi, w.Path)
}

func sharedInode(fi fs.FileInfo, given string) error {
	if n := nlink(fi); n > 1 {
		return fserr.Deny(fserr.RuleHardlink, given, "%s has %d hard links: appending would change every other name of the file too (write it whole instead, which replaces only this name)", given, n)
	}
	return nil
}
