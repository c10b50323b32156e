package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// Plans: what a batch writes before its first swap, so that a crash
// between two swaps is carried forward by the next change.

// plan is a Batch's changes, written before the first swap so that a
// later call can finish them after a crash.
type plan struct {
	Items []planItem `json:"items"`
}

type planItem struct {
	Root  string `json:"root,omitempty"` // the writable root, canonical; "" for the workdir
	Dir   string `json:"dir"`            // the parent's real path, relative to its root
	Name  string `json:"name"`           // the target's name in it
	Tmp   string `json:"tmp"`            // the staged file (put), or the old file's new name (delete)
	Kind  string `json:"kind"`           // "exchange", "new", "delete" or "tree" (a tree copy's stage, Tmp)
	After string `json:"after,omitempty"`
	// Before (kind "object") is the sha256 of what the key held, as the
	// journal kept it ("" when it held nothing).
	Before string `json:"before,omitempty"`
}

// writePlan records a batch's plan durably, in the journal the change
// records in and in that of every other root the batch touches (one name
// in each: a policy holding any of those roots sees the plan), and
// returns its name and the journals holding it.
func (s *Sandbox) writePlan(items []*batchItem) (string, []*journal, error) {
	var pl []planItem
	js := []*journal{s.jn.cur}
	for _, it := range items {
		kind := "new"
		switch {
		case it.del:
			kind = "delete"
		case it.w.Exists:
			kind = "exchange"
		}
		pl = append(pl, planItem{Root: it.w.rt.dir, Dir: it.w.dirRel, Name: it.w.Name, Tmp: it.tmp, Kind: kind, After: it.res.SHA256})
		js = append(js, it.w.rt.jn)
	}
	return s.putPlanItems(pl, js)
}

// putPlanItems writes a plan of items durably in each of the journals js
// (nil and repeated ones left out) and returns its name and the journals
// holding it.
func (s *Sandbox) putPlanItems(items []planItem, all []*journal) (string, []*journal, error) {
	var js []*journal
	for _, j := range all {
		if j != nil && !slices.Contains(js, j) {
			js = append(js, j)
		}
	}
	b, err := json.Marshal(plan{Items: items})
	if err != nil {
		return "", nil, err
	}
	name := path.Join("pending", tempName()[len(tempPrefix):]+".json")
	for i, j := range js {
		if err := j.putPlan(name, b); err != nil {
			for _, k := range js[:i] {
				k.donePlan(name)
			}
			return "", nil, fserr.Errorf(fserr.CodeIO, j.dir, "the journal %s cannot take the change's plan: %v", j.dir, err)
		}
	}
	return name, js, nil
}

// putPlan writes one copy of a plan (synced, renamed into place, the
// directory synced).
func (j *journal) putPlan(name string, b []byte) error {
	if j.ob != nil {
		return j.objPutPlan(name, b)
	}
	if err := j.r.MkdirAll("pending", 0o700); err != nil {
		return err
	}
	f, err := j.r.OpenFile(name+".part", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err = f.Write(b); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = j.r.Rename(name+".part", name)
	}
	if err == nil {
		err = j.syncDir("pending")
	}
	if err != nil {
		j.r.Remove(name + ".part")
	}
	return err
}

// donePlan drops a plan whose batch finished (or was rolled back).
func (j *journal) donePlan(name string) {
	if j.ob != nil {
		if name != "" {
			j.objDonePlan(name)
		}
		return
	}
	if name != "" {
		j.r.Remove(name)
		j.syncDir("pending")
	}
}

func (j *journal) syncDir(name string) error {
	d, err := j.r.Open(name)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// recover finishes the unfinished plans of the roots this change holds
// (held: it runs under their locks, before the call's own change). A
// plan's staged files were complete and synced before it was written, so
// each one is carried forward: a file not yet swapped is swapped now, a
// deletion not yet made is made, and the leftover temporary files are
// removed. A plan this policy may not finish (a root it lacks or does not
// hold now, a path it may not write now) is left untouched; a change
// whose targets overlap one is a conflict, a disjoint one goes ahead.
func (s *Sandbox) recover(held []*root, claims []*target) error {
	done := map[string]bool{}
	for _, rt := range held {
		j := rt.jn
		if j == nil {
			continue
		}
		for _, pp := range j.pendingPlans(true) {
			if done[pp.name] {
				continue
			}
			if pp.err != nil {
				return fserr.Errorf(fserr.CodeIO, j.dir, "the journal's unfinished change %s cannot be read: %v", pp.name, pp.err)
			}
			if !s.mayFinish(j, pp.plan, held) {
				if p := s.overlap(j, pp.plan, claims); p != "" {
					return fserr.Errorf(fserr.CodeConflict, p, "an interrupted change to %s is pending that this policy may not finish (roots counts it in recovery_pending): the policy that made it finishes it on its next change", p)
				}
				continue
			}
			for _, it := range pp.plan.Items {
				if err := s.recoverItem(j, it); err != nil {
					return fserr.Errorf(fserr.CodeIO, path.Join(it.Dir, it.Name), "finishing an interrupted change to %s: %v", path.Join(it.Dir, it.Name), err)
				}
			}
			done[pp.name] = true
			for _, h := range held {
				if h.jn != nil {
					h.jn.donePlan(path.Join("pending", pp.name))
				}
			}
		}
	}
	return nil
}

// mayFinish: every root pl names is one of held, and the policy in force
// may write every path it names (as the door decides it now).
func (s *Sandbox) mayFinish(j *journal, pl plan, held []*root) bool {
	for _, it := range pl.Items {
		rt := s.planRoot(j, it)
		if rt == nil || !slices.Contains(held, rt) || !s.mayWrite(s.shownAbs(rt.abs(path.Join(it.Dir, it.Name)))) {
			return false
		}
	}
	return true
}

// overlap is the first path of pl that is, holds or lies in one of ws
// ("": none).
func (s *Sandbox) overlap(j *journal, pl plan, claims []*target) string {
	for _, it := range pl.Items {
		dir := it.Root
		if dir == "" {
			dir = j.rt.dir
		}
		p := filepath.Join(dir, filepath.FromSlash(path.Join(it.Dir, it.Name)))
		if policy.IsObjectURL(dir) {
			p = joinName(dir, path.Join(it.Dir, it.Name))
		}
		for _, c := range claims {
			q := c.rt.abs(c.rel)
			if policy.Within(p, q) || policy.Within(q, p) {
				return s.shownAbs(p)
			}
		}
	}
	return ""
}

// unfinishable is the names of the unfinished plans in this policy's
// journals that it may not finish.
func (s *Sandbox) unfinishable() []string {
	var out []string
	for _, j := range s.journals() {
		for _, pp := range j.pendingPlans(false) {
			if !slices.Contains(out, pp.name) && (pp.err != nil || !s.mayFinish(j, pp.plan, s.writable())) {
				out = append(out, pp.name)
			}
		}
	}
	return out
}

// pendingPlan is one unfinished change found in the journal.
type pendingPlan struct {
	name string
	plan plan
	err  error
}

// pendingPlans reads the journal's unfinished changes (clean: a plan
// never finished writing is removed, its batch never started).
func (j *journal) pendingPlans(clean bool) []pendingPlan {
	if j.ob != nil {
		return j.objPlans()
	}
	d, err := j.r.Open("pending")
	if err != nil {
		return nil
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil
	}
	var out []pendingPlan
	for _, n := range names {
		if !strings.HasSuffix(n, ".json") {
			if clean {
				j.r.Remove(path.Join("pending", n))
			}
			continue
		}
		pp := pendingPlan{name: n}
		b, err := j.r.ReadFile(path.Join("pending", n))
		if err == nil {
			err = json.Unmarshal(b, &pp.plan)
		}
		pp.err = err
		out = append(out, pp)
	}
	return out
}

// planRoot is the writable root a plan item of j names (nil when this
// policy has no such writable root); "" is j's own (the layout before
// identities wrote it for the workdir, whose journal j then is).
func (s *Sandbox) planRoot(j *journal, it planItem) *root {
	if it.Root == "" {
		return j.rt
	}
	for _, r := range s.roots {
		if r.writable && r.dir == it.Root {
			return r
		}
	}
	return nil
}

// planRoots are the writable roots of this policy that its journals'
// unfinished changes name: change takes their locks too, so recovery
// never changes a root another process holds.
func (s *Sandbox) planRoots() []*root {
	var out []*root
	for _, j := range s.journals() {
		for _, pp := range j.pendingPlans(false) {
			for _, it := range pp.plan.Items {
				if rt := s.planRoot(j, it); rt != nil && !slices.Contains(out, rt) {
					out = append(out, rt)
				}
			}
		}
	}
	return out
}

// recoverItem carries one planned change of j forward.
func (s *Sandbox) recoverItem(j *journal, it planItem) error {
	if it.Kind == "object" {
		rt := s.planRoot(j, it)
		if rt == nil {
			return fmt.Errorf("the plan names %s, which is not a writable root of this policy", it.Root)
		}
		return s.recoverObject(j, rt, it)
	}
	if !validName(it.Name) || !validName(it.Tmp) || !strings.HasPrefix(it.Tmp, tempPrefix) || path.IsAbs(it.Dir) || strings.HasPrefix(path.Clean(it.Dir), "..") {
		return errors.New("the plan names a path outside the workdir")
	}
	rt := s.planRoot(j, it)
	if rt == nil {
		return fmt.Errorf("the plan names %s, which is not a writable root of this policy", it.Root)
	}
	sub, err := openRoot(rt.r, it.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // its directory is gone: nothing left to finish
	}
	if err != nil {
		return err
	}
	defer sub.Close()
	dirF, err := sub.Open(".")
	if err != nil {
		return err
	}
	defer dirF.Close()
	w := &WriteTarget{s: s, rt: rt, posixTarget: posixTarget{dir: sub, dirF: dirF}, dirRel: it.Dir, Name: it.Name}
	have := func(name string) string {
		f, err := openNoFollow(w, name, openReadFlags, 0)
		if err != nil {
			return ""
		}
		defer f.Close()
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			return ""
		}
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return ""
		}
		return hex.EncodeToString(h.Sum(nil))
	}
	switch it.Kind {
	case "tree":
		// A tree copy's stage: before its rename it is removed whole (the
		// copy never happened); after it, the name is gone and the copy
		// is whole.
		if err := removeStage(sub, it.Tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return dirF.Sync()
	case "exchange":
		if have(it.Name) != it.After && have(it.Tmp) == it.After {
			if err := exchangeAt(w, it.Tmp); err != nil {
				return err
			}
		}
	case "new":
		if have(it.Name) != it.After && have(it.Tmp) == it.After {
			if err := renameNoReplaceFrom(w, it.Tmp, it.Name); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
		}
	case "delete":
		if _, err := sub.Lstat(it.Tmp); errors.Is(err, fs.ErrNotExist) {
			if err := renameNoReplaceFrom(w, it.Name, it.Tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	default:
		return fmt.Errorf("unknown kind %q", it.Kind)
	}
	if err := sub.Remove(it.Tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return dirF.Sync()
}
