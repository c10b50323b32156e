//go:build unix

package ops

// The sequence property of issue 26 ("the journal behind the door"): the
// journal answers through the policy in force and belongs to one root.
// Random sequences of changes (write, append, edit, rm -r, mv, cp, mkdir,
// multi-file patch) mixed with history (with and without PATH, with a
// limit), undo (newest, by id, by ids taken from another policy's
// history, redo: undo of an undo) and purge, checked after every step
// with whole-tree snapshots (plain os calls):
//
//   - TestPropertyJournalTenants: two or three tenants, their policy
//     loaded from one file (workdir = ".../users/${FSBOX_TENANT}", one
//     explicit [journal] dir outside every root, shared). A tenant's
//     history never names another tenant's tree (its workdir, its names)
//     nor shows a hash or size of content that was ever there: every
//     sha256 it shows is of content that was in its own tree, with that
//     content's size. A tenant's step never changes a byte of another
//     tenant's tree, nor its history (so no record of it is removed).
//   - TestPropertyJournalStrict: a loose policy (the default: no deny
//     rule) and a strict one (deny **/.env and **/secret*, sometimes
//     private/**; write_deny locked/**, sometimes **/*.lock) on one
//     workdir, one journal. Under the strict policy history is exactly
//     the loose policy's history filtered by a reference of the rules
//     (paths it may not read left out and counted in hidden, a change
//     with nothing left left out, a move with one hidden end shown as an
//     add or a delete, bytes recomputed); besides, its JSON holds no name
//     it denies, no sha256 of content that was only ever at a path it
//     denies, and no size but that of content it shows; history of a
//     denied path is denied. Every step of the strict policy changes only
//     what its rules let it write; its undo of a change naming a path it
//     may not write is denied, whole, and names no denied path; its purge
//     removes exactly the records whose every path it may write (the
//     loose policy's history before and after is the witness). A call
//     that fails, of either policy, changes nothing.
//   - TestPropertyJournalCrashPlans: in a few sequences of the strict
//     property, a child process under the loose policy runs a multi-file
//     patch touching a path the strict policy may not write and exits at
//     the seam "batch.planned" (the plan written, nothing swapped). Then
//     the strict policy's steps leave every file of the plan untouched,
//     roots counts the plan in recovery_pending, a change overlapping it
//     is conflict and a disjoint one goes ahead; the loose policy's next
//     change finishes it (the files hold the patch's result, nothing is
//     pending, no temporary file is left).
//
// Bounded by count: FSBOX_PROPERTY_N sequences each (default 20, 5 with
// -short) of FSBOX_PROPERTY_STEPS steps (default 30); the crash test
// runs FSBOX_PROPERTY_CRASHES sequences with a crashed child each
// (default 4, 2 with -short). FSBOX_PROPERTY_SEED fixes the seed; a
// failure prints it with the policies and the steps, and
// FSBOX_PROPERTY_SEED=<seed> FSBOX_PROPERTY_N=1 (FSBOX_PROPERTY_CRASHES=1)
// replays that sequence; FSBOX_PROPERTY_LOG=1 with -v prints the steps
// of the sequences that pass.
//
// Checked on f2182fc by reverting each fix of issue 26 by hand (not
// committed), in a copy of the tree:
//
//   - every root's journal in one subdirectory (openRootJournal naming
//     it "shared" and journalAt skipping the identity check): the tenant
//     test fails at a tenant's first change, another tenant's history
//     showing its names and the sha256 of its content;
//   - visibleChange returning the change unfiltered: the strict test
//     fails at the loose policy's first change to a path the strict one
//     denies, its history naming .env or secret*;
//   - and beside them: bytes not recomputed, a move with one hidden end
//     shown whole, purge ignoring the policy, recovery finishing any
//     plan, no overlap conflict, recovery_pending always 0: each fails
//     within the default run.
//
// Two bugs it found are still open and let through, counted in the
// outcomes as KNOWN (knownUndoTreeName, knownUndoDirNotEmpty below).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// journalBounds are the sequence counts, steps and seed of the journal
// properties.
func journalBounds(t *testing.T) (n, steps int, seed uint64) {
	n = envInt("FSBOX_PROPERTY_N", 20)
	if testing.Short() && os.Getenv("FSBOX_PROPERTY_N") == "" {
		n = 5
	}
	steps = envInt("FSBOX_PROPERTY_STEPS", 30)
	seed = uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("FSBOX_PROPERTY_SEED"), 10, 64); err == nil {
		seed = v
	}
	return n, steps, seed
}

// jActor is one policy acting on its workdir.
type jActor struct {
	name  string
	sb    *sandbox.Sandbox
	work  string    // canonical workdir (its only writable root)
	pol   refPolicy // its rules, for the reference matcher
	files []string  // file names its steps pick
	dirs  []string  // directory names its steps pick
	// ids are the change ids its last history showed; redo the change
	// ids of undos (any actor's), to undo again.
	ids  []string
	redo []string
	// Tenants: snap and hist are its tree and its history's JSON after
	// its last step; known the size of every content (by sha256) that
	// was ever in its tree.
	snap  map[string]snapEntry
	hist  string
	known map[string]int64
}

// jseq is one sequence of a journal property.
type jseq struct {
	t      *testing.T
	seed   uint64
	r      *rand.Rand
	base   string
	actors []*jActor
	log    []string
	failed bool
	// outcomes counts "op outcome" over every sequence of the test.
	outcomes map[string]int
}

// done logs the sequence's steps with FSBOX_PROPERTY_LOG=1 (and -v).
func (s *jseq) done() {
	if os.Getenv("FSBOX_PROPERTY_LOG") != "" && !s.failed {
		s.t.Logf("seed %d:\n  %s", s.seed, strings.Join(s.log, "\n  "))
	}
}

func (s *jseq) fail(format string, args ...any) {
	if s.failed {
		return
	}
	s.failed = true
	var pols []string
	for _, a := range s.actors {
		p, _ := json.Marshal(a.pol)
		pols = append(pols, fmt.Sprintf("  %s: workdir %s: %s", a.name, a.work, p))
	}
	count := "FSBOX_PROPERTY_N"
	if strings.Contains(s.t.Name(), "Crash") {
		count = "FSBOX_PROPERTY_CRASHES"
	}
	s.t.Errorf("%s\n\nreplay: FSBOX_PROPERTY_SEED=%d %s=1 go test ./pkg/ops -run %s\npolicies:\n%s\nsteps:\n  %s",
		fmt.Sprintf(format, args...), s.seed, count, s.t.Name(), strings.Join(pols, "\n"), strings.Join(s.log, "\n  "))
}

func (s *jseq) logf(format string, args ...any) {
	s.log = append(s.log, fmt.Sprintf(format, args...))
}

// jTree lists a's workdir by plain os calls: its directories ("." among
// them) and its regular files, relative.
func jTree(work string) (dirs, files []string) {
	filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
		if err != nil || strings.HasPrefix(d.Name(), ".fsbox-tmp-") {
			return nil
		}
		rel, _ := filepath.Rel(work, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			dirs = append(dirs, rel)
		case d.Type().IsRegular():
			files = append(files, rel)
		}
		return nil
	})
	return dirs, files
}

func sumOf(data string) string {
	h := sha256.Sum256([]byte(data))
	return hex.EncodeToString(h[:])
}

// jStep is what one step did.
type jStep struct {
	op     string // write, append, edit, rm, mv, cp, mkdir, patch, history, undo, purge
	desc   string
	res    any
	err    error
	id     string // undo: the id asked for ("": the newest)
	path   string // history: the path asked for ("": every change)
	limit  int    // history: the limit (0: none)
	change bool   // it may change the tree
}

// codeOf is err's code ("" for nil).
func codeOf(err error) fserr.Code {
	if err == nil {
		return ""
	}
	return fserr.AsError(err).Code
}

func (st jStep) outcome() string {
	if st.err == nil {
		return "ok"
	}
	e := fserr.AsError(st.err)
	if e.Rule != "" {
		return string(e.Code) + "/" + string(e.Rule)
	}
	return string(e.Code)
}

// randomStep runs one random call through a; others are the other
// actors (undo takes ids from their history too).
func (s *jseq) randomStep(a *jActor, label string) jStep {
	ctx := context.Background()
	r := s.r
	dirs, files := jTree(a.work)
	pk := func(l []string) string { return pick(r, l) }
	target := func() string {
		if len(files) > 0 && r.IntN(3) == 0 {
			return pk(files)
		}
		return path.Join(pk(dirs), pk(a.files))
	}
	anyFile := func() string {
		if len(files) == 0 {
			return pk(a.files)
		}
		return pk(files)
	}
	anyEntry := func() string {
		all := append(slices.DeleteFunc(slices.Clone(dirs), func(d string) bool { return d == "." }), files...)
		if len(all) == 0 {
			return pk(a.files)
		}
		return pk(all)
	}
	content := fmt.Sprintf("W-%s-%d-%s\nalpha\n", a.name, s.seed%100000, label)
	var st jStep
	switch k := r.IntN(21); {
	case k < 3:
		p, nc := target(), r.IntN(4) == 0
		st = jStep{op: "write", desc: fmt.Sprintf("write %s (no-clobber %v)", p, nc), change: true}
		st.res, st.err = Write(ctx, a.sb, WriteOptions{Path: p, NoClobber: nc, Content: strings.NewReader(content)})
	case k < 4:
		p := anyFile()
		st = jStep{op: "append", desc: "write --append " + p, change: true}
		st.res, st.err = Write(ctx, a.sb, WriteOptions{Path: p, Append: true, Content: strings.NewReader(content)})
	case k < 6:
		p := anyFile()
		old, new := "alpha", "beta"
		if b, _ := os.ReadFile(filepath.Join(a.work, p)); !strings.Contains(string(b), "alpha") {
			old, new = new, old
		}
		st = jStep{op: "edit", desc: fmt.Sprintf("edit %s %s->%s", p, old, new), change: true}
		st.res, st.err = Edit(ctx, a.sb, EditOptions{Path: p, Edits: []EditSpec{{Old: old, New: new, All: true}}})
	case k < 7:
		p := anyEntry()
		st = jStep{op: "rm", desc: "rm -r " + p, change: true}
		st.res, st.err = Remove(ctx, a.sb, p, true)
	case k < 9:
		src, dst := anyEntry(), target()
		if r.IntN(2) == 0 {
			dst = path.Join(pk(dirs), path.Base(src))
		}
		force := r.IntN(4) == 0
		st = jStep{op: "mv", desc: fmt.Sprintf("mv %s %s (force %v)", src, dst, force), change: true}
		st.res, st.err = Move(ctx, a.sb, src, dst, force)
	case k < 10:
		src, dst := anyFile(), target()
		force := r.IntN(3) == 0
		st = jStep{op: "cp", desc: fmt.Sprintf("cp %s %s (force %v)", src, dst, force), change: true}
		st.res, st.err = Copy(ctx, a.sb, src, dst, force)
	case k < 11:
		p := path.Join(pk(dirs), pk(a.dirs))
		st = jStep{op: "mkdir", desc: "mkdir " + p, change: true}
		st.res, st.err = Mkdir(ctx, a.sb, p)
	case k < 14:
		text, desc := s.journalPatch(a, dirs, files, label)
		st = jStep{op: "patch", desc: desc, change: true}
		st.res, st.err = Patch(ctx, a.sb, PatchOptions{Patch: text})
	case k < 16:
		st = jStep{op: "history"}
		if r.IntN(2) == 0 {
			all := append(append(slices.Clone(dirs), files...), pk(a.files), path.Join(pk(a.dirs), pk(a.files)))
			st.path = pk(all)
		}
		if r.IntN(3) == 0 {
			st.limit = 1 + r.IntN(4)
		}
		st.desc = fmt.Sprintf("history %q --limit %d", st.path, st.limit)
		st.res, st.err = History(ctx, a.sb, st.path, st.limit)
	case k < 20:
		var others []*jActor
		for _, o := range s.actors {
			if o != a {
				others = append(others, o)
			}
		}
		st = jStep{op: "undo", change: true}
		var from string
		switch u := r.IntN(7); {
		case u == 0:
		case u < 3 && len(a.ids) > 0:
			st.id, from = pk(a.ids), "its history"
		case u < 5 && len(others) > 0:
			o := others[r.IntN(len(others))]
			if len(o.ids) > 0 {
				st.id, from = pk(o.ids), o.name+"'s history"
			}
		case u < 6 && len(a.redo) > 0:
			st.id, from = pk(a.redo), "an undo (redo)"
		default:
			st.id, from = strconv.Itoa(1+r.IntN(12)), "a guess"
		}
		force := r.IntN(8) == 0
		st.desc = fmt.Sprintf("undo %q from %s (force %v)", st.id, from, force)
		if st.id == "" {
			st.desc = fmt.Sprintf("undo (newest, force %v)", force)
		}
		var res UndoResult
		res, st.err = Undo(ctx, a.sb, st.id, force)
		st.res = res
		if st.err == nil && res.ChangeID != nil {
			for _, o := range s.actors {
				o.redo = append(o.redo, *res.ChangeID)
			}
		}
	default:
		st = jStep{op: "purge", desc: "purge", change: true}
		st.res, st.err = Purge(ctx, a.sb)
	}
	s.logf("%4s. %s: %s -> %s", label, a.name, st.desc, st.outcome())
	s.outcomes[st.op+" "+st.outcome()]++
	return st
}

// journalPatch is a patch of two or three actions on a's tree (add,
// update, delete, move, move with a hunk), so that its batch writes a
// plan.
func (s *jseq) journalPatch(a *jActor, dirs, files []string, label string) (text, desc string) {
	r := s.r
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	var parts []string
	used := map[string]bool{}
	newName := func() string { return path.Join(pick(r, dirs), pick(r, a.files)) }
	hunk := func(p string) string {
		old, new := "alpha", "beta"
		if c, _ := os.ReadFile(filepath.Join(a.work, p)); !strings.Contains(string(c), "alpha\n") {
			old, new = new, old
		}
		return "@@\n-" + old + "\n+" + new + "\n"
	}
	for range 2 + r.IntN(2) {
		k := r.IntN(4)
		if len(files) == 0 {
			k = 0
		}
		p := newName()
		if k > 0 {
			p = pick(r, files)
		}
		if used[p] {
			continue
		}
		used[p] = true
		switch k {
		case 0:
			fmt.Fprintf(&b, "*** Add File: %s\n+added %s %d %s\n", p, a.name, s.seed%100000, label)
			parts = append(parts, "add "+p)
		case 1:
			fmt.Fprintf(&b, "*** Update File: %s\n%s", p, hunk(p))
			parts = append(parts, "update "+p)
		case 2:
			fmt.Fprintf(&b, "*** Delete File: %s\n", p)
			parts = append(parts, "delete "+p)
		case 3:
			dst := newName()
			if used[dst] {
				continue
			}
			used[dst] = true
			fmt.Fprintf(&b, "*** Update File: %s\n*** Move to: %s\n", p, dst)
			what := "move "
			if r.IntN(2) == 0 {
				b.WriteString(hunk(p))
				what = "move+update "
			}
			parts = append(parts, what+p+" -> "+dst)
		}
	}
	b.WriteString("*** End Patch\n")
	return b.String(), "patch [" + strings.Join(parts, ", ") + "]"
}

// history is a's whole history (failing the sequence if it cannot be
// read), and records its ids for later undos.
func (s *jseq) history(a *jActor, p string, limit int) (HistoryResult, bool) {
	h, err := History(context.Background(), a.sb, p, limit)
	if err != nil {
		s.fail("%s: history %q --limit %d: %v", a.name, p, limit, err)
		return h, false
	}
	if p == "" && limit == 0 {
		a.ids = a.ids[:0]
		for _, c := range h.Changes {
			a.ids = append(a.ids, c.ID)
		}
	}
	return h, true
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// fileStates are the states a change shows (before and after of each
// path).
func fileStates(c sandbox.Change) []*sandbox.FileState {
	var out []*sandbox.FileState
	for _, pc := range c.Paths {
		for _, st := range []*sandbox.FileState{pc.Before, pc.After} {
			if st != nil {
				out = append(out, st)
			}
		}
	}
	return out
}

// ---- Tenants ----

var tenantNames = []string{"alice", "bob", "carol"}

func TestPropertyJournalTenants(t *testing.T) {
	n, steps, seed := journalBounds(t)
	t.Logf("FSBOX_PROPERTY_SEED=%d, %d sequences of %d steps", seed, n, steps)
	outcomes := map[string]int{}
	failed := 0
	for i := range n {
		if !runTenants(t, seed+uint64(i), steps, outcomes) {
			if failed++; failed >= envInt("FSBOX_PROPERTY_MAXFAIL", 3) {
				t.Fatalf("stopping after %d failing sequences", failed)
			}
		}
	}
	t.Logf("outcomes: %v", outcomes)
}

func runTenants(t *testing.T, seed uint64, steps int, outcomes map[string]int) bool {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &jseq{t: t, seed: seed, r: rand.New(rand.NewPCG(seed, 0x26)), base: base, outcomes: outcomes}
	defer func() {
		for _, a := range s.actors {
			a.sb.Close()
		}
	}()
	jdir := filepath.Join(base, "var", "journal")
	cfg := filepath.Join(base, "etc", "fsbox.toml")
	must(t, os.MkdirAll(filepath.Dir(cfg), 0o755))
	must(t, os.WriteFile(cfg, fmt.Appendf(nil, "workdir = %q\n\n[journal]\ndir = %q\n\n[commands]\nrm = true\npurge = true\n",
		filepath.Join(base, "srv", "users", "${FSBOX_TENANT}"), jdir), 0o644))
	for _, name := range tenantNames[:2+s.r.IntN(2)] {
		work := filepath.Join(base, "srv", "users", name)
		a := &jActor{name: name, work: work, known: map[string]int64{},
			files: []string{"notes.md", "a.txt", "main.go", name + ".txt", name + "-cfg.toml"},
			dirs:  []string{"src", "docs", name + "-dir"}}
		s.buildTree(a)
		env := map[string]string{"FSBOX_CONFIG": cfg, "FSBOX_TENANT": name}
		p, err := policy.Load(policy.Env{Cwd: work, Home: base, Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
		if err != nil {
			t.Fatalf("tenant %s: %v", name, err)
		}
		if p.Workdir != work || p.Journal.Dir != jdir {
			t.Fatalf("tenant %s: workdir %q, [journal] dir %q; want %q, %q", name, p.Workdir, p.Journal.Dir, work, jdir)
		}
		if a.sb, err = sandbox.New(p, ""); err != nil {
			t.Fatalf("tenant %s: %v", name, err)
		}
		s.actors = append(s.actors, a)
	}
	for _, a := range s.actors {
		s.refreshTenant(a)
	}
	for i := 1; i <= steps && !s.failed; i++ {
		a := s.actors[s.r.IntN(len(s.actors))]
		st := s.randomStep(a, strconv.Itoa(i))
		s.checkTenantStep(a, st)
	}
	if !s.failed {
		s.checkTenantJournals()
	}
	s.done()
	return !s.failed
}

// buildTree makes a's tree: a few directories and files, every content
// holding a's name.
func (s *jseq) buildTree(a *jActor) {
	must(s.t, os.MkdirAll(a.work, 0o755))
	dirs := []string{"."}
	for range 1 + s.r.IntN(3) {
		d := path.Join(pick(s.r, dirs), pick(s.r, a.dirs))
		if !slices.Contains(dirs, d) && strings.Count(d, "/") < 2 {
			dirs = append(dirs, d)
			must(s.t, os.MkdirAll(filepath.Join(a.work, d), 0o755))
		}
	}
	for i := range 3 + s.r.IntN(5) {
		p := filepath.Join(a.work, pick(s.r, dirs), pick(s.r, a.files))
		must(s.t, os.WriteFile(p, fmt.Appendf(nil, "F-%s-%d-%d\nalpha\n", a.name, s.seed%100000, i), 0o644))
	}
}

// refreshTenant records a's tree, the content it holds and its history.
func (s *jseq) refreshTenant(a *jActor) {
	a.snap = snapshot(a.work)
	for _, e := range a.snap {
		if e.kind == 'f' {
			a.known[sumOf(e.data)] = int64(len(e.data))
		}
	}
	if h, ok := s.history(a, "", 0); ok {
		a.hist = jsonOf(h)
		s.checkTenantHistory(a, h, "its history")
	}
}

// checkTenantStep: a's step changed nothing of another tenant's tree or
// history; what a's history shows (its own answer, if it was a history,
// and its whole history now) is a's alone.
func (s *jseq) checkTenantStep(a *jActor, st jStep) {
	ctx := context.Background()
	for _, o := range s.actors {
		if o == a {
			continue
		}
		if d := diffSnap(o.snap, snapshot(o.work)); len(d) > 0 {
			s.fail("%s's %s changed %s's tree: %v", a.name, st.desc, o.name, d)
			return
		}
		h, ok := s.history(o, "", 0)
		if !ok {
			return
		}
		if s.checkTenantHistory(o, h, "history after "+a.name+"'s "+st.desc); s.failed {
			return
		}
		if now := jsonOf(h); now != o.hist {
			s.fail("%s's %s changed %s's history:\nbefore %s\nafter  %s", a.name, st.desc, o.name, o.hist, now)
			return
		}
	}
	if st.err != nil {
		if msg := strings.ToLower(st.err.Error()); s.otherTenantIn(a, msg) != "" {
			s.fail("%s's %s fails with %q, which names %s", a.name, st.desc, st.err, s.otherTenantIn(a, msg))
			return
		}
	}
	if st.op == "history" && st.err == nil {
		s.checkTenantHistory(a, st.res.(HistoryResult), st.desc)
	}
	// A tenant may write every path of its tree: its purge forgets its
	// whole history.
	if st.op == "purge" && st.err == nil {
		if h, _ := History(ctx, a.sb, "", 0); h.Count != 0 || st.res.(PurgeResult).Kept != 0 {
			s.fail("%s's purge answers %+v and leaves its history %s; it may write every path of it", a.name, st.res, jsonOf(h))
			return
		}
	}
	if st.op == "undo" && st.err == nil {
		if w := s.otherTenantIn(a, strings.ToLower(jsonOf(st.res))); w != "" {
			s.fail("%s's %s answers %s, which names %s", a.name, st.desc, jsonOf(st.res), w)
		}
	}
	// A path in another tenant's tree is not a's to ask about.
	if o := s.actors[s.r.IntN(len(s.actors))]; o != a {
		_, files := jTree(o.work)
		if len(files) > 0 {
			p := filepath.Join(o.work, pick(s.r, files))
			if h, err := History(ctx, a.sb, p, 0); err == nil {
				s.fail("%s: history %s (%s's file) answers %s", a.name, p, o.name, jsonOf(h))
			} else if fserr.AsError(err).Code != fserr.CodeDenied {
				s.fail("%s: history %s (%s's file): %v, want denied", a.name, p, o.name, err)
			}
		}
	}
	s.refreshTenant(a)
}

// otherTenantIn is what text (lower case) holds of another tenant than
// a: its name or its workdir ("": nothing).
func (s *jseq) otherTenantIn(a *jActor, text string) string {
	for _, o := range s.actors {
		if o == a {
			continue
		}
		if strings.Contains(text, o.work) {
			return o.name + "'s workdir"
		}
		if strings.Contains(text, o.name) {
			return o.name + "'s name"
		}
	}
	return ""
}

// checkTenantHistory: h (a's) names nothing of another tenant (its
// workdir, its names, any absolute path: a's only root is its workdir),
// and each sha256 it shows is of content that was in a's tree, with its
// size.
func (s *jseq) checkTenantHistory(a *jActor, h HistoryResult, what string) {
	js := jsonOf(h)
	if w := s.otherTenantIn(a, strings.ToLower(js)); w != "" {
		s.fail("%s's %s names %s: %s", a.name, what, w, js)
		return
	}
	for _, c := range h.Changes {
		for _, p := range changePaths(c) {
			if path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
				s.fail("%s's %s shows the path %q outside its workdir: %s", a.name, what, p, jsonOf(c))
				return
			}
		}
		for _, st := range fileStates(c) {
			if st.SHA256 == "" {
				if st.Size != 0 {
					s.fail("%s's %s shows a size %d without content: %s", a.name, what, st.Size, jsonOf(c))
				}
				continue
			}
			size, ok := a.known[st.SHA256]
			if !ok {
				whose := "no tenant's"
				for _, o := range s.actors {
					if _, ok := o.known[st.SHA256]; ok {
						whose = o.name + "'s"
					}
				}
				s.fail("%s's %s shows the sha256 %s of content never in its tree (it is %s): %s", a.name, what, st.SHA256, whose, jsonOf(c))
				return
			}
			if size != st.Size {
				s.fail("%s's %s shows the sha256 %s with size %d; that content is %d bytes: %s", a.name, what, st.SHA256, st.Size, size, jsonOf(c))
				return
			}
		}
	}
}

// changePaths are every path c shows (its paths and both ends of its
// moves).
func changePaths(c sandbox.Change) []string {
	var out []string
	for _, pc := range c.Paths {
		out = append(out, pc.Path)
	}
	for _, m := range c.Moved {
		out = append(out, m.From, m.To)
	}
	return out
}

// checkTenantJournals: each tenant's journal is a subdirectory of its
// own in the shared [journal] dir.
func (s *jseq) checkTenantJournals() {
	seen := map[string]string{}
	for _, a := range s.actors {
		st := a.sb.Journal()
		if !st.Enabled || len(st.Roots) != 1 {
			s.fail("%s's journal: %+v", a.name, st)
			return
		}
		d := st.Roots[0].Dir
		if filepath.Dir(d) != filepath.Join(s.base, "var", "journal") {
			s.fail("%s's journal %s is not in the shared [journal] dir", a.name, d)
		}
		if o, ok := seen[d]; ok {
			s.fail("%s and %s share the journal %s", o, a.name, d)
		}
		seen[d] = a.name
	}
}

// ---- Loose and strict on one workdir ----

func TestPropertyJournalStrict(t *testing.T) {
	n, steps, seed := journalBounds(t)
	t.Logf("FSBOX_PROPERTY_SEED=%d, %d sequences of %d steps", seed, n, steps)
	outcomes := map[string]int{}
	failed := 0
	for i := range n {
		s := newStrictSeq(t, seed+uint64(i), outcomes)
		for i := 1; i <= steps && !s.failed; i++ {
			s.strictStep(s.actors[s.r.IntN(2)], strconv.Itoa(i))
		}
		s.close()
		if s.failed {
			if failed++; failed >= envInt("FSBOX_PROPERTY_MAXFAIL", 3) {
				t.Fatalf("stopping after %d failing sequences", failed)
			}
		}
	}
	t.Logf("outcomes: %v", outcomes)
}

// strictSeq is a sequence of the loose and the strict policy on one
// workdir (actors[0] loose, actors[1] strict).
type strictSeq struct {
	*jseq
	work, state string
	// sizes is the size of every content (by sha256) that was ever in the
	// tree; public those that were ever at a path the strict policy may
	// read, denied those that were ever at one it may not.
	sizes          map[string]int64
	public, denied map[string]bool
}

func (s *strictSeq) loose() *jActor  { return s.actors[0] }
func (s *strictSeq) strict() *jActor { return s.actors[1] }

var (
	strictFiles = []string{"a.txt", "notes.md", "main.go", "conf.toml", "app.lock", ".env", "secret.txt", "Secret.md", ".ENV"}
	strictDirs  = []string{"src", "docs", "locked", "secrets", "private"}
)

func newStrictSeq(t *testing.T, seed uint64, outcomes map[string]int) *strictSeq {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &strictSeq{jseq: &jseq{t: t, seed: seed, r: rand.New(rand.NewPCG(seed, 0x2626)), base: base, outcomes: outcomes},
		work: filepath.Join(base, "work"), state: filepath.Join(base, "state"),
		sizes: map[string]int64{}, public: map[string]bool{}, denied: map[string]bool{}}
	strict := refPolicy{Deny: []string{"**/.env", "**/secret*"}, WriteDeny: []string{"locked/**"}}
	if s.r.IntN(2) == 0 {
		strict.Deny = append(strict.Deny, "private/**")
	}
	if s.r.IntN(2) == 0 {
		strict.WriteDeny = append(strict.WriteDeny, "**/*.lock")
	}
	a := &jActor{name: "loose", work: s.work, files: strictFiles, dirs: strictDirs}
	s.buildStrictTree()
	b := &jActor{name: "strict", work: s.work, pol: strict, files: strictFiles, dirs: strictDirs}
	for _, x := range []*jActor{a, b} {
		p := policy.DefaultPolicy(s.work)
		x.pol.apply(p) // rm on too
		p.Commands["purge"] = true
		p.Journal.State = s.state
		if x.sb, err = sandbox.New(p, ""); err != nil {
			t.Fatalf("%s: %v", x.name, err)
		}
		s.actors = append(s.actors, x)
	}
	s.observe()
	return s
}

func (s *strictSeq) close() {
	s.done()
	for _, a := range s.actors {
		a.sb.Close()
	}
}

// buildStrictTree makes a tree with files each policy may read and
// write, files the strict one denies and files it may only read.
func (s *strictSeq) buildStrictTree() {
	dirs := []string{"."}
	for _, d := range strictDirs {
		if s.r.IntN(4) > 0 {
			dirs = append(dirs, d)
			must(s.t, os.MkdirAll(filepath.Join(s.work, d), 0o755))
		}
	}
	must(s.t, os.MkdirAll(s.work, 0o755))
	seen := map[string]bool{}
	for i := range 6 + s.r.IntN(8) {
		rel := path.Join(pick(s.r, dirs), pick(s.r, strictFiles))
		if seen[strings.ToLower(rel)] {
			continue
		}
		seen[strings.ToLower(rel)] = true
		must(s.t, os.WriteFile(filepath.Join(s.work, rel), fmt.Appendf(nil, "F-%d-%d\nalpha\n", s.seed%100000, i), 0o644))
	}
}

// observe takes in the tree as it is now: each content's size, and
// whether it lies at a path the strict policy may read.
func (s *strictSeq) observe() map[string]snapEntry {
	snap := snapshot(s.work)
	for p, e := range snap {
		if e.kind != 'f' {
			continue
		}
		sum := sumOf(e.data)
		s.sizes[sum] = int64(len(e.data))
		rel, _ := filepath.Rel(s.work, p)
		if s.strict().pol.refused(filepath.ToSlash(rel), false, false) {
			s.denied[sum] = true
		} else {
			s.public[sum] = true
		}
	}
	return snap
}

// strictStep runs one random step through a and checks it.
func (s *strictSeq) strictStep(a *jActor, label string) {
	before := snapshot(s.work)
	var looseBefore HistoryResult
	if a == s.strict() {
		var ok bool
		if looseBefore, ok = s.history(s.loose(), "", 0); !ok {
			return
		}
	}
	st := s.randomStep(a, label)
	after := s.observe()
	changed := diffSnap(before, after)
	switch {
	case !st.change && len(changed) > 0:
		s.fail("%s's %s changed %v", a.name, st.desc, changed)
	case st.err != nil && len(changed) > 0 && knownUndoDirNotEmpty && undoLeftDir(st, s.work, changed):
		s.logf("      (known: it failed, yet it changed %v)", changed)
		s.outcomes["undo KNOWN fails after its commit (a directory it made is not empty)"]++
	case st.err != nil && len(changed) > 0:
		s.fail("%s's %s failed (%v), yet it changed %v", a.name, st.desc, st.err, changed)
	}
	if s.failed || a != s.strict() {
		s.checkStrictHistory()
		return
	}
	strict := s.strict()
	for _, p := range changed {
		rel, _ := filepath.Rel(s.work, p)
		rel = filepath.ToSlash(rel)
		for _, e := range []snapEntry{before[p], after[p]} {
			if e.kind != 0 && strict.pol.refused(rel, e.kind == 'd', true) {
				s.fail("the strict policy's %s changed %s (%q -> %q), which it may not write", st.desc, rel, before[p].data, after[p].data)
				return
			}
		}
	}
	asked := st.op == "history" && st.path != "" && strict.pol.refused(path.Clean(st.path), false, false) // its error names the path asked
	if st.err != nil && (st.op == "undo" || st.op == "purge" || st.op == "history" && !asked) {
		if w := s.deniedIn(strings.ToLower(st.err.Error())); w != "" {
			if knownUndoTreeName && st.op == "undo" && undoesTreeMove(st.err, looseBefore) {
				s.logf("      (known: the refusal names %s, below a directory the change moved)", fserr.AsError(st.err).Path)
				s.outcomes["undo KNOWN names a denied path below a moved directory"]++
			} else {
				s.fail("the strict policy's %s fails with %q, which names %s", st.desc, st.err, w)
				return
			}
		}
	}
	switch st.op {
	case "undo":
		s.checkStrictUndo(st, looseBefore)
	case "purge":
		s.checkStrictPurge(st, looseBefore)
	case "history":
		s.checkStrictHistoryStep(st)
	}
	if !s.failed {
		s.checkStrictHistory()
	}
}

// knownUndoTreeName: undo's refusal may name a denied path when the
// change moved a directory whose tree holds it now (found by this test,
// not fixed yet). mayUndo checks the ends of each move and lets it
// pass; renaming the directory back, the door refuses it naming the
// first protected path below it, as mv does ("denied: lib/.env: lib/.env
// matches the deny pattern \"**/.env\"; nothing was moved"), though
// undo's refusal is to name only paths the policy may read (README,
// undo). Nothing is changed. The least case: src holds .env; the loose
// policy runs mv src lib (change 1); the strict one (deny **/.env)
// runs undo 1. With it false, FSBOX_PROPERTY_SEED=1795688865170724896
// FSBOX_PROPERTY_N=1 fails at step 22. Set it false once undo redacts
// that refusal: the case then fails like any other.
const knownUndoTreeName = false

// undoesTreeMove: err is the door's refusal of a rename (of a directory)
// naming a path below an end of a move some change of loose recorded.
func undoesTreeMove(err error, loose HistoryResult) bool {
	e := fserr.AsError(err)
	if e.Code != fserr.CodeDenied || !strings.Contains(e.Msg, "nothing was moved") {
		return false
	}
	for _, c := range loose.Changes {
		for _, m := range c.Moved {
			if strings.HasPrefix(e.Path, m.From+"/") || strings.HasPrefix(e.Path, m.To+"/") {
				return true
			}
		}
	}
	return false
}

// knownUndoDirNotEmpty: an undo whose change made a directory that
// holds a new entry now fails, yet changes the tree (found by this test,
// not fixed yet). undoChange commits its batch (the files restored or
// deleted, and a record saying the directory went) before it removes the
// directories the change made; one that is not empty stays and the call
// answers conflict ("d is not empty (or gone): it stays") after the
// commit: the files changed, the journal holds an undo recording d as
// removed though d is there, and the caller sees a failure. The least
// case, under one policy: rm -r d (change 1, d holds a.txt), undo 1
// (change 2), write d/b.txt, undo 2: conflict, yet d/a.txt is deleted
// and change 4 records d removed. With it false,
// FSBOX_PROPERTY_SEED=1795689306594075481 FSBOX_PROPERTY_N=1 fails at
// step 12. Set it false once undo checks those directories before it
// commits.
const knownUndoDirNotEmpty = false

// undoLeftDir: st is an undo that failed because a directory it was to
// remove is not empty, and every path it changed lies below that
// directory.
func undoLeftDir(st jStep, work string, changed []string) bool {
	e := fserr.AsError(st.err)
	if st.op != "undo" || e.Code != fserr.CodeConflict || !strings.Contains(e.Msg, "is not empty (or gone): it stays") {
		return false
	}
	for _, p := range changed {
		if !strings.HasPrefix(p, filepath.Join(work, e.Path)+"/") {
			return false
		}
	}
	return true
}

// deniedIn is a name the strict policy denies that text (lower case)
// holds ("": none). The readable names never hold these.
func (s *strictSeq) deniedIn(text string) string {
	for _, w := range []string{".env", "secret"} {
		if strings.Contains(text, w) {
			return w
		}
	}
	return ""
}

// unwritable is the first path of c (as the loose policy shows it) the
// strict policy's rules refuse writing ("": none).
func (s *strictSeq) unwritable(c sandbox.Change) string {
	for _, pc := range c.Paths {
		isDir := pc.Before != nil && pc.Before.Type == "dir" || pc.After != nil && pc.After.Type == "dir"
		if s.strict().pol.refused(pc.Path, isDir, true) {
			return pc.Path
		}
	}
	for _, m := range c.Moved {
		for _, p := range []string{m.From, m.To} {
			if s.strict().pol.refused(p, false, true) || s.strict().pol.refused(p, true, true) {
				return p
			}
		}
	}
	return ""
}

// checkStrictUndo: an undo by id of a change naming a path the strict
// policy may not write is denied, whole; what an undo answers names no
// denied path.
func (s *strictSeq) checkStrictUndo(st jStep, looseBefore HistoryResult) {
	if st.err == nil {
		if w := s.deniedIn(strings.ToLower(jsonOf(st.res))); w != "" {
			s.fail("the strict policy's %s answers %s, which names %s", st.desc, jsonOf(st.res), w)
			return
		}
	}
	if st.id == "" {
		return
	}
	for _, c := range looseBefore.Changes {
		if c.ID != st.id {
			continue
		}
		if p := s.unwritable(c); p != "" && codeOf(st.err) != fserr.CodeDenied {
			s.fail("the strict policy's %s: %v; the change names %s, which it may not write: want denied (change %s)", st.desc, st.err, p, jsonOf(c))
		}
		if st.err == nil && !c.Kept {
			s.fail("the strict policy's %s undid change %s, recorded without its prior contents", st.desc, c.ID)
		}
	}
}

// checkStrictPurge: the records the strict policy's purge removed (the
// loose policy's history before and after) name only paths it may write,
// and those it kept name one it may not; it removed what it says and
// added nothing.
func (s *strictSeq) checkStrictPurge(st jStep, looseBefore HistoryResult) {
	after, ok := s.history(s.loose(), "", 0)
	if !ok {
		return
	}
	left := map[string]bool{}
	for _, c := range after.Changes {
		left[c.ID] = true
	}
	removed := 0
	for _, c := range looseBefore.Changes {
		if left[c.ID] {
			delete(left, c.ID)
			continue
		}
		removed++
		if p := s.unwritable(c); p != "" {
			s.fail("the strict policy's purge removed change %s, which names %s, a path it may not write: %s", c.ID, p, jsonOf(c))
			return
		}
	}
	for _, c := range after.Changes {
		if s.unwritable(c) == "" {
			s.fail("the strict policy's purge kept change %s, whose every path it may write: %s", c.ID, jsonOf(c))
			return
		}
	}
	if len(left) > 0 {
		s.fail("after the strict policy's purge the loose policy's history holds changes %v it did not hold", left)
		return
	}
	if st.err == nil {
		if res := st.res.(PurgeResult); res.Removed != removed || res.Kept != after.Count {
			s.fail("the strict policy's purge says %+v; it removed %d changes and %d are left", res, removed, after.Count)
		}
	} else if removed > 0 {
		s.fail("the strict policy's purge failed (%v), yet removed %d changes", st.err, removed)
	}
}

// checkStrictHistoryStep checks a history step of the strict policy: a
// path it may not read is denied; otherwise the answer is the loose
// policy's for the same path, filtered by the reference, cut at the
// limit.
func (s *strictSeq) checkStrictHistoryStep(st jStep) {
	if st.path != "" && s.strict().pol.refused(path.Clean(st.path), false, false) {
		if codeOf(st.err) != fserr.CodeDenied {
			s.fail("the strict policy's %s: %v, want denied (%s)", st.desc, st.err, jsonOf(st.res))
		}
		return
	}
	want, werr := History(context.Background(), s.loose().sb, st.path, 0)
	if werr != nil {
		if st.err == nil {
			s.fail("the strict policy's %s answers %s; the loose policy's fails: %v", st.desc, jsonOf(st.res), werr)
		}
		return
	}
	if st.err != nil {
		s.fail("the strict policy's %s: %v; the loose policy's answers", st.desc, st.err)
		return
	}
	s.compareStrict(st.desc, st.res.(HistoryResult), want, st.limit)
}

// checkStrictHistory: the strict policy's whole history (and its newest
// few) is the loose policy's filtered; the loose policy hides nothing.
func (s *strictSeq) checkStrictHistory() {
	want, ok := s.history(s.loose(), "", 0)
	if !ok {
		return
	}
	if want.Hidden != 0 {
		s.fail("the loose policy's history hides %d paths: %s", want.Hidden, jsonOf(want))
		return
	}
	got, ok := s.history(s.strict(), "", 0)
	if !ok {
		return
	}
	s.compareStrict("history", got, want, 0)
	if limit := 1 + s.r.IntN(3); !s.failed {
		if got, ok := s.history(s.strict(), "", limit); ok {
			s.compareStrict(fmt.Sprintf("history --limit %d", limit), got, want, limit)
		}
	}
}

// compareStrict checks the strict policy's answer got to a history call
// against the loose policy's answer to it, loose (without a limit).
func (s *strictSeq) compareStrict(what string, got, loose HistoryResult, limit int) {
	js := jsonOf(got)
	if w := s.deniedIn(strings.ToLower(js)); w != "" {
		s.fail("the strict policy's %s shows %q, a name it denies: %s", what, w, js)
		return
	}
	for _, c := range got.Changes {
		for _, p := range changePaths(c) {
			if s.strict().pol.refused(p, false, false) {
				s.fail("the strict policy's %s shows %s, which it may not read: %s", what, p, jsonOf(c))
				return
			}
		}
		var shown int64
		for _, st := range fileStates(c) {
			switch size, ok := s.sizes[st.SHA256]; {
			case st.SHA256 == "" && st.Size != 0:
				s.fail("the strict policy's %s shows a size %d without content: %s", what, st.Size, jsonOf(c))
				return
			case st.SHA256 == "":
			case s.denied[st.SHA256] && !s.public[st.SHA256]:
				s.fail("the strict policy's %s shows the sha256 %s of content only ever at paths it denies: %s", what, st.SHA256, jsonOf(c))
				return
			case !ok:
				s.fail("the strict policy's %s shows the sha256 %s of content never seen in the tree: %s", what, st.SHA256, jsonOf(c))
				return
			case size != st.Size:
				s.fail("the strict policy's %s shows the sha256 %s with size %d; that content is %d bytes: %s", what, st.SHA256, st.Size, size, jsonOf(c))
				return
			}
		}
		for _, pc := range c.Paths {
			if pc.Before != nil && pc.Before.Type == "file" {
				shown += pc.Before.Size
			}
		}
		if c.Bytes > shown {
			s.fail("the strict policy's %s shows bytes %d, more than the %d bytes of prior content it shows: %s", what, c.Bytes, shown, jsonOf(c))
			return
		}
	}
	// The reference: the loose answer filtered by the strict rules.
	want := HistoryResult{Changes: []sandbox.Change{}}
	for _, c := range loose.Changes {
		if v, ok := refVisible(c, s.strict().pol, &want.Hidden); ok {
			want.Changes = append(want.Changes, v)
		}
	}
	if limit > 0 {
		want.Changes = want.Changes[:min(limit, len(want.Changes))]
		got.Hidden, want.Hidden = 0, 0 // counted as far as the walk went
	}
	want.Count = len(want.Changes)
	if w := jsonOf(normalized(want)); jsonOf(normalized(got)) != w {
		s.fail("the strict policy's %s is not the loose policy's filtered by its rules:\ngot  %s\nwant %s\nloose %s", what, jsonOf(got), w, jsonOf(loose))
	}
}

// normalized is h with every empty list of paths or moves nil (no path
// and an empty list say the same).
func normalized(h HistoryResult) HistoryResult {
	h.Changes = slices.Clone(h.Changes)
	for i, c := range h.Changes {
		if len(c.Paths) == 0 {
			c.Paths = nil
		}
		if len(c.Moved) == 0 {
			c.Moved = nil
		}
		h.Changes[i] = c
	}
	return h
}

// refVisible is c as a policy with the rules pol may see it (SPEC, issue
// 26): the paths it may read, the rest counted in hidden; a move with one
// hidden end shown as a delete of its visible source or an add of its
// visible destination (type unknown); nothing left: not shown; bytes as
// recorded when nothing is hidden, else the prior sizes shown.
func refVisible(c sandbox.Change, pol refPolicy, hidden *int) (sandbox.Change, bool) {
	if c.Omitted > 0 {
		return c, true
	}
	out := c
	out.Paths, out.Moved, out.Bytes = nil, nil, 0
	n := 0
	for _, pc := range c.Paths {
		isDir := pc.Before != nil && pc.Before.Type == "dir" || pc.After != nil && pc.After.Type == "dir"
		if pol.refused(pc.Path, isDir, false) {
			n++
			continue
		}
		out.Paths = append(out.Paths, pc)
		if pc.Before != nil && pc.Before.Type == "file" && c.Bytes > 0 {
			out.Bytes += pc.Before.Size
		}
	}
	for _, m := range c.Moved {
		from, to := !pol.refused(m.From, false, false), !pol.refused(m.To, false, false)
		switch {
		case from && to:
			out.Moved = append(out.Moved, m)
		case from:
			n++
			out.Paths = append(out.Paths, sandbox.PathChange{Path: m.From, Before: &sandbox.FileState{}})
		case to:
			n++
			out.Paths = append(out.Paths, sandbox.PathChange{Path: m.To, After: &sandbox.FileState{}})
		default:
			n += 2
		}
	}
	*hidden += n
	if len(out.Paths) == 0 && len(out.Moved) == 0 {
		return out, false
	}
	if n == 0 {
		out.Bytes = c.Bytes
	}
	return out, true
}

// ---- Crash plans under a stricter policy ----

// TestPropertyJournalCrashPlans: see the top of the file. Each crash is
// a child process (this test, with FSBOX_JCRASH_CHILD set).
func TestPropertyJournalCrashPlans(t *testing.T) {
	if os.Getenv("FSBOX_JCRASH_CHILD") != "" {
		journalCrashChild(t)
		return
	}
	_, steps, seed := journalBounds(t)
	crashes := envInt("FSBOX_PROPERTY_CRASHES", 4)
	if testing.Short() && os.Getenv("FSBOX_PROPERTY_CRASHES") == "" {
		crashes = 2
	}
	t.Logf("FSBOX_PROPERTY_SEED=%d, %d sequences of %d steps with a crash each", seed, crashes, steps/3*2)
	outcomes := map[string]int{}
	for i := range crashes {
		s := newStrictSeq(t, seed+uint64(i), outcomes)
		s.crashRound(steps)
		s.close()
		if s.failed {
			break
		}
	}
	t.Logf("outcomes: %v", outcomes)
}

// journalCrashChild runs the patch FSBOX_JCRASH_PATCH under the loose
// policy on FSBOX_JCRASH_WORK and exits (3) once the batch's plan is
// written, before its first swap.
func journalCrashChild(t *testing.T) {
	p := policy.DefaultPolicy(os.Getenv("FSBOX_JCRASH_WORK"))
	p.Commands["rm"] = true
	p.Journal.State = os.Getenv("FSBOX_JCRASH_STATE")
	sb, err := sandbox.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	sandbox.Seam = func(point string) {
		if point == "batch.planned" {
			os.Exit(3)
		}
	}
	res, err := Patch(context.Background(), sb, PatchOptions{Patch: os.Getenv("FSBOX_JCRASH_PATCH")})
	t.Fatalf("the patch was not interrupted: %v %s", err, jsonOf(res))
}

// crashItem is one file of the crashed patch: its path and what it holds
// before (old) and after the patch (new; "" with gone for a delete).
type crashItem struct {
	rel      string
	old, new string
	existed  bool
	gone     bool
	writable bool // by the strict policy
}

// crashRound: a few random steps by both policies, a crashed patch of
// the loose policy, steps of the strict one while its plan is pending,
// then the loose policy's change that finishes it.
func (s *strictSeq) crashRound(steps int) {
	ctx := context.Background()
	for i := 1; i <= steps/3 && !s.failed; i++ {
		s.strictStep(s.actors[s.r.IntN(2)], strconv.Itoa(i))
	}
	if s.failed {
		return
	}
	text, items := s.crashPatch()
	if items == nil {
		s.fail("no patch to crash could be made")
		return
	}
	var desc []string
	for _, it := range items {
		desc = append(desc, fmt.Sprintf("%s (existed %v, deleted %v, strict may write %v)", it.rel, it.existed, it.gone, it.writable))
	}
	s.logf("   c. loose (child process): patch %v, crashed at batch.planned", desc)
	cmd := exec.Command(os.Args[0], "-test.run=^TestPropertyJournalCrashPlans$")
	cmd.Env = append(os.Environ(), "FSBOX_JCRASH_CHILD=1", "FSBOX_JCRASH_WORK="+s.work, "FSBOX_JCRASH_STATE="+s.state, "FSBOX_JCRASH_PATCH="+text)
	if out, err := cmd.CombinedOutput(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 3 {
		s.fail("the crash child: %v (want exit 3 at batch.planned)\npatch:\n%s\n%s", err, text, out)
		return
	}
	untouched := func(when string) bool {
		for _, it := range items {
			b, err := os.ReadFile(filepath.Join(s.work, it.rel))
			switch {
			case it.existed && (err != nil || string(b) != it.old):
				s.fail("%s: %s of the pending plan holds %q (%v), want its old %q", when, it.rel, b, err, it.old)
			case !it.existed && !errors.Is(err, fs.ErrNotExist):
				s.fail("%s: %s of the pending plan exists (%q, %v); the plan was not to be finished", when, it.rel, b, err)
			}
		}
		if n := s.strict().sb.Journal().RecoveryPending; n == 0 && !s.failed {
			s.fail("%s: the strict policy's roots says recovery_pending 0 while the plan is pending", when)
		}
		return !s.failed
	}
	if !untouched("after the crash") {
		return
	}
	// The strict policy's steps, the plan pending.
	for i := 1; i <= steps/3 && !s.failed; i++ {
		label := "s" + strconv.Itoa(i)
		s.strictStep(s.strict(), label)
		untouched("after " + s.log[len(s.log)-1])
	}
	if s.failed {
		return
	}
	// A change overlapping the plan is conflict; a disjoint one goes
	// ahead.
	for _, it := range items {
		if !it.writable {
			continue
		}
		_, err := Write(ctx, s.strict().sb, WriteOptions{Path: it.rel, Content: strings.NewReader("strict over the plan\n")})
		s.logf("   o. strict: write %s (overlapping the plan) -> %v", it.rel, err)
		if codeOf(err) != fserr.CodeConflict {
			s.fail("the strict policy's write of %s, a path of the pending plan: %v, want conflict", it.rel, err)
			return
		}
		if d := path.Dir(it.rel); d != "." && !s.strict().pol.refused(d, true, true) {
			sub := path.Join(d, "sub-"+strconv.Itoa(s.r.IntN(100)))
			_, err := Mkdir(ctx, s.strict().sb, sub)
			s.logf("   o. strict: mkdir %s (beside the plan) -> %v", sub, err)
			if err != nil && fserr.AsError(err).Code != fserr.CodeExists {
				s.fail("the strict policy's mkdir %s, beside the pending plan's %s: %v, want it to go ahead", sub, it.rel, err)
				return
			}
		}
		if !untouched("after the overlapping write") {
			return
		}
	}
	fresh := fmt.Sprintf("docs/fresh-%d.txt", s.seed%1000)
	if _, err := Write(ctx, s.strict().sb, WriteOptions{Path: fresh, Content: strings.NewReader("fresh\n")}); err != nil {
		s.fail("the strict policy's write of %s, disjoint from the pending plan: %v, want it to go ahead", fresh, err)
		return
	}
	s.logf("   d. strict: write %s (disjoint) -> ok", fresh)
	if !untouched("after the disjoint write") {
		return
	}
	// The loose policy's next change finishes the plan.
	_, err := Write(ctx, s.loose().sb, WriteOptions{Path: "loose-next.txt", Content: strings.NewReader("next\n")})
	s.logf("   f. loose: write loose-next.txt -> %v", err)
	if err != nil {
		s.fail("the loose policy's next change: %v", err)
		return
	}
	for _, it := range items {
		b, err := os.ReadFile(filepath.Join(s.work, it.rel))
		switch {
		case it.gone && !errors.Is(err, fs.ErrNotExist):
			s.fail("after the loose policy's change %s still exists (%q): the plan deleted it", it.rel, b)
		case !it.gone && (err != nil || string(b) != it.new):
			s.fail("after the loose policy's change %s holds %q (%v), want the plan's %q", it.rel, b, err, it.new)
		}
	}
	for _, a := range s.actors {
		if n := a.sb.Journal().RecoveryPending; n != 0 {
			s.fail("after the loose policy finished the plan, the %s policy's roots says recovery_pending %d", a.name, n)
		}
	}
	if plans, _ := filepath.Glob(filepath.Join(s.state, "journal", "*", "pending", "*")); len(plans) > 0 {
		s.fail("plans left after they were finished: %v", plans)
	}
	filepath.WalkDir(s.work, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".fsbox-tmp-") {
			s.fail("temporary file %s left after the plan was finished", p)
		}
		return nil
	})
	s.observe()
	if !s.failed {
		s.checkStrictHistory()
	}
}

// lineCount is how many lines of text are line.
func lineCount(text, line string) int {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		if l == line {
			n++
		}
	}
	return n
}

// crashPatch is a patch of the loose policy with two to four actions: at
// least one on a path the strict policy may not write, and one on a path
// it may; and what each action leaves.
func (s *strictSeq) crashPatch() (string, []crashItem) {
	strict := s.strict().pol
	_, files := jTree(s.work)
	var mayNot, may []string
	for _, f := range files {
		if b, _ := os.ReadFile(filepath.Join(s.work, f)); !strings.Contains(string(b), "alpha\n") && !strings.Contains(string(b), "beta\n") {
			continue
		}
		if strict.refused(f, false, true) {
			mayNot = append(mayNot, f)
		} else {
			may = append(may, f)
		}
	}
	var items []crashItem
	used := map[string]bool{}
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	add := func(rel string, writable bool) {
		if used[strings.ToLower(rel)] {
			return
		}
		used[strings.ToLower(rel)] = true
		old, err := os.ReadFile(filepath.Join(s.work, rel))
		it := crashItem{rel: rel, old: string(old), existed: err == nil, writable: writable}
		switch {
		case !it.existed:
			it.new = fmt.Sprintf("planned %d %s\n", s.seed%100000, rel)
			fmt.Fprintf(&b, "*** Add File: %s\n+%s", rel, it.new)
		case s.r.IntN(3) == 0 || lineCount(it.old, "alpha")+lineCount(it.old, "beta") != 1:
			it.gone = true
			fmt.Fprintf(&b, "*** Delete File: %s\n", rel)
		default:
			o, n := "alpha", "beta"
			if !strings.Contains(it.old, "alpha\n") {
				o, n = n, o
			}
			it.new = strings.Replace(it.old, o+"\n", n+"\n", 1)
			fmt.Fprintf(&b, "*** Update File: %s\n@@\n-%s\n+%s\n", rel, o, n)
		}
		items = append(items, it)
	}
	// One the strict policy may not write: a file it denies or may only
	// read, or a new one in locked/.
	if len(mayNot) > 0 && s.r.IntN(3) > 0 {
		add(pick(s.r, mayNot), false)
	} else {
		add(fmt.Sprintf("locked/planned-%d.txt", s.seed%1000), false)
	}
	if s.r.IntN(2) == 0 {
		add(pick(s.r, []string{".env", "secrets/k.txt", "locked/conf.toml"}), false)
	}
	// One it may write, and maybe another.
	for range 1 + s.r.IntN(2) {
		if len(may) > 0 && s.r.IntN(3) > 0 {
			add(pick(s.r, may), true)
		} else {
			add(fmt.Sprintf("src/planned-%d-%d.txt", s.seed%1000, s.r.IntN(100)), true)
		}
	}
	b.WriteString("*** End Patch\n")
	if len(items) < 2 {
		return "", nil
	}
	return b.String(), items
}
