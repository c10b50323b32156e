package sandbox

import (
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
	"sync"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// A tree copy (cp -r): one change, all or nothing, one journal record.
//
// A new tree is staged under a temporary name (.fsbox-tmp-…) in the
// destination's parent and renamed into place in one step, never over
// anything. Before the stage is made, a plan naming it goes to the
// journal (kind "tree"): a crash (SIGKILL) before the rename leaves a
// half-made stage that the next change's recovery removes, so the next
// call finds no copy at all; after the rename the copy is whole. The
// stage is durable before the rename (Linux: one syncfs of its file
// system; elsewhere an fsync of every file and directory); the parent
// is synced after it.
//
// A merge into an existing tree (force) is one change of the files it
// writes (a batch: each staged beside its target, swapped in all or none
// under a plan), the directories it makes (made before the swap, removed
// again if the change fails) and the symlinks it makes (after the swap).

// TreeItem is one entry of a tree to copy.
type TreeItem struct {
	Rel    string      // below the copy's top, '/'-separated; "" is the top itself
	Type   string      // "dir", "file" or "symlink"
	Mode   fs.FileMode // permission bits (a directory's, a file's)
	Size   int64       // a file's size when it was walked
	Target string      // a symlink's target, as stored
	Key    [2]uint64   // a file's identity when walked (zero: not compared)
	Src    string      // a file's source path (what Open is given)
}

// TreeCopy is what CopyTree copies, and how.
type TreeCopy struct {
	// Items are the entries, each directory before what lies in it; the
	// top ("") comes first.
	Items []TreeItem
	// Open opens a file item's source for reading, through the door.
	Open func(it *TreeItem) (*File, error)
	// Merge: the destination is an existing directory; files are
	// replaced (force), directories kept.
	Merge bool
	// Expect names, by destination path as output shows it, the sha256
	// each replaced file must have at the commit.
	Expect map[string]string
}

// TreeResult is what a tree copy made.
type TreeResult struct {
	Files, Dirs, Symlinks, Replaced int
	Bytes                           int64
	ChangeID                        string
}

// shown is the item's destination path as output shows it.
func (it *TreeItem) shown(dst *WriteTarget) string {
	if it.Rel == "" {
		return dst.Path
	}
	return path.Join(dst.Path, it.Rel)
}

// CheckTree checks, before anything changes, that every item may be
// made at its destination below dst (the copy's top, pinned with
// OpenEntry): the write rules on its real path and, for a symlink, that
// its target resolved there stays in the destination's root and passes
// the rules there. The first refusal names the entry.
func (s *Sandbox) CheckTree(dst *WriteTarget, items []TreeItem) error {
	rt, top := dst.rt, dst.rootRel()
	for i := range items {
		it := &items[i]
		if it.Type == "symlink" && rt.st.kind() == kindObject {
			return fserr.Errorf(fserr.CodeUnsupported, it.shown(dst), "%s is a symlink, and %s lies in an object root, which has none: nothing was copied", it.Src, it.shown(dst))
		}
		rel := path.Join(top, it.Rel)
		given := it.shown(dst)
		isDir := it.Type == "dir"
		if err := s.checkPatterns(rt, rel, isDir, AccessWrite, given); err != nil {
			return err
		}
		if err := s.checkWrite(rt, rel, given); err != nil {
			return err
		}
		if err := s.allowAt(rt, rel, isDir, given); err != nil {
			return err
		}
		if it.Type == "symlink" {
			link := given
			if it.Src != "" {
				link = it.Src
			}
			if err := s.checkLinkTarget(rt, rel, it.Target, link, given); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkLinkTarget refuses a symlink at rel (real, in rt) whose target,
// resolved there lexically, leaves rt or is denied there.
func (s *Sandbox) checkLinkTarget(rt *root, rel, target, given, at string) error {
	var to string
	if filepath.IsAbs(target) {
		r, ok := rt.relOf(filepath.Clean(target))
		if !ok {
			return fserr.Deny(fserr.RuleSymlink, given, "%s is a symlink to %s, which lies outside %s at %s: nothing was copied", given, target, rt.dir, at)
		}
		to = r
	} else {
		to = path.Clean(path.Join(path.Dir(rel), target))
		if to == ".." || strings.HasPrefix(to, "../") {
			return fserr.Deny(fserr.RuleSymlink, given, "%s is a symlink to %s, which leads out of %s at %s: nothing was copied", given, target, rt.dir, at)
		}
	}
	if to == "." {
		return nil
	}
	if err := s.checkPatterns(rt, to, false, AccessRead, given); err != nil {
		e := *err
		e.Path = given
		e.Msg = fmt.Sprintf("%s is a symlink to %s, which the policy denies at %s (%s): nothing was copied", given, target, at, e.Msg)
		return &e
	}
	return nil
}

// AncestorKeys is the identity (device, inode) of the directory dst
// lies in and of each directory above it up to its root: a copy whose
// source holds one of them would copy into itself.
func (w *WriteTarget) AncestorKeys() [][2]uint64 {
	var out [][2]uint64
	if w.dirF == nil {
		return nil
	}
	for d := w.dirRel; ; d = path.Dir(d) {
		if fi, err := os.Stat(w.rt.abs(d)); err == nil {
			out = append(out, devIno(fi))
		}
		if d == "." || d == "/" || d == "" {
			break
		}
	}
	return out
}

// Abs is the target's absolute real path.
func (w *WriteTarget) Abs() string { return w.rt.abs(w.rootRel()) }

// CopyTree copies tc's items to dst (the copy's top, pinned with
// OpenEntry: absent, or an existing directory with Merge) as one change.
// CheckTree must have passed.
func (s *Sandbox) CopyTree(dst *WriteTarget, tc TreeCopy) (TreeResult, error) {
	var res TreeResult
	id, err := s.change([]*WriteTarget{dst}, func(tx *Tx) error {
		if dst.rt.st.kind() == kindObject {
			return s.copyTreeObjects(tx, dst, tc, &res)
		}
		if tc.Merge {
			return s.mergeTree(tx, dst, tc, &res)
		}
		return s.stageTree(tx, dst, tc, &res)
	})
	res.ChangeID = id
	return res, err
}

// stageTree makes the new tree under a temporary name and renames it
// into place (see above).
func (s *Sandbox) stageTree(tx *Tx, dst *WriteTarget, tc TreeCopy, res *TreeResult) (err error) {
	if err := tx.recheck("cp.checked", dst); err != nil {
		return err
	}
	if _, err := dst.dir.Lstat(dst.Name); err == nil {
		return fserr.Errorf(fserr.CodeExists, dst.Path, "%s appeared during the call: nothing was copied", dst.Path)
	}
	stage := tempName()
	var planName string
	var js []*journal
	if tx.journal() != nil {
		it := planItem{Root: dst.rt.dir, Dir: dst.dirRel, Name: dst.Name, Tmp: stage, Kind: "tree"}
		if planName, js, err = s.putPlanItems([]planItem{it}, []*journal{tx.journal(), dst.rt.jn}); err != nil {
			return err
		}
	}
	donePlan := func() {
		for _, j := range js {
			j.donePlan(planName)
		}
	}
	renamed := false
	defer func() {
		if !renamed {
			removeStage(dst.dir, stage)
			dst.dirF.Sync()
			donePlan()
		}
	}()
	tx.at("cp.planned")
	if err := dst.dir.Mkdir(stage, 0o700); err != nil {
		return ioErr(dst.Path, err)
	}
	sub, err := dst.dir.OpenRoot(stage)
	if err != nil {
		return ioErr(dst.Path, err)
	}
	defer sub.Close()
	sy := newSyncer()
	max := s.Limits().MaxWriteBytes
	buf := make([]byte, 128<<10)
	var dirs []*TreeItem
	var notes []PathChange
	for i := range tc.Items {
		it := &tc.Items[i]
		if err := s.callOver([]*WriteTarget{dst}); err != nil {
			sy.wait()
			return err
		}
		name := it.Rel
		if name == "" {
			name = "."
		}
		given := it.shown(dst)
		st := &FileState{Type: it.Type}
		switch it.Type {
		case "dir":
			if it.Rel != "" {
				if err := sub.Mkdir(name, 0o700); err != nil {
					sy.wait()
					return ioErr(given, err)
				}
			}
			dirs = append(dirs, it)
			st.Mode = fmt.Sprintf("%04o", it.Mode.Perm())
			res.Dirs++
		case "symlink":
			if err := sub.Symlink(it.Target, name); err != nil {
				sy.wait()
				return ioErr(given, err)
			}
			st.Target = it.Target
			res.Symlinks++
		case "file":
			n, sum, err := s.copyFile(sub, name, given, it, tc.Open, max, buf, sy)
			if err != nil {
				sy.wait()
				return err
			}
			st.SHA256, st.Size, st.Mode = sum, n, fmt.Sprintf("%04o", it.Mode.Perm())
			res.Files++
			res.Bytes += n
		default:
			sy.wait()
			return fserr.Deny(fserr.RuleSpecialFile, given, "%s is a %s: only files, directories and symlinks are copied", given, it.Type)
		}
		notes = append(notes, PathChange{Path: dst.rt.journalPath(path.Join(dst.rootRel(), it.Rel)), After: st})
		tx.at("cp.copied")
	}
	if err := sy.wait(); err != nil {
		return err
	}
	// Each directory gets its mode once nothing more is made in it
	// (deepest first), and is synced.
	for i := len(dirs) - 1; i >= 0; i-- {
		it := dirs[i]
		name := it.Rel
		if name == "" {
			name = "."
		}
		if !syncWhole {
			if err := syncDirIn(sub, name); err != nil {
				return ioErr(it.shown(dst), err)
			}
		}
		if err := sub.Chmod(name, it.Mode.Perm()); err != nil {
			return ioErr(it.shown(dst), err)
		}
	}
	if err := syncTree(sub); err != nil {
		return ioErr(dst.Path, err)
	}
	tx.at("cp.staged")
	if err := s.callOver([]*WriteTarget{dst}); err != nil {
		return err
	}
	if err := renameNoReplaceFrom(dst, stage, dst.Name); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fserr.Errorf(fserr.CodeExists, dst.Path, "%s appeared during the call: nothing was copied", dst.Path)
		}
		return ioErr(dst.Path, err)
	}
	renamed = true
	tx.at("cp.renamed")
	tx.Made()
	tx.note(notes...)
	tx.beside(func() error { donePlan(); return nil }) // once the record is written
	if err := dst.dirF.Sync(); err != nil {
		return ioErr(dst.Path, err)
	}
	s.trail.bytesWritten.Add(res.Bytes)
	return nil
}

// copyFile copies a file item's source to name in the stage, with its
// mode; the file is synced in the background (sy).
func (s *Sandbox) copyFile(sub *os.Root, name, given string, it *TreeItem, open func(*TreeItem) (*File, error), max int64, buf []byte, sy *syncer) (int64, string, error) {
	src, err := open(it)
	if err != nil {
		return 0, "", err
	}
	defer src.Close()
	if it.Key != ([2]uint64{}) && src.Info.key != ([2]uint64{}) && src.Info.key != it.Key {
		return 0, "", fserr.Errorf(fserr.CodeConflict, src.Info.Path, "%s was replaced during the call: nothing was copied", src.Info.Path)
	}
	f, err := sub.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, "", ioErr(given, err)
	}
	h := sha256.New()
	n, err := io.CopyBuffer(io.MultiWriter(f, h), io.LimitReader(src, satAdd(max, 1)), buf)
	if err == nil && n > max {
		f.Close()
		return 0, "", &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Path: src.Info.Path,
			Msg: fmt.Sprintf("%s is over max_write_bytes = %d: nothing was copied", src.Info.Path, max)}
	}
	if err == nil {
		err = f.Chmod(it.Mode.Perm())
	}
	if err != nil {
		f.Close()
		if fe := fserr.AsError(err); fe != nil && fe.Code != "" && fe.Code != fserr.CodeIO {
			return 0, "", err
		}
		return 0, "", ioErr(given, err)
	}
	sy.add(f, given)
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// syncDirIn syncs the directory name of sub.
func syncDirIn(sub *os.Root, name string) error {
	d, err := sub.Open(name)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// removeStage removes a stage (a half-made or abandoned tree copy):
// whole, its directories made writable first where a mode kept them
// from being emptied.
func removeStage(dir *os.Root, name string) error {
	err := dir.RemoveAll(name)
	if err == nil {
		return nil
	}
	fs.WalkDir(dir.FS(), name, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dir.Chmod(p, 0o700)
		}
		return nil
	})
	return dir.RemoveAll(name)
}

// syncer syncs and closes staged files in the background, a few at once.
type syncer struct {
	wg    sync.WaitGroup
	slots chan struct{}
	mu    sync.Mutex
	err   error
}

func newSyncer() *syncer { return &syncer{slots: make(chan struct{}, batchSyncs)} }

func (sy *syncer) add(f *os.File, given string) {
	sy.wg.Add(1)
	sy.slots <- struct{}{}
	go func() {
		defer sy.wg.Done()
		defer func() { <-sy.slots }()
		var err error
		if !syncWhole {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			sy.mu.Lock()
			if sy.err == nil {
				sy.err = ioErr(given, err)
			}
			sy.mu.Unlock()
		}
	}()
}

// wait waits for every sync and returns the first failure.
func (sy *syncer) wait() error {
	sy.wg.Wait()
	return sy.err
}

// mergeTree copies the items into the existing directory dst (force):
// directories kept or made, files replaced or added in one batch (each
// replaced file only while it hashes as Expect names it, when named;
// each new one only while its name is free), symlinks made last.
func (s *Sandbox) mergeTree(tx *Tx, dst *WriteTarget, tc TreeCopy, res *TreeResult) (err error) {
	if err := tx.recheck("cp.checked", dst); err != nil {
		return err
	}
	if now, err := dst.entryNow(); err != nil || !now.IsDir() || devIno(now) != dst.Info.key {
		return fserr.Errorf(fserr.CodeConflict, dst.Path, "%s changed during the call: nothing was copied", dst.Path)
	}
	var made []*WriteTarget // directories made, to remove again if the change fails
	defer func() {
		tx.release() // the staged files not swapped in are dropped first
		for i := len(made) - 1; i >= 0; i-- {
			if err != nil && !tx.noReturn {
				rmdirAt(made[i])
			}
			made[i].Close()
		}
	}()
	max := s.Limits().MaxWriteBytes
	var links []*TreeItem
	var dirs []*TreeItem
	b := tx.batch()
	for i := range tc.Items {
		it := &tc.Items[i]
		if err := s.callOver([]*WriteTarget{dst}); err != nil {
			return err
		}
		given := it.shown(dst)
		switch it.Type {
		case "dir":
			if it.Rel == "" {
				continue
			}
			w, err := tx.entry(given)
			if err != nil {
				return err
			}
			if w.Exists {
				w.Close()
				if w.Info.Type != "dir" {
					return fserr.Errorf(fserr.CodeExists, given, "%s exists and is not a directory: a directory cannot replace it (nothing was copied)", given)
				}
				continue
			}
			if err := w.dir.Mkdir(w.Name, 0o700); err != nil {
				w.Close()
				return mapOpenErr(err, given)
			}
			// Pinned as made (what a failed merge's rmdirAt checks it is).
			if fi, err := w.dir.Lstat(w.Name); err == nil {
				w.Exists, w.Info = true, newInfo(w.Name, w.Path, w.rt.abs(w.rootRel()), fi)
			}
			made = append(made, w)
			dirs = append(dirs, it)
			tx.note(PathChange{Path: w.Rel(), After: &FileState{Type: "dir", Mode: fmt.Sprintf("%04o", it.Mode.Perm())}})
			res.Dirs++
		case "symlink":
			links = append(links, it)
		case "file":
			w, err := tx.target(given, nil)
			if err != nil {
				if fserr.AsError(err).Code == fserr.CodeNotAFile {
					return fserr.Errorf(fserr.CodeExists, given, "%s exists and is not a file: a file cannot replace it (nothing was copied)", given)
				}
				return err
			}
			var expect *string
			if e, ok := tc.Expect[given]; ok {
				expect = &e
			} else if w.Exists && s.RequirePrecondition() {
				return PreconditionRequired(given, fmt.Sprintf("%s exists, and the policy requires every change to name the content it replaces: nothing was copied;", given), HintExpectSHA256)
			} else if !w.Exists {
				absent := ""
				expect = &absent // a file that appears meanwhile stays
			}
			if w.Exists {
				res.Replaced++
			}
			src, err := tc.Open(it)
			if err != nil {
				return err
			}
			mode := it.Mode.Perm()
			err = b.PutFrom(w, src, max, CommitOptions{Expect: expect, Mode: &mode})
			src.Close()
			if err != nil {
				return err
			}
			res.Files++
		default:
			return fserr.Deny(fserr.RuleSpecialFile, given, "%s is a %s: only files, directories and symlinks are copied", given, it.Type)
		}
	}
	tx.at("cp.staged")
	if err := s.callOver([]*WriteTarget{dst}); err != nil {
		return err
	}
	if len(b.items) > 0 {
		if err := tx.Swap(); err != nil {
			return err
		}
	}
	for _, it := range b.items {
		res.Bytes += it.res.Bytes
	}
	tx.Made()
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := made[i].dir.Chmod(made[i].Name, dirs[i].Mode.Perm()); err != nil {
			return ioErr(dirs[i].shown(dst), err)
		}
	}
	for _, it := range links {
		given := it.shown(dst)
		w, err := tx.pinMade(given)
		if err != nil {
			return err
		}
		var before *FileState
		if w.Exists {
			if w.Info.Type != "symlink" {
				w.Close()
				return fserr.Errorf(fserr.CodeExists, given, "%s exists and is not a symlink: the files were copied, this symlink and those after it were not", given)
			}
			before = &FileState{Type: "symlink", Target: w.Info.Target}
		}
		created, err := symlinkAt(tx, w, given, it.Target)
		w.Close()
		if err != nil {
			return err
		}
		if created {
			tx.note(PathChange{Path: w.Rel(), Before: before, After: &FileState{Type: "symlink", Target: it.Target}})
		}
		res.Symlinks++
	}
	return nil
}

// copyTreeObjects is a tree copy into an object root: one batch of its
// files (each new key put only while the name is free, each replaced one
// conditioned on the version checked; all or none), then a marker for
// each directory with nothing below it.
func (s *Sandbox) copyTreeObjects(tx *Tx, dst *WriteTarget, tc TreeCopy, res *TreeResult) error {
	if !tc.Merge && dst.Exists {
		return fserr.Errorf(fserr.CodeExists, dst.Path, "%s appeared during the call: nothing was copied", dst.Path)
	}
	defer tx.release()
	max := s.Limits().MaxWriteBytes
	below := map[string]bool{} // directories something lies in
	for _, it := range tc.Items {
		if it.Rel != "" {
			below[path.Dir(it.Rel)] = true
		}
	}
	for i := range tc.Items {
		it := &tc.Items[i]
		if it.Type == "dir" {
			// A directory the copy makes (one that is there already, in a
			// merge, is not counted, as on a disk).
			rel := path.Join(dst.rootRel(), it.Rel)
			if _, err := dst.rt.st.stat(s.context(), rel); !tc.Merge || errors.Is(err, fs.ErrNotExist) {
				res.Dirs++
			}
			continue
		}
		if it.Type != "file" {
			return fserr.Errorf(fserr.CodeUnsupported, it.shown(dst), "%s is a %s, and an object root holds files only: nothing was copied", it.shown(dst), it.Type)
		}
		given := it.shown(dst)
		w, err := tx.target(given, tx.mkdirAll)
		if err != nil {
			return err
		}
		src, err := tc.Open(it)
		if err != nil {
			return err
		}
		o := CommitOptions{NoReplace: !tc.Merge}
		if sum, ok := tc.Expect[given]; ok {
			o.Expect = &sum
		}
		if w.Exists {
			if o.Expect == nil && s.RequirePrecondition() {
				src.Close()
				return PreconditionRequired(given, fmt.Sprintf("%s exists, and the policy requires every change to name the content it replaces: nothing was copied;", given), HintExpectSHA256)
			}
			res.Replaced++
		}
		err = tx.batch().PutFrom(w, src, max, o)
		src.Close()
		if err != nil {
			return err
		}
		res.Files++
	}
	if len(tx.batch().items) > 0 {
		if err := tx.Swap(); err != nil {
			return err
		}
		for _, it := range tx.batch().items {
			res.Bytes += it.res.Bytes
		}
	}
	return s.markEmptyDirs(tx, dst, tc, below)
}

// markEmptyDirs puts a marker for each directory of a tree copied into
// an object root that nothing lies in (below: those something does).
func (s *Sandbox) markEmptyDirs(tx *Tx, dst *WriteTarget, tc TreeCopy, below map[string]bool) error {
	for i := range tc.Items {
		it := &tc.Items[i]
		rel := it.Rel
		if rel == "" {
			rel = "."
		}
		if it.Type != "dir" || below[rel] {
			continue
		}
		w, err := tx.s.openMade(it.shown(dst))
		if err != nil {
			return err
		}
		if !w.Exists {
			_, err = mkdirAt(tx, w, w.Path)
		}
		w.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
