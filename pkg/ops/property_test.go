//go:build unix

package ops

// The property of issue 12 ("Prove the rule, not the examples"): under a
// random policy over a random tree, no sequence of mkdir/write/append/mv/
// cp/rm -r/edit/patch calls makes a file that a rule protects at its
// original place readable, or changes it. After every step every path
// fsbox can be asked about (each file on disk, by its name, and everything
// find and grep reach) is read, and no protected file's marker may come
// back; at the end every protected file still holds its content and mode,
// checked with plain os calls.
//
// Which files are protected is decided by a reference matcher written
// here from SPEC §4 (a rule on a path covers everything beneath it; globs
// and regexes alike; deny and write_deny case-insensitive; allow on
// non-directories only), not by the sandbox's own matcher.
//
// Bounded by count: FSBOX_PROPERTY_N sequences (default 20, 5 with
// -short) of FSBOX_PROPERTY_STEPS steps (default 30); `make fuzz` runs
// many more. FSBOX_PROPERTY_SEED fixes the seed; a failure prints it with
// the policies, the tree and the steps, and
// FSBOX_PROPERTY_SEED=<seed> FSBOX_PROPERTY_N=1 replays that sequence (the
// concurrent phase of a nested sequence, below, replays its draws but not
// its interleaving).
//
// Fails on the pre-fix main (1b30963) (issue 12 items 1 and 9): a seed finds an
// ancestor rename or a regex-denied directory within a few sequences.
//
// Beside fsbox's calls, another process makes symlinks in the workdir (to
// anything, dangling ones too), and half the sequences add a read root
// holding the workdir, read and grepped through it as well; no directory
// refused for writing may gain an entry. On 18ba4d1 this finds, within a
// hundred sequences, files read through the outer root (the rules were
// matched relative to the root a path's spelling picked) and directories
// made inside a denied one through a dangling symlink.
//
// Issue 25 ("one door") extends it (property_door_test.go holds the
// pieces):
//
//   - Several writable roots: half the sequences add one or two
//     write_roots (sibling directories with trees of their own); steps
//     name paths in any root (absolute in a write root) and move and copy
//     between roots; the reference matcher applies the rules relative to
//     the root a path lies in.
//   - Nested policies: half the sequences open a second sandbox, B, whose
//     workdir is a directory of A's tree, with rules of its own (some of
//     A's kept). Steps go through A and B in turn, and in the middle of
//     the sequence through both at once (a goroutine each, the sandboxes
//     excluding each other through flock), both also raising a shared
//     counter by compare-and-swap (read, then write with ExpectSHA256):
//     at the end the counter equals the writes acknowledged. A file is
//     protected when every policy reaching it refuses it.
//   - Every step of fsbox is diffed (content, mode, type and link target
//     of everything below the test's directory, plain os calls): each
//     entry that changed must lie in a writable root of the policy that
//     ran the step and be writable by its rules, and must not be one of
//     fsbox's own files (one tree file and one file outside are
//     registered with Sandbox.Protect) or an ancestor of one; a call that
//     failed, a dry run and a call whose command is switched off change
//     nothing; and a read that succeeds must be of a path its policy may
//     read (after symlinks, never out of the root it was named in, and
//     under deny_hardlinks never of a file with more than one link).
//   - Command toggles: half the policies switch off some of edit, write,
//     rm, mv, cp (and patch now and then); patch steps (add, update,
//     delete, move, in the *** Begin Patch envelope, names in any root)
//     need patch and their actions' commands (update edit, add write,
//     delete rm, move mv), and one that needs a command switched off
//     fails and changes nothing.
//   - Hard links: the other process also links files into the roots:
//     files outside every root (one of them fsbox's own), protected files
//     and files of other roots. Append picks the linked names often. A
//     file outside every root never changes (checked after every step);
//     without deny_hardlinks a link to a protected file makes its marker
//     readable by the other process's doing, so that marker is no longer
//     looked for.
//
// Not covered: B's workdir (and its ancestors) is never moved or removed
// by A's steps, and the counter is left to the compare-and-swap steps.
//
// Checked on 9184bde by reverting each fix by hand and running ten runs
// of the default 20 sequences (FSBOX_PROPERTY_SEED=1000, 2000, ...
// 10000), noting the sequence each run failed at:
//
//   - With the append refusal reverted (sharedInode in change.go, which
//     Append calls, accepting any link count), 9 runs of 10 find an
//     append through another process's hard link changing a file outside
//     every root, fsbox's own file or a protected file, at sequence 1, 8,
//     10, 13, 4, 3, 15, 3 and 4 (median 4; the run from 5000 passes).
//   - With the ancestor locks reverted (lockRoots skipping the shared
//     locks), 10 runs of 10 find an acknowledged write of the counter
//     lost between A and B, at sequence 1, 8, 5, 4, 6, 2, 4, 5, 6 and 7
//     (median 5); under -race 3 runs of 3, at 1, 6 and 12.
//   - With the patch toggles reverted (checkPatchFile accepting every
//     action), 10 runs of 10 find a patch applied (or dry-run) with edit,
//     write, rm or mv switched off, at sequence 2, 9, 7, 9, 15, 1, 2, 4,
//     13 and 1 (median 5.5).

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func TestPropertySequences(t *testing.T) {
	n := envInt("FSBOX_PROPERTY_N", 20)
	if testing.Short() && os.Getenv("FSBOX_PROPERTY_N") == "" {
		n = 5
	}
	steps := envInt("FSBOX_PROPERTY_STEPS", 30)
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("FSBOX_PROPERTY_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("FSBOX_PROPERTY_SEED=%d, %d sequences of %d steps", seed, n, steps)
	failed := 0
	outcomes := map[string]int{}
	for i := range n {
		if !runSequence(t, seed+uint64(i), steps, outcomes) {
			failed++
			if failed >= envInt("FSBOX_PROPERTY_MAXFAIL", 3) {
				t.Fatalf("stopping after %d failing sequences", failed)
			}
		}
	}
	t.Logf("outcomes: %v", outcomes)
}

var (
	propDirs  = []string{"data", "secrets", "app", "config", "docs", "vault", "private", "notes.md", ".ssh", ".git", "x"}
	propFiles = []string{"k.txt", "a.md", "prod.toml", "id_rsa", "b.txt", ".env", "c.lock", "notes.md"}
)

// refPolicy is the policy and the reference decision of SPEC §4.
type refPolicy struct {
	Deny, Allow, WriteDeny, DenyRegex, AllowRegex []string
}

func (p refPolicy) apply(sp *policy.Policy) {
	sp.Paths.Deny = p.Deny
	sp.Paths.Allow = p.Allow
	sp.Paths.WriteDeny = append(sp.Paths.WriteDeny, p.WriteDeny...)
	sp.Paths.DenyRegex = p.DenyRegex
	sp.Paths.AllowRegex = p.AllowRegex
	sp.Commands["rm"] = true
}

// anchorGlob drops a leading "/" or "./": globs match root-relative
// paths, and the leading slash only anchors (SPEC §4).
func anchorGlob(g string) string {
	for strings.HasPrefix(g, "/") || strings.HasPrefix(g, "./") {
		g = strings.TrimPrefix(strings.TrimPrefix(g, "./"), "/")
	}
	return g
}

// ancestors is rel and each of its parent directories.
func ancestors(rel string) []string {
	var out []string
	for p := rel; p != "." && p != ""; p = path.Dir(p) {
		out = append(out, p)
	}
	return out
}

var refRegexps sync.Map // expression → *regexp.Regexp

func refRegexp(expr string) *regexp.Regexp {
	if re, ok := refRegexps.Load(expr); ok {
		return re.(*regexp.Regexp)
	}
	re := regexp.MustCompile(expr)
	refRegexps.Store(expr, re)
	return re
}

// refused reports whether the policy refuses reading (write false) or
// writing (write true) the file or directory rel, relative to the root
// it lies in.
func (p refPolicy) refused(rel string, isDir, write bool) bool {
	lower := strings.ToLower(rel)
	globs := p.Deny
	if write {
		globs = append(append([]string{}, p.Deny...), p.WriteDeny...)
		globs = append(globs, "**/.git/**") // the default policy's write_deny
	}
	for _, a := range ancestors(lower) {
		for _, g := range globs {
			if ok, _ := doublestar.Match(strings.ToLower(anchorGlob(g)), a); ok {
				return true
			}
		}
	}
	for _, a := range ancestors(rel) {
		for _, r := range p.DenyRegex {
			if refRegexp("(?i)" + r).MatchString(a) {
				return true
			}
		}
	}
	if isDir || len(p.Allow)+len(p.AllowRegex) == 0 {
		return false
	}
	for _, g := range p.Allow {
		if ok, _ := doublestar.Match(anchorGlob(g), rel); ok {
			return false
		}
	}
	for _, r := range p.AllowRegex {
		if refRegexp(r).MatchString(rel) {
			return false
		}
	}
	return true
}

type propFile struct {
	abs     string // where it lies at the start
	rel     string // relative to the writable root holding it
	content string
	mode    fs.FileMode
	marker  string
	readP   bool // refused for reading at its original place by every policy reaching it
	writeP  bool // refused for writing there by every policy reaching it (or one of fsbox's own files)
	own     bool // registered with Sandbox.Protect
}

type sequence struct {
	t    *testing.T
	seed uint64
	r    *rand.Rand
	base string // holds every root, the outside files and the outer read root
	work string // A's workdir
	// roots are every writable root (A's): the workdir, then write_roots.
	roots []string
	// relDirs are the directories of the trees, relative to their root
	// (the rules are drawn from them).
	relDirs []string
	// actors are the sandboxes acting: A, and B when the sequence nests a
	// second policy below A's workdir.
	actors []*actor
	files  []*propFile
	dirs   []string // every directory at the start, absolute
	// outside are files outside every root (one of them fsbox's own).
	outside []*propFile
	// own are the files registered with Protect, absolute.
	own []string
	// sealed holds each directory refused for writing at the start (by
	// every policy reaching it), with the names it held: none may be
	// added, whatever the steps do.
	sealed map[string][]string
	// outer, when set, is A's read root holding everything (base), so
	// every file is also reachable through it (base/x/../work/...).
	outer string
	// denyHardlinks is both policies' deny_hardlinks.
	denyHardlinks bool
	// counter is the file both policies raise by compare-and-swap (in
	// B's workdir), or ""; acked counts the writes acknowledged.
	counter string
	acked   int
	// pinned are B's workdir and its ancestors below A's: steps never
	// move or remove them.
	pinned map[string]bool
	// linked are the names another process hard-linked; exposed are the
	// markers it made readable so (a link to a protected file without
	// deny_hardlinks).
	linked  []string
	exposed map[string]bool

	mu       sync.Mutex // guards log, failed and outcomes in the concurrent phase
	log      []string
	failed   bool
	outcomes map[string]int // "op outcome" -> count, over every sequence
}

func (s *sequence) fail(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed {
		return
	}
	s.failed = true
	var tree []string
	for _, f := range s.files {
		tree = append(tree, fmt.Sprintf("  %s (%s) read-protected=%v write-protected=%v own=%v", f.abs, f.marker, f.readP, f.writeP, f.own))
	}
	for _, f := range s.outside {
		tree = append(tree, fmt.Sprintf("  %s (%s) outside own=%v", f.abs, f.marker, f.own))
	}
	var pols []string
	for _, a := range s.actors {
		pol, _ := json.Marshal(a.pol)
		pols = append(pols, fmt.Sprintf("  %s: roots %v, off %v, outer %q: %s", a.name, a.roots, slices.Sorted(maps.Keys(a.off)), a.outer, pol))
	}
	s.t.Errorf("%s\n\nreplay: FSBOX_PROPERTY_SEED=%d FSBOX_PROPERTY_N=1 go test ./pkg/ops -run TestPropertySequences\ndeny_hardlinks=%v counter=%q\npolicies:\n%s\ntree:\n%s\nsteps:\n  %s",
		fmt.Sprintf(format, args...), s.seed, s.denyHardlinks, s.counter, strings.Join(pols, "\n"), strings.Join(tree, "\n"), strings.Join(s.log, "\n  "))
}

func (s *sequence) isFailed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

func pick(r *rand.Rand, l []string) string { return l[r.IntN(len(l))] }

func (s *sequence) pick(l []string) string { return pick(s.r, l) }

// buildTree makes a random tree in root: a few directories up to three
// deep and files in them, each file with a unique marker and a line
// "alpha" for edit to find.
func (s *sequence) buildTree(root string, idx int) {
	dirs := []string{"."}
	nd, nf := 3+s.r.IntN(5), 6+s.r.IntN(8)
	if idx > 0 { // a write root: a smaller tree
		nd, nf = 2+s.r.IntN(3), 3+s.r.IntN(4)
	}
	for range nd {
		d := path.Join(s.pick(dirs), s.pick(propDirs))
		if strings.Count(d, "/") > 2 || contains(dirs, d) {
			continue
		}
		dirs = append(dirs, d)
	}
	seen := map[string]bool{}
	var files []*propFile
	for i := range nf {
		rel := path.Join(s.pick(dirs), s.pick(propFiles))
		if seen[rel] || contains(dirs, rel) {
			continue
		}
		seen[rel] = true
		marker := fmt.Sprintf("MARK-%d-%d-%d-", s.seed%100000, idx, i)
		files = append(files, &propFile{abs: filepath.Join(root, rel), rel: rel, marker: marker, content: marker + "\nalpha\n", mode: fs.FileMode(0o600 + 0o040*uint32(s.r.IntN(2)))})
	}
	for _, d := range dirs {
		must(s.t, os.MkdirAll(filepath.Join(root, d), 0o755))
		s.dirs = append(s.dirs, filepath.Join(root, d))
		if d != "." && !contains(s.relDirs, d) {
			s.relDirs = append(s.relDirs, d)
		}
	}
	for _, f := range files {
		must(s.t, os.WriteFile(f.abs, []byte(f.content), f.mode))
		must(s.t, os.Chmod(f.abs, f.mode))
	}
	s.files = append(s.files, files...)
}

// randomPolicy draws rules that hit the tree (dirs: its directories,
// relative to their roots): anchored globs on real directories,
// unanchored globs on names and extensions, regexes (anchored and not),
// allow lists and write_deny.
func (s *sequence) randomPolicy(realDirs []string) refPolicy {
	var p refPolicy
	anyDir := func() string {
		if len(realDirs) == 0 {
			return "data"
		}
		return s.pick(realDirs)
	}
	for range s.r.IntN(3) {
		switch s.r.IntN(6) {
		case 0:
			p.Deny = append(p.Deny, anyDir()+"/**")
		case 1:
			p.Deny = append(p.Deny, anyDir()+"/*")
		case 2:
			p.Deny = append(p.Deny, "**/"+s.pick(propDirs)+"/**")
		case 3:
			p.Deny = append(p.Deny, "**/"+s.pick(propFiles))
		case 4:
			p.Deny = append(p.Deny, "**/*"+path.Ext(s.pick(propFiles)))
		case 5:
			p.Deny = append(p.Deny, "/"+anyDir()+"/**") // a leading / anchors too
		}
	}
	for range s.r.IntN(2) {
		switch s.r.IntN(4) {
		case 0:
			p.DenyRegex = append(p.DenyRegex, "^"+regexp.QuoteMeta(anyDir())+"/")
		case 1:
			p.DenyRegex = append(p.DenyRegex, `(^|/)`+regexp.QuoteMeta(s.pick(propDirs))+`$`)
		case 2:
			p.DenyRegex = append(p.DenyRegex, regexp.QuoteMeta(s.pick(propFiles))+"$")
		case 3:
			p.DenyRegex = append(p.DenyRegex, "^"+regexp.QuoteMeta(anyDir())+"$")
		}
	}
	if s.r.IntN(4) == 0 {
		switch s.r.IntN(3) {
		case 0:
			p.Allow = []string{"**/*.md", "docs/**"}
		case 1:
			p.Allow = []string{"**/*.txt", "**/*.md", "**/*.toml"}
		case 2:
			p.Allow = []string{anyDir() + "/**", "**/*.md"}
		}
		if s.r.IntN(3) == 0 {
			p.AllowRegex = []string{`\.lock$`}
		}
	}
	for range s.r.IntN(3) {
		switch s.r.IntN(3) {
		case 0:
			p.WriteDeny = append(p.WriteDeny, anyDir()+"/**")
		case 1:
			p.WriteDeny = append(p.WriteDeny, "**/*.lock")
		case 2:
			p.WriteDeny = append(p.WriteDeny, "**/"+s.pick(propFiles))
		}
	}
	return p
}

// current lists what is on disk now in a's writable roots (plain os
// calls: an attacker knows every name, denied or not): directories (the
// roots among them) and everything else, absolute; the counter is left
// out.
func (s *sequence) current(a *actor) (dirs, files []string) {
	for _, root := range a.roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
			case d.IsDir():
				dirs = append(dirs, p)
			case strings.HasPrefix(d.Name(), ".fsbox-tmp-") || p == s.counter:
			default:
				files = append(files, p)
			}
			return nil
		})
	}
	return dirs, files
}

// protectedMarkers are the markers of files refused for reading at their
// original place that no other process exposed.
func (s *sequence) protectedMarkers() []string {
	var out []string
	for _, f := range s.files {
		if f.readP && !s.exposed[f.marker] {
			out = append(out, f.marker)
		}
	}
	return out
}

func firstLeak(v any, err error, markers []string) string {
	b, _ := json.Marshal(v)
	str := string(b)
	if err != nil {
		str += " " + err.Error()
	}
	for _, m := range markers {
		if strings.Contains(str, m) {
			return m
		}
	}
	return ""
}

// step runs one random call through a (or, sequential only, another
// process's act) and checks its own answer; sequential steps also check
// what changed on disk.
func (s *sequence) step(a *actor, r *rand.Rand, label string, concurrent bool) {
	ctx := context.Background()
	dirs, files := s.current(a)
	pk := func(l []string) string { return pick(r, l) }
	sp := a.spell
	target := func() string { // a name to create or replace
		if len(files) > 0 && r.IntN(3) == 0 {
			return pk(files)
		}
		if len(files) > 0 && r.IntN(4) == 0 { // below a file or a symlink, maybe a dangling one
			return filepath.Join(pk(files), pk(propDirs), pk(propFiles))
		}
		names := propFiles
		if r.IntN(3) == 0 {
			names = propDirs
		}
		return filepath.Join(pk(dirs), pk(names))
	}
	anyEntry := func() string { // a source to move or remove
		var all []string
		for _, d := range dirs {
			if !a.isRoot(d) && !s.pinned[d] {
				all = append(all, d)
			}
		}
		all = append(all, files...)
		if len(all) == 0 {
			return filepath.Join(a.roots[0], "x")
		}
		return pk(all)
	}
	anyFile := func() string {
		if len(files) == 0 {
			return filepath.Join(a.roots[0], "k.txt")
		}
		return pk(files)
	}
	content := fmt.Sprintf("W-%d-%s\nalpha\n", s.seed%100000, label)
	var desc, cmd string
	var res any
	var err error
	var dry, outside bool
	var needs []string // the commands the call needs (beside its own)
	kinds := 12
	if s.counter != "" && !concurrent {
		kinds = 13
	}
	var before map[string]snapEntry
	if !concurrent {
		before = snapshot(s.base)
	}
	switch k := r.IntN(kinds); k {
	case 8, 9:
		if concurrent {
			return
		}
		outside = true
		if k == 8 {
			desc, err = s.outsideSymlink(label)
		} else {
			desc, err = s.outsideHardlink(label)
		}
	case 0:
		cmd = "mkdir"
		p := filepath.Join(pk(dirs), pk(propDirs))
		if len(files) > 0 && r.IntN(3) == 0 {
			p = filepath.Join(pk(files), pk(propDirs))
		}
		desc = "mkdir " + sp(p)
		res, err = Mkdir(ctx, a.sb, sp(p))
	case 1:
		cmd = "write"
		p := target()
		nc := r.IntN(3) == 0
		desc = fmt.Sprintf("write %s (no-clobber %v)", sp(p), nc)
		res, err = Write(ctx, a.sb, WriteOptions{Path: sp(p), NoClobber: nc, Content: strings.NewReader(content)})
	case 2:
		cmd = "write"
		p := anyFile()
		if l := s.linkedIn(a); len(l) > 0 && r.IntN(2) == 0 {
			p = pk(l)
		}
		desc = "write --append " + sp(p)
		res, err = Write(ctx, a.sb, WriteOptions{Path: sp(p), Append: true, Content: strings.NewReader(content)})
	case 3, 4:
		cmd = "mv"
		src, dst := anyEntry(), target()
		if r.IntN(2) == 0 {
			dst = filepath.Join(pk(dirs), filepath.Base(src))
		}
		force := r.IntN(4) == 0
		desc = fmt.Sprintf("mv %s %s (force %v)", sp(src), sp(dst), force)
		res, err = Move(ctx, a.sb, sp(src), sp(dst), force)
	case 5:
		cmd = "cp"
		src, dst := anyFile(), target()
		force := r.IntN(3) == 0
		desc = fmt.Sprintf("cp %s %s (force %v)", sp(src), sp(dst), force)
		res, err = Copy(ctx, a.sb, sp(src), sp(dst), force)
	case 6:
		cmd = "rm"
		p := anyEntry()
		desc = "rm -r " + sp(p)
		res, err = Remove(ctx, a.sb, sp(p), true)
	case 7:
		cmd = "edit"
		p := anyFile()
		dry = r.IntN(3) == 0
		desc = fmt.Sprintf("edit %s alpha->beta (dry-run %v)", sp(p), dry)
		res, err = Edit(ctx, a.sb, EditOptions{Path: sp(p), Edits: []EditSpec{{Old: "alpha", New: "beta", All: true}}, DryRun: dry})
	case 10, 11:
		cmd = "patch"
		var text string
		text, desc, needs = s.randomPatch(a, r, dirs, files, label)
		dry = r.IntN(4) == 0
		if dry {
			desc += " (dry-run)"
		}
		res, err = Patch(ctx, a.sb, PatchOptions{Patch: text, DryRun: dry})
	case 12:
		cmd = "write"
		desc, err = s.increment(a)
	}
	outcome := "ok"
	if err != nil {
		outcome = string(fserr.AsError(err).Code)
		if e := fserr.AsError(err); e.Rule != "" {
			outcome += "/" + string(e.Rule)
		}
	}
	if len(s.actors) > 1 && !outside {
		desc = a.name + ": " + desc
	}
	s.mu.Lock()
	s.log = append(s.log, fmt.Sprintf("%4s. %s -> %s", label, desc, outcome))
	s.outcomes[strings.Fields(strings.TrimPrefix(strings.TrimPrefix(desc, "A: "), "B: "))[0]+" "+outcome]++
	s.mu.Unlock()
	if outside {
		return
	}
	if m := firstLeak(res, err, s.protectedMarkers()); m != "" {
		s.fail("step %s (%s): its answer holds the protected marker %s", label, desc, m)
	}
	if concurrent {
		return
	}
	s.checkChanges(a, desc, before, snapshot(s.base), err, dry, append([]string{cmd}, needs...))
}

// checkReads asks each policy for every file on disk by its name, and for
// everything find and grep reach, and fails if a protected marker comes
// back or a read succeeds that the policy refuses.
func (s *sequence) checkReads(a *actor, after string) {
	ctx := context.Background()
	markers := s.protectedMarkers()
	_, files := s.current(a)
	var asked []string
	for _, f := range files {
		asked = append(asked, a.spell(f))
	}
	for _, root := range a.roots {
		found, _ := Find(ctx, a.sb, FindOptions{Dir: a.spell(root), Hidden: true, NoIgnore: true, MaxDepth: -1})
		if found.Paths != nil {
			asked = append(asked, *found.Paths...)
		}
	}
	seen := map[string]bool{}
	for _, p := range asked {
		if seen[p] {
			continue
		}
		seen[p] = true
		r, err := Read(ctx, a.sb, ReadOptions{Path: p})
		if err != nil {
			continue
		}
		if m := firstLeak(r.Content, nil, markers); m != "" {
			s.fail("after %s: %s: read %s returns the protected marker %s", after, a.name, p, m)
			return
		}
		if why := s.mayRead(a, a.abs(p), false); why != "" {
			s.fail("after %s: %s: read %s succeeds, yet %s", after, a.name, p, why)
			return
		}
	}
	var tops []string
	for _, root := range a.roots {
		tops = append(tops, a.spell(root))
	}
	if a.outer != "" {
		tops = append(tops, a.outer)
		for _, p := range files { // the same files, spelled through the outer read root
			via := filepath.Join(a.outer, "x/..", strings.TrimPrefix(p, a.outer))
			r, err := Read(ctx, a.sb, ReadOptions{Path: via})
			if err != nil {
				continue
			}
			if m := firstLeak(r.Content, nil, markers); m != "" {
				s.fail("after %s: %s: read of %s through the outer root returns the protected marker %s", after, a.name, p, m)
				return
			}
			if why := s.mayRead(a, p, true); why != "" {
				s.fail("after %s: %s: read of %s through the outer root succeeds, yet %s", after, a.name, p, why)
				return
			}
		}
	}
	if len(markers) == 0 {
		return
	}
	for _, top := range tops {
		for _, follow := range []bool{false, true} {
			g, _ := Grep(ctx, a.sb, GrepOptions{Pattern: "MARK-", Paths: []string{top}, Hidden: true, NoIgnore: true, Follow: follow})
			if m := firstLeak(g, nil, markers); m != "" {
				s.fail("after %s: %s: grep -r MARK- %s (follow %v) shows the protected marker %s", after, a.name, top, follow, m)
			}
		}
	}
}

// listNames lists a directory by plain os calls.
func listNames(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// checkUnchanged: every file refused for writing at its original place
// (and each of fsbox's own files) is still there with its content and
// mode, and nothing was added to a directory refused for writing (plain
// os calls).
func (s *sequence) checkUnchanged() {
	for d, names := range s.sealed {
		if now := listNames(d); len(now) > len(names) {
			s.fail("at the end: protected directory %s holds %v, it held %v", d, now, names)
		}
	}
	for _, f := range s.files {
		if f.writeP {
			s.checkFile(f, "at the end")
		}
	}
	s.checkOutside("at the end")
	if s.counter != "" {
		b, err := os.ReadFile(s.counter)
		if n, _ := strconv.Atoi(strings.TrimSpace(string(b))); err != nil || n != s.acked {
			s.fail("at the end: the counter holds %q (%v), yet %d writes of it were acknowledged", b, err, s.acked)
		}
	}
}

// checkFile fails unless f holds its content and mode at its place.
func (s *sequence) checkFile(f *propFile, when string) {
	b, err := os.ReadFile(f.abs)
	fi, serr := os.Lstat(f.abs)
	switch {
	case err != nil || serr != nil:
		s.fail("%s: protected %s is gone (%v)", when, f.abs, err)
	case string(b) != f.content:
		s.fail("%s: protected %s holds %q, want %q", when, f.abs, b, f.content)
	case fi.Mode() != f.mode:
		s.fail("%s: protected %s has mode %v, want %v", when, f.abs, fi.Mode(), f.mode)
	}
}

func runSequence(t *testing.T, seed uint64, steps int, outcomes map[string]int) bool {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &sequence{t: t, seed: seed, r: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), base: base, work: filepath.Join(base, "work"),
		outcomes: outcomes, pinned: map[string]bool{}, exposed: map[string]bool{}}
	defer func() {
		for _, a := range s.actors {
			a.sb.Close()
		}
	}()
	if !s.setUp() {
		return false
	}
	for _, a := range s.actors {
		s.checkReads(a, "the start")
	}
	half := steps/2 + 1
	for i := 1; i <= steps && !s.failed; i++ {
		if i == half && len(s.actors) > 1 {
			s.concurrent(steps)
			if s.failed {
				break
			}
		}
		a := s.actors[0]
		if len(s.actors) > 1 && s.r.IntN(2) == 0 {
			a = s.actors[1]
		}
		s.step(a, s.r, strconv.Itoa(i), false)
		last := s.log[len(s.log)-1]
		for _, a := range s.actors {
			s.checkReads(a, last)
		}
		s.checkOutside("after " + last)
	}
	if !s.failed {
		s.checkUnchanged()
	}
	return !s.failed
}
