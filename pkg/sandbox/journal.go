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
	"sync"
)

// The journal is a directory outside every root, one per workdir, where
// fsbox keeps what it needs to finish a change a crash interrupted: before
// a Batch swaps its first file in, it writes the plan there (and syncs
// it); the next call that changes the workdir finds an unfinished plan
// under the write lock and completes it. No command of fsbox can reach the
// journal: it lies outside every root, and a policy that puts it inside
// one is refused.
type journal struct {
	dir string   // canonical
	r   *os.Root // every access goes through r
}

// journalState is where a sandbox's journal lives and, once opened, the
// journal; one per sandbox, shared by its views.
type journalState struct {
	mu   sync.Mutex // guards open
	dir  string     // where it lives, "" when off
	off  string     // why it is off
	open *journal   // nil until first needed
	// readsOnly: Restrict leaves the journal closed (ReadsOnly).
	readsOnly bool
}

// JournalStatus is what roots reports about the journal.
type JournalStatus struct {
	Enabled bool   `json:"enabled"`
	Dir     string `json:"dir,omitempty"`
	Reason  string `json:"reason,omitempty"` // why it is off
}

// Journal reports where the journal is, or why there is none.
func (s *Sandbox) Journal() JournalStatus {
	if s.jn.dir == "" {
		return JournalStatus{Reason: s.jn.off}
	}
	if j := s.jn.open; j != nil {
		return JournalStatus{Enabled: true, Dir: j.dir}
	}
	return JournalStatus{Enabled: true, Dir: s.jn.dir}
}

// findJournal decides where the workdir's journal lives, without
// touching the disk: the policy's dir, or the default, a directory named
// by a hash of the workdir under fsbox's state directory. An explicit dir
// inside a root is a config error; a default that falls inside a root (a
// workdir of $HOME, say) turns the journal off, with the reason. The
// directory is made and opened on first need (openJournal).
func (s *Sandbox) findJournal() error {
	p := s.policy
	if !p.Journal.Enabled {
		s.jn.off = "switched off by the policy ([journal] enabled = false)"
		return nil
	}
	dir := p.Journal.Dir
	if dir == "" {
		state := p.Journal.State
		if state == "" {
			state = StateDir(Env{Getenv: os.LookupEnv, Home: s.home})
		}
		if state == "" {
			s.jn.off = "no state directory: neither $XDG_STATE_HOME nor a home directory is known"
			return nil
		}
		sum := sha256.Sum256([]byte(s.work.dir))
		dir = filepath.Join(state, "journal", hex.EncodeToString(sum[:8]))
	}
	s.jn.dir = canonical(dir)
	return s.journalInside(dir)
}

// journalInside refuses a journal at, below or above a root, its name
// followed component by component (a symlink on the way into a root, or
// lying in one, counts).
func (s *Sandbox) journalInside(d string) error {
	real := canonical(d)
	for _, r := range s.roots {
		if within(real, r.dir) || within(r.dir, real) || reachesInto(filepath.Clean(d), []string{r.dir}) != "" {
			if s.policy.Journal.Dir != "" {
				return Errorf(CodeConfig, s.policy.Source, "%s: [journal] dir %s overlaps the root %s: fsbox's commands could reach its own journal; put it outside every root", s.policy.Source, d, r.dir)
			}
			s.jn.dir = ""
			s.jn.off = fmt.Sprintf("its default place %s overlaps the root %s; set [journal] dir outside every root", d, r.dir)
			return nil
		}
	}
	return nil
}

// openJournal makes and opens the journal directory (mode 0700) the first
// time a call needs it: before Landlock is applied, and before the first
// change. A default place that cannot be made turns the journal off.
func (s *Sandbox) openJournal() error {
	if s.jn.open != nil || s.jn.dir == "" {
		return nil
	}
	explicit := s.policy.Journal.Dir != ""
	fail := func(err error) error {
		if explicit {
			return Errorf(CodeConfig, s.policy.Source, "%s: [journal] dir %s: %v", s.policy.Source, s.jn.dir, unwrapPathErr(err))
		}
		s.jn.off = fmt.Sprintf("its default place %s cannot be used: %v", s.jn.dir, unwrapPathErr(err))
		s.jn.dir = ""
		return nil
	}
	if err := os.MkdirAll(s.jn.dir, 0o700); err != nil {
		return fail(err)
	}
	real, err := filepath.EvalSymlinks(s.jn.dir)
	if err != nil {
		return fail(err)
	}
	if err := s.journalInside(real); err != nil || s.jn.dir == "" {
		return err
	}
	r, err := os.OpenRoot(real)
	if err != nil {
		return fail(err)
	}
	if err := r.MkdirAll("pending", 0o700); err != nil {
		r.Close()
		return fail(err)
	}
	s.jn.open = &journal{dir: real, r: r}
	return nil
}

// ReadsOnly says the calls on this sandbox only read: Restrict then does
// not make and open the journal (a read-only call at every start would
// pay for it). A change attempted anyway after Landlock finds no journal
// and is not recorded.
func (s *Sandbox) ReadsOnly() { s.jn.readsOnly = true }

// useJournal opens the journal if it is not open yet (under journalMu:
// views of one sandbox share it).
func (s *Sandbox) useJournal() error {
	if s.jn.dir == "" {
		return nil
	}
	s.jn.mu.Lock()
	defer s.jn.mu.Unlock()
	return s.openJournal()
}

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
	Kind  string `json:"kind"`           // "exchange", "new" or "delete"
	After string `json:"after,omitempty"`
}

// writePlan records a batch's plan durably and returns its name.
func (j *journal) writePlan(items []*batchItem) (string, error) {
	var pl plan
	for _, it := range items {
		kind := "new"
		switch {
		case it.del:
			kind = "delete"
		case it.w.Exists:
			kind = "exchange"
		}
		pi := planItem{Dir: it.w.dirRel, Name: it.w.Name, Tmp: it.tmp, Kind: kind, After: it.res.SHA256}
		if !it.w.rt.work {
			pi.Root = it.w.rt.dir
		}
		pl.Items = append(pl.Items, pi)
	}
	b, err := json.Marshal(pl)
	if err != nil {
		return "", err
	}
	name := path.Join("pending", tempName()[len(tempPrefix):]+".json")
	f, err := j.r.OpenFile(name+".part", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
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
		return "", err
	}
	return name, nil
}

// donePlan drops a plan whose batch finished (or was rolled back).
func (j *journal) donePlan(name string) {
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

// recover finishes every unfinished plan: it runs under the workdir's
// write lock (change), before the call's own change. A plan's staged
// files were complete and synced before it was written, so each one is
// carried forward: a file not yet swapped is swapped now, a deletion not
// yet made is made, and the leftover temporary files are removed.
func (s *Sandbox) recover(held []*root) error {
	j := s.jn.open
	for _, pp := range j.pendingPlans() {
		if pp.err != nil {
			return Errorf(CodeIO, j.dir, "the journal's unfinished change %s cannot be read: %v", pp.name, pp.err)
		}
		// Only a plan whose every root this change holds the lock of is
		// finished here; another (a root this policy does not have, or a
		// plan written after this change read the list) waits for a call
		// that holds them all, untouched.
		if !s.holdsAll(pp.plan, held) {
			continue
		}
		for _, it := range pp.plan.Items {
			if err := s.recoverItem(it); err != nil {
				return Errorf(CodeIO, path.Join(it.Dir, it.Name), "finishing an interrupted change to %s: %v", path.Join(it.Dir, it.Name), err)
			}
		}
		j.donePlan(path.Join("pending", pp.name))
	}
	return nil
}

// pendingPlan is one unfinished change found in the journal.
type pendingPlan struct {
	name string
	plan plan
	err  error
}

// pendingPlans reads the journal's unfinished changes (a plan never
// finished writing is removed: its batch never started).
func (j *journal) pendingPlans() []pendingPlan {
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
			j.r.Remove(path.Join("pending", n))
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

// planRoot is the writable root a plan item names (nil when this policy
// has no such writable root).
func (s *Sandbox) planRoot(it planItem) *root {
	if it.Root == "" {
		return s.work
	}
	for _, r := range s.roots {
		if r.writable && r.dir == it.Root {
			return r
		}
	}
	return nil
}

// holdsAll: every root pl names is one of held.
func (s *Sandbox) holdsAll(pl plan, held []*root) bool {
	for _, it := range pl.Items {
		rt := s.planRoot(it)
		if rt == nil || !slices.Contains(held, rt) {
			return false
		}
	}
	return true
}

// planRoots are the writable roots of this policy that the journal's
// unfinished changes name: change takes their locks too, so recovery
// never changes a root another process holds.
func (s *Sandbox) planRoots() []*root {
	j := s.jn.open
	if j == nil {
		return nil
	}
	var out []*root
	for _, pp := range j.pendingPlans() {
		for _, it := range pp.plan.Items {
			if rt := s.planRoot(it); rt != nil && !slices.Contains(out, rt) {
				out = append(out, rt)
			}
		}
	}
	return out
}

// recoverItem carries one planned change forward.
func (s *Sandbox) recoverItem(it planItem) error {
	if !validName(it.Name) || !validName(it.Tmp) || !strings.HasPrefix(it.Tmp, tempPrefix) || path.IsAbs(it.Dir) || strings.HasPrefix(path.Clean(it.Dir), "..") {
		return errors.New("the plan names a path outside the workdir")
	}
	rt := s.planRoot(it)
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
	w := &WriteTarget{s: s, rt: rt, dir: sub, dirF: dirF, dirRel: it.Dir, Name: it.Name}
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

// validName: one path component, not "." or "..".
func validName(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.ContainsAny(n, "/\x00")
}

// Quiet returns a view of s (as ForCall) whose changes the journal does
// not record: undo's own renames and directories, which the undo's one
// record describes.
func (s *Sandbox) Quiet() *Sandbox {
	v := s.ForCall()
	v.quiet = true
	return v
}

// EntryState describes what p holds now, as the journal would record it
// (nil: absent); a regular file is hashed.
func (s *Sandbox) EntryState(p string) (*FileState, error) {
	w, err := s.OpenEntry(p)
	if e := AsError(err); err != nil && e.Code == CodeNotFound {
		return nil, nil // its directory is gone too
	}
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if !w.Exists {
		return nil, nil
	}
	switch w.Info.Type {
	case "dir":
		return &FileState{Type: "dir"}, nil
	case "symlink":
		target, err := w.dir.Readlink(w.Name)
		if err != nil {
			return nil, ioErr(w.Path, err)
		}
		return &FileState{Type: "symlink", Target: target}, nil
	case "file":
		f, err := openNoFollow(w, w.Name, openReadFlags, 0)
		if err != nil {
			return nil, noFollowErr(err, w.Path)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return nil, ioErr(w.Path, err)
		}
		if err := s.checkFileDesc(fi, w.Path); err != nil {
			return nil, err
		}
		sum, err := hashReader(f, w.Path)
		if err != nil {
			return nil, err
		}
		return &FileState{Type: "file", SHA256: sum, Size: fi.Size(), Mode: fmt.Sprintf("%04o", fi.Mode().Perm())}, nil
	}
	return &FileState{Type: w.Info.Type}, nil
}

// RemoveEmptyDir removes the directory w if it is empty (undo of mkdir).
func (s *Sandbox) RemoveEmptyDir(w *WriteTarget) error {
	return s.change([]*WriteTarget{w}, nil, func() error {
		if err := w.dir.Remove(w.Name); err != nil {
			return Errorf(CodeConflict, w.Path, "%s is not empty (or gone): it stays", w.Path)
		}
		return w.dirF.Sync()
	})
}

// Recover finishes a change a crash interrupted, if the journal holds
// one (every call that changes the workdir does this first, under the
// write lock).
func (s *Sandbox) Recover() error {
	return s.change(nil, []*root{s.work}, func() error { return nil })
}
