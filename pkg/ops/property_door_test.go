//go:build unix

package ops

// The pieces of the sequence property (property_test.go) that issue 25
// ("one door") adds: writable roots, a second policy nested in the first
// (acting in turn and at once, with a shared compare-and-swap counter),
// the diff of every step, patch steps and another process's hard links.

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// actor is one sandbox acting on the tree: the sequence's policy A, or
// the nested policy B (its workdir a directory of A's).
type actor struct {
	name  string
	sb    *sandbox.Sandbox
	pol   refPolicy
	roots []string        // canonical writable roots, the workdir first
	off   map[string]bool // commands switched off
	outer string          // a read root holding every root, or ""
}

// rootOf is the writable root of a holding abs, and abs relative to it.
func (a *actor) rootOf(abs string) (root, rel string, ok bool) {
	for _, r := range a.roots {
		if abs == r {
			return r, ".", true
		}
		if strings.HasPrefix(abs, r+"/") {
			return r, filepath.ToSlash(abs[len(r)+1:]), true
		}
	}
	return "", "", false
}

// spell is how a names abs to fsbox: relative in its workdir, absolute
// elsewhere.
func (a *actor) spell(abs string) string {
	if root, rel, ok := a.rootOf(abs); ok && root == a.roots[0] {
		return rel
	}
	return abs
}

// abs is the absolute path of a path a spelled.
func (a *actor) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(a.roots[0], p)
}

func (a *actor) isRoot(d string) bool { return slices.Contains(a.roots, d) }

// newActor opens a sandbox on work (and writeRoots) under pol with the
// commands off switched off.
func (s *sequence) newActor(name, work string, writeRoots []string, pol refPolicy, off map[string]bool, outer, journal string) *actor {
	p := policy.DefaultPolicy(work)
	pol.apply(p)
	p.WriteRoots = writeRoots
	p.Paths.DenyHardlinks = s.denyHardlinks
	for c := range off {
		p.Commands[c] = false
	}
	if outer != "" {
		p.ReadRoots = []string{outer}
	}
	if journal != "" {
		p.Journal.State = journal
	} else {
		p.Journal.Enabled = false
	}
	sb, err := sandbox.New(p, "")
	if err != nil {
		s.t.Fatalf("seed %d: policy %s %+v: %v", s.seed, name, pol, err)
	}
	return &actor{name: name, sb: sb, pol: pol, roots: append([]string{work}, writeRoots...), off: off, outer: outer}
}

// randomOff switches some commands off, in half the policies.
func (s *sequence) randomOff() map[string]bool {
	off := map[string]bool{}
	if s.r.IntN(2) == 0 {
		for _, c := range []string{"edit", "write", "rm", "mv", "cp"} {
			if s.r.IntN(3) == 0 && (c != "write" || s.r.IntN(2) == 0) {
				off[c] = true
			}
		}
		if s.r.IntN(8) == 0 {
			off["patch"] = true
		}
	}
	return off
}

// setUp builds the trees, the files outside, the policies and their
// sandboxes, and what is protected. It returns false when a sequence
// fails before its first step.
func (s *sequence) setUp() bool {
	must(s.t, os.MkdirAll(s.work, 0o755))
	s.roots = []string{s.work}
	s.buildTree(s.work, 0)
	var writeRoots []string
	if s.r.IntN(2) == 0 {
		for k := range 1 + s.r.IntN(2) {
			wr := filepath.Join(s.base, fmt.Sprintf("wr%d", k+1))
			must(s.t, os.Mkdir(wr, 0o755))
			s.buildTree(wr, k+1)
			writeRoots = append(writeRoots, wr)
		}
	}
	s.roots = append(s.roots, writeRoots...)
	out := filepath.Join(s.base, "outside")
	must(s.t, os.Mkdir(out, 0o755))
	for i, name := range []string{"o1.txt", "o2.md", "policy.toml"} {
		marker := fmt.Sprintf("OUT-%d-%d-", s.seed%100000, i)
		f := &propFile{abs: filepath.Join(out, name), rel: name, content: marker + "\nalpha\n", mode: 0o644, marker: marker, own: name == "policy.toml"}
		must(s.t, os.WriteFile(f.abs, []byte(f.content), f.mode))
		must(s.t, os.Chmod(f.abs, f.mode))
		s.outside = append(s.outside, f)
		if f.own {
			s.own = append(s.own, f.abs)
		}
	}
	s.denyHardlinks = s.r.IntN(2) == 0
	journal := ""
	if s.r.IntN(3) == 0 {
		journal = s.t.TempDir()
	}
	polA := s.randomPolicy(s.relDirs)
	if s.r.IntN(2) == 0 {
		must(s.t, os.Mkdir(filepath.Join(s.base, "x"), 0o755))
		s.outer = s.base
	}
	s.actors = []*actor{s.newActor("A", s.work, writeRoots, polA, s.randomOff(), s.outer, journal)}
	var subs []string
	for _, d := range s.dirs {
		if strings.HasPrefix(d, s.work+"/") {
			subs = append(subs, d)
		}
	}
	if len(subs) > 0 && s.r.IntN(2) == 0 {
		sub := s.pick(subs)
		var rel []string
		for _, d := range s.dirs {
			if strings.HasPrefix(d, sub+"/") {
				rel = append(rel, d[len(sub)+1:])
			}
		}
		polB := s.randomPolicy(rel)
		if s.r.IntN(2) == 0 { // stricter: A's unanchored rules too
			for _, g := range polA.Deny {
				if strings.HasPrefix(g, "**/") {
					polB.Deny = append(polB.Deny, g)
				}
			}
			for _, g := range polA.WriteDeny {
				if strings.HasPrefix(g, "**/") {
					polB.WriteDeny = append(polB.WriteDeny, g)
				}
			}
		}
		s.actors = append(s.actors, s.newActor("B", sub, nil, polB, s.randomOff(), "", journal))
		for d := sub; d != s.work; d = filepath.Dir(d) {
			s.pinned[d] = true
		}
		// The counter: a name both policies may read and write, where one
		// is left.
		for _, name := range []string{"counter.md", "counter.txt", "counter.toml", "counter"} {
			c := filepath.Join(sub, name)
			if _, err := os.Lstat(c); err == nil {
				continue
			}
			ok := true
			for _, a := range s.actors {
				_, rel, _ := a.rootOf(c)
				ok = ok && !a.pol.refused(rel, false, false) && !a.pol.refused(rel, false, true)
			}
			if s.counter == "" || ok {
				s.counter = c
			}
			if ok {
				break
			}
		}
		must(s.t, os.WriteFile(s.counter, []byte("0\n"), 0o644))
	}
	if len(s.files) > 0 {
		f := s.files[s.r.IntN(len(s.files))]
		f.own = true
		s.own = append(s.own, f.abs)
	}
	for _, a := range s.actors {
		a.sb.Protect("the active policy file", s.outside[2].abs)
		for _, f := range s.files {
			if f.own {
				a.sb.Protect("fsbox's own executable", f.abs)
			}
		}
	}
	for _, f := range s.files {
		readAll, writeAll := true, true
		for _, a := range s.actors {
			if _, rel, ok := a.rootOf(f.abs); ok {
				readAll = readAll && a.pol.refused(rel, false, false)
				writeAll = writeAll && a.pol.refused(rel, false, true)
			}
		}
		f.readP, f.writeP = readAll, writeAll || f.own
	}
	s.sealed = map[string][]string{}
	for _, d := range s.dirs {
		if s.actors[0].isRoot(d) {
			continue
		}
		all := true
		for _, a := range s.actors {
			if _, rel, ok := a.rootOf(d); ok && !a.pol.refused(rel, true, true) {
				all = false
			}
		}
		if all {
			s.sealed[d] = listNames(d)
		}
	}
	return true
}

// snapEntry is one entry below the test's directory: its type (d, f, l
// or o), mode, and content or link target.
type snapEntry struct {
	kind byte
	mode fs.FileMode
	data string
}

// snapshot is everything below base (fsbox's temporary files left out),
// by plain os calls.
func snapshot(base string) map[string]snapEntry {
	out := map[string]snapEntry{}
	filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == base || strings.HasPrefix(d.Name(), ".fsbox-tmp-") {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		e := snapEntry{kind: 'o', mode: fi.Mode()}
		switch {
		case fi.IsDir():
			e.kind = 'd'
		case fi.Mode()&fs.ModeSymlink != 0:
			e.kind = 'l'
			e.data, _ = os.Readlink(p)
		case fi.Mode().IsRegular():
			e.kind = 'f'
			b, _ := os.ReadFile(p)
			e.data = string(b)
		}
		out[p] = e
		return nil
	})
	return out
}

// diffSnap lists the entries that differ between two snapshots.
func diffSnap(a, b map[string]snapEntry) []string {
	var out []string
	for p, e := range a {
		if f, ok := b[p]; !ok || f != e {
			out = append(out, p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// mayChange says why a may not change the entry abs (that was old and
// is now new; kind 0 for none), or "".
func (s *sequence) mayChange(a *actor, abs string, old, new snapEntry) string {
	for _, o := range s.own {
		if abs == o || strings.HasPrefix(o, abs+"/") {
			return "it is, or holds, fsbox's own file " + o
		}
	}
	_, rel, ok := a.rootOf(abs)
	switch {
	case !ok:
		return "it lies outside every writable root of " + a.name
	case rel == ".":
		return "it is " + a.name + "'s writable root itself"
	}
	for _, e := range []snapEntry{old, new} {
		if e.kind != 0 && a.pol.refused(rel, e.kind == 'd', true) {
			return fmt.Sprintf("%s's rules refuse writing %s there", a.name, rel)
		}
	}
	return ""
}

// mayRead says why a may not read abs (named through the outer read
// root when viaOuter), or "": after symlinks it must lie in a root of a,
// in the root it was named in (unless an outer root holds both), where
// a's rules let it be read; and under deny_hardlinks have one link only.
func (s *sequence) mayRead(a *actor, abs string, viaOuter bool) string {
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return ""
	}
	lex, _, _ := a.rootOf(abs)
	root, rel, ok := a.rootOf(real)
	switch {
	case !ok && a.outer != "" && strings.HasPrefix(real, a.outer+"/"):
		return ""
	case !ok:
		return fmt.Sprintf("it is %s, outside every root of %s", real, a.name)
	case !viaOuter && a.outer == "" && lex != "" && root != lex:
		return fmt.Sprintf("it is %s: a symlink was followed from the root %s into %s", real, lex, root)
	case a.pol.refused(rel, false, false):
		return fmt.Sprintf("it is %s, and %s's rules refuse reading %s", real, a.name, rel)
	}
	if s.denyHardlinks {
		if fi, err := os.Stat(real); err == nil && fi.Mode().IsRegular() {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && uint64(st.Nlink) > 1 {
				return fmt.Sprintf("it has %d links, and deny_hardlinks is on", st.Nlink)
			}
		}
	}
	return ""
}

// checkChanges checks what one step of a changed on disk: nothing when
// it failed, was a dry run or needs a command that is off (cmds: its own
// and those it needs); else only entries a may write.
func (s *sequence) checkChanges(a *actor, desc string, before, after map[string]snapEntry, err error, dry bool, cmds []string) {
	changed := diffSnap(before, after)
	off := ""
	for _, c := range cmds {
		if a.off[c] {
			off = c
			break
		}
	}
	switch {
	case off != "" && err == nil:
		s.fail("%s succeeded, yet it needs %s, which %s's policy switches off", desc, off, a.name)
	case off != "" && len(changed) > 0:
		s.fail("%s changed %v, yet it needs %s, which %s's policy switches off", desc, changed, off, a.name)
	case dry && len(changed) > 0:
		s.fail("%s is a dry run, yet it changed %v", desc, changed)
	case err != nil && len(changed) > 0:
		s.fail("%s failed (%v), yet it changed %v", desc, err, changed)
	}
	for _, p := range changed {
		if why := s.mayChange(a, p, before[p], after[p]); why != "" {
			s.fail("%s changed %s (%q -> %q), yet %s", desc, p, before[p].data, after[p].data, why)
			return
		}
	}
}

// checkOutside: the files outside every root, and fsbox's own files,
// still hold their content and mode at their place.
func (s *sequence) checkOutside(when string) {
	for _, f := range s.outside {
		s.checkFile(f, when)
	}
	for _, f := range s.files {
		if f.own {
			s.checkFile(f, when)
		}
	}
}

// openDirs are A's directories another process may add to: every one
// not sealed (the checks are on fsbox's doing).
func (s *sequence) openDirs(dirs []string) []string {
	var open []string
	for _, d := range dirs {
		if _, sealed := s.sealed[d]; !sealed {
			open = append(open, d)
		}
	}
	return open
}

// outsideSymlink: another process (not fsbox) makes a relative symlink
// in one of the roots, to anything: a file or directory of any root,
// protected or not, a file outside every root, or a missing name below
// one.
func (s *sequence) outsideSymlink(label string) (string, error) {
	dirs, files := s.current(s.actors[0])
	at := filepath.Join(s.pick(s.openDirs(dirs)), "ln"+label)
	var to string
	switch k := s.r.IntN(5); {
	case k == 0 || len(files) == 0:
		to = filepath.Join(s.pick(dirs), s.pick(propFiles), s.pick(propDirs))
	case k == 1:
		to = s.outside[s.r.IntN(len(s.outside))].abs
	case k == 2:
		to = s.pick(dirs)
	default:
		to = s.pick(files)
	}
	rel, _ := filepath.Rel(filepath.Dir(at), to)
	return fmt.Sprintf("(outside) ln -s %s %s", rel, at), os.Symlink(rel, at)
}

// outsideHardlink: another process hard-links a file into one of the
// roots: a file outside every root (fsbox's own among them), a protected
// file, or any file of any root. Without deny_hardlinks a link to a
// protected file exposes its marker: the other process made it readable.
func (s *sequence) outsideHardlink(label string) (string, error) {
	dirs, files := s.current(s.actors[0])
	var srcs []string
	switch s.r.IntN(3) {
	case 0:
		for _, f := range s.files {
			if f.readP || f.writeP || f.own {
				srcs = append(srcs, f.abs)
			}
		}
	case 1:
		srcs = files
	}
	var regular []string
	for _, p := range srcs {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			regular = append(regular, p)
		}
	}
	src := s.outside[s.r.IntN(len(s.outside))].abs
	if len(regular) > 0 {
		src = s.pick(regular)
	}
	at := filepath.Join(s.pick(s.openDirs(dirs)), "hl"+label)
	err := os.Link(src, at)
	if err == nil {
		s.linked = append(s.linked, at)
		if !s.denyHardlinks {
			b, _ := os.ReadFile(src)
			for _, f := range s.files {
				if f.readP && strings.Contains(string(b), f.marker) {
					s.exposed[f.marker] = true
				}
			}
		}
	}
	return fmt.Sprintf("(outside) ln %s %s", src, at), err
}

// linkedIn are the hard links another process made that a reaches and
// that are still there.
func (s *sequence) linkedIn(a *actor) []string {
	var out []string
	for _, p := range s.linked {
		if _, _, ok := a.rootOf(p); ok {
			if _, err := os.Lstat(p); err == nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// randomPatch writes a patch in the *** Begin Patch envelope with one or
// two actions on a's files (names in any of its roots), and the commands
// its actions need besides patch: edit (update), write (add), rm
// (delete), mv (move), mv and edit (a move with a hunk).
func (s *sequence) randomPatch(a *actor, r *rand.Rand, dirs, files []string, label string) (text, desc string, needs []string) {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	var parts []string
	hunk := func(p string) string {
		old, new := "alpha", "beta"
		if c, _ := os.ReadFile(p); !strings.Contains(string(c), "alpha\n") && strings.Contains(string(c), "beta\n") {
			old, new = new, old
		}
		return "@@\n-" + old + "\n+" + new + "\n"
	}
	// Two times in three the names are ones a's rules let it write (so
	// that a command switched off is what refuses the patch).
	if r.IntN(3) > 0 {
		var wdirs, wfiles []string
		for _, d := range dirs {
			if _, rel, ok := a.rootOf(d); ok && !a.pol.refused(rel, true, true) {
				wdirs = append(wdirs, d)
			}
		}
		for _, f := range files {
			_, rel, ok := a.rootOf(f)
			if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() && ok && !a.pol.refused(rel, false, true) {
				wfiles = append(wfiles, f)
			}
		}
		if len(wdirs) > 0 {
			dirs, files = wdirs, wfiles
		}
	}
	newName := func() string { return filepath.Join(pick(r, dirs), pick(r, propFiles)) }
	used := map[string]bool{}
	for range 1 + r.IntN(2) {
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
			fmt.Fprintf(&b, "*** Add File: %s\n+added %s\n", a.spell(p), label)
			parts = append(parts, "add "+a.spell(p))
			needs = append(needs, "write")
		case 1:
			fmt.Fprintf(&b, "*** Update File: %s\n%s", a.spell(p), hunk(p))
			parts = append(parts, "update "+a.spell(p))
			needs = append(needs, "edit")
		case 2:
			fmt.Fprintf(&b, "*** Delete File: %s\n", a.spell(p))
			parts = append(parts, "delete "+a.spell(p))
			needs = append(needs, "rm")
		case 3:
			dst := newName()
			fmt.Fprintf(&b, "*** Update File: %s\n*** Move to: %s\n", a.spell(p), a.spell(dst))
			needs = append(needs, "mv")
			what := "move "
			if r.IntN(2) == 0 {
				b.WriteString(hunk(p))
				needs = append(needs, "edit")
				what = "move+update "
			}
			parts = append(parts, what+a.spell(p)+" -> "+a.spell(dst))
		}
	}
	b.WriteString("*** End Patch\n")
	return b.String(), "patch [" + strings.Join(parts, ", ") + "]", needs
}

// increment raises the counter through a by compare-and-swap: it reads
// the counter, then writes it one higher with the hash it read as
// ExpectSHA256; a write that succeeds is acknowledged.
func (s *sequence) increment(a *actor) (string, error) {
	ctx := context.Background()
	p := a.spell(s.counter)
	r, err := Read(ctx, a.sb, ReadOptions{Path: p})
	if err != nil {
		return "cas " + p + " (read)", err
	}
	if r.SHA256 == nil {
		return "cas " + p + " (read)", fmt.Errorf("read gave no sha256")
	}
	n, _ := strconv.Atoi(strings.TrimSpace(r.Content))
	desc := fmt.Sprintf("cas %s %d->%d", p, n, n+1)
	_, err = Write(ctx, a.sb, WriteOptions{Path: p, Content: strings.NewReader(fmt.Sprintf("%d\n", n+1)), ExpectSHA256: *r.SHA256})
	if err == nil {
		s.mu.Lock()
		s.acked++
		s.mu.Unlock()
	}
	return desc, err
}

// concurrent runs steps calls through each policy at once, a goroutine
// each, two thirds of them compare-and-swap increments of the counter;
// then every entry that changed must be one some policy may write, and
// the counter must equal the writes acknowledged.
func (s *sequence) concurrent(steps int) {
	before := snapshot(s.base)
	var wg sync.WaitGroup
	for k, a := range s.actors {
		r := rand.New(rand.NewPCG(s.r.Uint64(), uint64(k)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range steps {
				if s.isFailed() {
					return
				}
				label := fmt.Sprintf("%s%d", strings.ToLower(a.name), j)
				if r.IntN(3) == 0 {
					s.step(a, r, label, true)
					continue
				}
				desc, err := s.increment(a)
				outcome := "ok"
				if err != nil {
					outcome = string(fserr.AsError(err).Code)
					if e := fserr.AsError(err); e.Rule != "" {
						outcome += "/" + string(e.Rule)
					}
				}
				s.mu.Lock()
				s.log = append(s.log, fmt.Sprintf("%4s. %s: %s -> %s", label, a.name, desc, outcome))
				s.outcomes["cas "+outcome]++
				s.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if s.failed {
		return
	}
	after := snapshot(s.base)
	for _, p := range diffSnap(before, after) {
		if p == s.counter {
			continue
		}
		var whys []string
		for _, a := range s.actors {
			why := s.mayChange(a, p, before[p], after[p])
			if why == "" {
				whys = nil
				break
			}
			whys = append(whys, why)
		}
		if whys != nil {
			s.fail("in the concurrent phase %s changed, yet %s", p, strings.Join(whys, "; "))
			return
		}
	}
	b, err := os.ReadFile(s.counter)
	if n, _ := strconv.Atoi(strings.TrimSpace(string(b))); err != nil || n != s.acked {
		s.fail("after the concurrent phase: the counter holds %q (%v), yet %d writes of it were acknowledged: a write was lost", b, err, s.acked)
		return
	}
	s.mu.Lock()
	s.log = append(s.log, fmt.Sprintf("     (the concurrent phase ends: the counter holds %d)", s.acked))
	s.mu.Unlock()
	for _, a := range s.actors {
		s.checkReads(a, "the concurrent phase")
	}
	s.checkOutside("after the concurrent phase")
}
