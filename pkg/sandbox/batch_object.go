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
	"sync"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// A batch on object roots (patch, a multi-file undo, cp -r): every
// target is checked (its condition: the version pinned, or the one
// found to hash as expected, or the name free), what each holds is kept
// in the journal (a copy in the store), the plan is written beside the
// journal, then one conditional request per key, in path order; a
// refusal takes back those done, newest first, each conditioned on the
// version it wrote, and the call is a conflict. Readers may see a mix
// while it commits (a store has no transaction): all or none holds once
// the call returns, or once the next call on the root has taken back a
// batch a crash interrupted (recoverObject). Another writer's update is
// never lost: every request is conditioned on what was checked.

// objItem is what an object batch item holds besides batchItem's.
type objItem struct {
	body  []byte     // the new content (put)
	cond  ObjectCond // what the commit asks of the key
	prior *Object    // the version it replaces (nil: none)
	old   []byte     // the prior content, when the journal does not keep it
	wrote string     // the version the commit made (put), for a rollback
	done  bool       // committed
}

// putObjectItem stages content for an object target: it stays in memory
// until the commit (at most max bytes).
func (b *Batch) putObjectItem(w *WriteTarget, r io.Reader, max int64, o CommitOptions) error {
	if err := noModes(w, o); err != nil {
		return err
	}
	body, err := io.ReadAll(io.LimitReader(r, satAdd(max, 1)))
	if err != nil {
		return ioErr(w.Path, err)
	}
	if int64(len(body)) > max {
		return overWriteCap(w.Path, max)
	}
	// Nothing in a store stops a key below another's name: a batch never
	// puts a file and a directory of one name.
	for _, it := range b.items {
		if it.w.rt == w.rt && !it.del {
			a, k := it.w.key(), w.key()
			if strings.HasPrefix(k, a+"/") || strings.HasPrefix(a, k+"/") {
				return fserr.Errorf(fserr.CodeExists, w.Path, "%s and %s: a file and a directory would share a name: nothing was changed", it.w.Path, w.Path)
			}
		}
	}
	sum := sha256.Sum256(body)
	it := &batchItem{w: w, o: o, ob: &objItem{body: body},
		res: ReplaceResult{Bytes: int64(len(body)), SHA256: hex.EncodeToString(sum[:])}}
	b.items = append(b.items, it)
	return nil
}

// commitObjects is commitIn for a batch of object targets.
func (b *Batch) commitObjects(tx *Tx) ([]ReplaceResult, error) {
	s := b.s
	ctx := s.context()
	items := slices.Clone(b.items)
	slices.SortStableFunc(items, func(x, y *batchItem) int {
		return strings.Compare(x.w.rt.abs(x.w.rootRel()), y.w.rt.abs(y.w.rootRel()))
	})
	tx.at("batch.checked")
	for _, it := range items {
		o := it.w.rt.st.(*objectRoot)
		c, prior, err := o.condition(ctx, it.w, it.o.Expect, false)
		if err != nil {
			return nil, err
		}
		it.ob.cond, it.ob.prior = c, prior
		if it.del && prior == nil {
			return nil, fserr.Errorf(fserr.CodeConflict, it.w.Path, "%s is gone: nothing was changed", it.w.Path)
		}
	}
	// What each key holds is kept, [store] concurrency copies at once.
	stored := make([]int64, len(items))
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	slots := make(chan struct{}, s.policy.Store.Concurrency)
	for i, it := range items {
		if it.ob.prior == nil {
			continue
		}
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			it.before, stored[i], errs[i] = s.keepVersion(it.w.rt.st.(*objectRoot), it.w.key(), *it.ob.prior, it.w.Path)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, firstErr(errs)
	}
	var total int64
	for i, it := range items {
		total += stored[i]
		if j := tx.journal(); it.ob.prior != nil && (j == nil || j.unkept) {
			// Nothing to take a rollback from: the prior content is
			// read now.
			var err error
			if it.ob.old, err = it.w.rt.st.(*objectRoot).versionBytes(ctx, it.w, it.ob.prior.Version); err != nil {
				return nil, err
			}
		}
	}
	// The plan stays when a rollback could not take everything back: the
	// next change on the root finishes it.
	keepPlan := false
	if tx.journal() != nil && len(items) > 1 {
		name, js, err := s.writeObjectPlan(items)
		if err != nil {
			return nil, err
		}
		defer func() {
			if keepPlan {
				return
			}
			for _, j := range js {
				j.donePlan(name)
			}
		}()
	}
	tx.at("batch.planned")
	for i, it := range items {
		if err := it.commitObject(tx); err != nil {
			rctx, cancel := uncapped(ctx)
			defer cancel()
			for k := i - 1; k >= 0; k-- {
				if rerr := items[k].rollBack(rctx, tx); rerr != nil {
					keepPlan = true
				}
			}
			return nil, err
		}
		tx.at("batch.swapped")
	}
	b.done = true
	for _, it := range b.items {
		pc := PathChange{Path: it.w.Rel(), Before: it.before}
		if !it.del {
			pc.After = &FileState{Type: "file", SHA256: it.res.SHA256, Size: it.res.Bytes, Mode: it.mode}
		}
		tx.note(pc)
		s.trail.bytesWritten.Add(it.res.Bytes)
	}
	tx.stored(total)
	tx.Made()
	out := make([]ReplaceResult, len(b.items))
	for i, it := range b.items {
		out[i] = it.res
	}
	return out, nil
}

// versionBytes reads the version ver of w's key whole.
func (o *objectRoot) versionBytes(ctx context.Context, w *WriteTarget, ver string) ([]byte, error) {
	body, _, err := o.obj.Get(ctx, w.key(), 0, -1, ver)
	if err != nil {
		return nil, keptErr(w.Path, err)
	}
	defer body.Close()
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, ioErr(w.Path, err)
	}
	return b, nil
}

// commitObject makes one item's request on its condition.
func (it *batchItem) commitObject(tx *Tx) error {
	w, o := it.w, it.w.rt.st.(*objectRoot)
	ctx := tx.s.context()
	c := it.ob.cond
	if it.del {
		if err := o.obj.Delete(ctx, w.key(), it.ob.prior.Version); err != nil {
			if errors.Is(err, ErrPrecondition) {
				return fserr.Errorf(fserr.CodeConflict, w.Path, "%s was changed by another writer during the commit: nothing was changed", w.Path)
			}
			return ioErr(w.Path, err)
		}
		it.ob.done = true
		return nil
	}
	body := it.ob.body
	ob, err := o.obj.Put(ctx, w.key(), bytes.NewReader(body), int64(len(body)), sha256.Sum256(body), c)
	if err != nil {
		return refused(w, c, err, "changed")
	}
	it.ob.wrote, it.ob.done = ob.Version, true
	return nil
}

// rollBack takes one committed item back, on condition that its key
// still holds what the commit made (another writer's update stays).
func (it *batchItem) rollBack(ctx context.Context, tx *Tx) error {
	if it.ob == nil || !it.ob.done {
		return nil
	}
	w, o := it.w, it.w.rt.st.(*objectRoot)
	prior := it.ob.prior
	var err error
	if prior == nil { // made by the commit: removed again
		err = o.obj.Delete(ctx, w.key(), it.ob.wrote)
	} else {
		old := it.ob.old
		if old == nil && it.before != nil {
			if old, err = tx.journal().verifiedIn(ctx, it.before.SHA256, prior.Size); err != nil {
				return err
			}
		}
		c := ObjectCond{IfVersion: it.ob.wrote}
		if it.del {
			c = ObjectCond{IfAbsent: true}
		}
		_, err = o.obj.Put(ctx, w.key(), bytes.NewReader(old), int64(len(old)), sha256.Sum256(old), c)
	}
	if errors.Is(err, ErrPrecondition) {
		return nil // another writer came after the commit: theirs stays
	}
	return err
}

// writeObjectPlan writes an object batch's plan: each key, what it held
// (by the journal's copy) and what the batch puts there.
func (s *Sandbox) writeObjectPlan(items []*batchItem) (string, []*journal, error) {
	var pl []planItem
	js := []*journal{s.jn.cur}
	for _, it := range items {
		pi := planItem{Root: it.w.rt.dir, Dir: it.w.dirRel, Name: it.w.Name, Kind: "object"}
		if it.before != nil {
			pi.Before = it.before.SHA256
		}
		if !it.del {
			pi.After = it.res.SHA256
		}
		pl = append(pl, pi)
		js = append(js, it.w.rt.jn)
	}
	return s.putPlanItems(pl, js)
}

// recoverObject takes back one key of a batch a crash interrupted: a key
// that holds what the batch put there gets back what it held before (the
// journal's copy, only when its sha256 is the plan's), conditioned on
// the version found; a key the batch removed gets its content back if
// the name is still free. Anything else there is another writer's, and
// stays.
func (s *Sandbox) recoverObject(j *journal, rt *root, it planItem) error {
	o, ok := rt.st.(*objectRoot)
	if !ok {
		return fmt.Errorf("the plan names %s as an object root, which it is not", rt.dir)
	}
	key := path.Join(it.Dir, it.Name)
	if cleanRel(key) != key || path.IsAbs(key) || strings.HasPrefix(key, "../") || key == ".." {
		return errors.New("the plan names a key outside the root")
	}
	ctx := s.context()
	cur, err := o.obj.Head(ctx, key)
	absent := errors.Is(err, fs.ErrNotExist)
	if err != nil && !absent {
		return err
	}
	restore := func(c ObjectCond) error {
		if it.Before == "" {
			if c.IfVersion != "" {
				return o.obj.Delete(ctx, key, c.IfVersion)
			}
			return nil
		}
		old, err := j.verified(it.Before, s.Limits().MaxWriteBytes)
		if err != nil {
			return err
		}
		_, err = o.obj.Put(ctx, key, bytes.NewReader(old), int64(len(old)), sha256.Sum256(old), c)
		if errors.Is(err, ErrPrecondition) {
			return nil // another writer came: theirs stays
		}
		return err
	}
	switch {
	case it.After == "" && absent:
		return restore(ObjectCond{IfAbsent: true})
	case it.After == "" || absent:
		return nil
	}
	sum := cur.SHA256
	if sum == "" {
		body, _, err := o.obj.Get(ctx, key, 0, -1, cur.Version)
		if err != nil {
			return err
		}
		h := sha256.New()
		_, err = io.Copy(h, body)
		body.Close()
		if err != nil {
			return err
		}
		sum = hex.EncodeToString(h.Sum(nil))
	}
	if sum != it.After {
		return nil // not the batch's: it never got there, or another writer came after
	}
	return restore(ObjectCond{IfVersion: cur.Version})
}

// verified reads the prior content sum kept in j, whole, and only when
// it still hashes to sum: a damaged copy is never restored.
func (j *journal) verified(sum string, max int64) ([]byte, error) {
	return j.verifiedIn(nil, sum, max)
}

// verifiedIn is verified with the requests of a journal in the store made
// in ctx (nil: the call's).
func (j *journal) verifiedIn(ctx context.Context, sum string, max int64) ([]byte, error) {
	if len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" {
		return nil, fserr.Errorf(fserr.CodeNotFound, "", "the journal holds no content %q", sum)
	}
	var b []byte
	var err error
	if ctx != nil && j.ob != nil {
		b, err = getAll(ctx, j.ob, objObjects+sum, max)
	} else {
		b, err = j.content(sum, max)
	}
	if err != nil {
		return nil, err
	}
	if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != sum {
		return nil, fserr.Errorf(fserr.CodeIO, "", "the kept content %s is damaged in the journal: it cannot be restored", sum)
	}
	return b, nil
}

// firstErr is the first error of errs.
func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
