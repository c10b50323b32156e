//go:build unix

package ops

// The round-trip property of fsbox patch: for a random tree and a random
// change to it (lines modified, inserted and deleted; files added,
// deleted and renamed), the patch of the change, applied by Patch over the
// original tree, gives the changed tree byte for byte (content, and the
// mode a file keeps through an update or a rename), and the reverse patch
// then gives the original back. Both formats: the unified diff git writes
// and the *** Begin Patch envelope (written here, with context grown until
// each hunk matches in one place only). A patch with one hunk whose
// context matches nowhere fails with text_not_found and changes nothing.
//
// The git diff is `git diff -M` between two trees written into a scratch
// repository (the original and the changed tree each added with its own
// index file): `git diff --no-index` would name both sides by their
// directories (a/orig/x, b/edit/x), and this gives the paths the patch is
// applied with. Skipped when git is missing.
//
// Bounded by count: FSBOX_PROPERTY_N cases (default 50, 10 with -short).
// FSBOX_PROPERTY_SEED fixes the seed; a failure prints the case's seed,
// and FSBOX_PROPERTY_SEED=<seed> FSBOX_PROPERTY_N=1 replays it.
//
// Not covered: mode changes (git's "old mode"/"new mode" and the mode of
// "new file mode"/"deleted file mode" are recorded by pkg/patch but never
// acted on, so the change never chmods, and only files with the default
// mode are deleted, since the reverse patch re-adds them with it).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
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

// ptFile is a text file of the model: its lines without endings, each
// ending "\r\n" (crlf) or "\n", the last one only when finalNL.
type ptFile struct {
	bom, crlf, finalNL bool
	lines              []string
	mode               fs.FileMode
}

func (f *ptFile) eol() string {
	if f.crlf {
		return "\r\n"
	}
	return "\n"
}

func (f *ptFile) render() []byte {
	var b bytes.Buffer
	if f.bom {
		b.WriteString("\ufeff")
	}
	for i, l := range f.lines {
		b.WriteString(l)
		if i < len(f.lines)-1 || f.finalNL {
			b.WriteString(f.eol())
		}
	}
	return b.Bytes()
}

// normalize keeps the model one to one with the bytes: an empty last
// line without newline is no line at all ("a\n" is ["a"] with a final
// newline, not ["a", ""] without).
func (f *ptFile) normalize() {
	if !f.finalNL && f.lines[len(f.lines)-1] == "" {
		f.lines[len(f.lines)-1] = "end"
	}
}

func (f *ptFile) clone() *ptFile {
	c := *f
	c.lines = slices.Clone(f.lines)
	return &c
}

type ptTree map[string]*ptFile

func (t ptTree) clone() ptTree {
	c := ptTree{}
	for p, f := range t {
		c[p] = f.clone()
	}
	return c
}

// ptVocab is small so that lines repeat, within a file and across files.
var ptVocab = []string{
	"", "}", "{", "return nil", "\tx := 1", "\ty++", "if err != nil {", "\treturn err",
	"// note", "- item", "+ more", "a = b", "end", "\t}", "case 1:", "default:", "x",
}

var ptDefaultMode fs.FileMode

func init() {
	m := syscallUmask()
	ptDefaultMode = 0o666 &^ m
}

// syscallUmask reads the umask by creating a file, as files are created.
func syscallUmask() fs.FileMode {
	d, err := os.MkdirTemp("", "umask")
	if err != nil {
		return 0o022
	}
	defer os.RemoveAll(d)
	p := filepath.Join(d, "f")
	if err := os.WriteFile(p, nil, 0o666); err != nil {
		return 0o022
	}
	fi, err := os.Stat(p)
	if err != nil {
		return 0o022
	}
	return 0o666 &^ fi.Mode().Perm()
}

func ptLines(r *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = ptVocab[r.IntN(len(ptVocab))]
	}
	return out
}

var ptDirs = []string{"", "a/", "a/b/", "c/", "d/e/"}

// ptRandomTree is 5–20 files, some CRLF, some without final newline, some
// with a BOM, some executable.
func ptRandomTree(r *rand.Rand) ptTree {
	t := ptTree{}
	n := 5 + r.IntN(16)
	for i := range n {
		f := &ptFile{
			bom:     r.IntN(6) == 0,
			crlf:    r.IntN(3) == 0,
			finalNL: r.IntN(4) != 0,
			lines:   ptLines(r, 1+r.IntN(30)),
			mode:    ptDefaultMode,
		}
		if r.IntN(6) == 0 {
			f.mode = 0o755
		}
		f.normalize()
		t[fmt.Sprintf("%sf%d.txt", ptDirs[r.IntN(len(ptDirs))], i)] = f
	}
	return t
}

// ptEditLines modifies, inserts and deletes a few lines (at least one
// line stays).
func ptEditLines(r *rand.Rand, f *ptFile, edits int) {
	for range edits {
		switch k := r.IntN(3); {
		case k == 0 || len(f.lines) == 1 && k == 2:
			i := r.IntN(len(f.lines))
			f.lines[i] = ptVocab[r.IntN(len(ptVocab))] + " // v" + strconv.Itoa(r.IntN(100))
		case k == 1:
			i := r.IntN(len(f.lines) + 1)
			f.lines = slices.Insert(f.lines, i, ptLines(r, 1+r.IntN(3))...)
		default:
			i := r.IntN(len(f.lines))
			j := min(len(f.lines), i+1+r.IntN(3))
			if j-i >= len(f.lines) {
				j = i + len(f.lines) - 1
			}
			f.lines = slices.Delete(f.lines, i, j)
		}
	}
	f.normalize()
}

type ptChange struct {
	old, new ptTree
	updates  []string          // old paths updated in place
	adds     []string          // new paths
	deletes  []string          // old paths
	moves    map[string]string // old path → new path
}

// ptRandomChange edits a copy of t.
func ptRandomChange(r *rand.Rand, t ptTree) *ptChange {
	c := &ptChange{old: t, new: t.clone(), moves: map[string]string{}}
	paths := slices.Sorted(func(yield func(string) bool) {
		for p := range t {
			if !yield(p) {
				return
			}
		}
	})
	r.Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
	used := map[string]bool{}
	for p := range t {
		used[p] = true
	}
	newName := func() string {
		for {
			p := fmt.Sprintf("%sn%d.txt", []string{"", "a/", "c/", "new/"}[r.IntN(4)], r.IntN(1000))
			if !used[p] {
				used[p] = true
				return p
			}
		}
	}
	nUpdate := 1 + r.IntN(max(1, len(paths)/2))
	for _, p := range paths[:nUpdate] {
		f := c.new[p]
		before := string(f.render())
		ptEditLines(r, f, 1+r.IntN(4))
		if string(f.render()) != before {
			c.updates = append(c.updates, p)
		}
	}
	rest := paths[nUpdate:]
	// Deletes: only files the envelope's Add can bring back (LF, final
	// newline) with the mode an added file gets.
	for _, p := range rest {
		if len(c.deletes) >= r.IntN(3) {
			break
		}
		if f := t[p]; !f.crlf && f.finalNL && f.mode == ptDefaultMode {
			c.deletes = append(c.deletes, p)
			delete(c.new, p)
		}
	}
	// A rename, with at most one edit so that git still sees a rename.
	for _, p := range rest {
		if slices.Contains(c.deletes, p) || r.IntN(2) == 0 {
			continue
		}
		to := newName()
		f := c.new[p]
		delete(c.new, p)
		if len(f.lines) >= 8 && r.IntN(2) == 0 {
			ptEditLines(r, f, 1)
		}
		c.new[to] = f
		c.moves[p] = to
		break
	}
	for range r.IntN(3) {
		p := newName()
		c.new[p] = &ptFile{bom: r.IntN(5) == 0, finalNL: true, lines: ptLines(r, 1+r.IntN(10)), mode: ptDefaultMode}
		c.adds = append(c.adds, p)
	}
	return c
}

// reverse is the change that undoes c.
func (c *ptChange) reverse() *ptChange {
	rc := &ptChange{old: c.new, new: c.old, adds: c.deletes, deletes: c.adds, moves: map[string]string{}}
	for _, p := range c.updates {
		if _, moved := c.moves[p]; !moved {
			rc.updates = append(rc.updates, p)
		}
	}
	for from, to := range c.moves {
		rc.moves[to] = from
	}
	return rc
}

func writeTree(t *testing.T, dir string, tr ptTree) {
	t.Helper()
	for p, f := range tr {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, f.render(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, f.mode); err != nil {
			t.Fatal(err)
		}
	}
}

// diffTree compares the regular files under dir (and nothing else but
// directories may be there) with tr, content and mode.
func diffTree(dir string, tr ptTree) []string {
	var out []string
	seen := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		seen[rel] = true
		want, ok := tr[rel]
		if !ok {
			out = append(out, "unexpected "+rel)
			return nil
		}
		if !d.Type().IsRegular() {
			out = append(out, rel+" is not a regular file")
			return nil
		}
		got, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if w := want.render(); !bytes.Equal(got, w) {
			out = append(out, fmt.Sprintf("%s: content %q, want %q", rel, got, w))
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Mode().Perm() != want.mode {
			out = append(out, fmt.Sprintf("%s: mode %v, want %v", rel, fi.Mode().Perm(), want.mode))
		}
		return nil
	})
	if err != nil {
		out = append(out, err.Error())
	}
	for p := range tr {
		if !seen[p] {
			out = append(out, "missing "+p)
		}
	}
	slices.Sort(out)
	return out
}

// ptGit runs git with no user or system configuration.
type ptGit struct {
	dir string // scratch: the repository and the index files
	env []string
}

func (g *ptGit) run(t *testing.T, work string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"--git-dir=" + filepath.Join(g.dir, "repo"), "-c", "core.autocrlf=false", "-c", "core.safecrlf=false", "-c", "diff.noprefix=false"}, args...)...)
	if work != "" {
		cmd.Args = slices.Insert(cmd.Args, 1, "--work-tree="+work)
		cmd.Dir = work
	}
	cmd.Env = append(slices.Clone(g.env), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1 && args[0] == "diff") {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

func newPtGit(t *testing.T) *ptGit {
	d := t.TempDir()
	g := &ptGit{dir: d, env: []string{"HOME=" + d, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull, "PATH=" + os.Getenv("PATH"), "LC_ALL=C"}}
	g.run(t, "", nil, "init", "-q", "--bare", filepath.Join(d, "repo"))
	return g
}

// treeID adds every file under dir to a fresh index and writes its tree.
func (g *ptGit) treeID(t *testing.T, dir, name string) string {
	idx := []string{"GIT_INDEX_FILE=" + filepath.Join(g.dir, name+".index")}
	g.run(t, dir, idx, "add", "-A", ".")
	return strings.TrimSpace(g.run(t, dir, idx, "write-tree"))
}

// ptUnified is git's patch from one tree to the other.
func (g *ptGit) diff(t *testing.T, from, to string) []byte {
	// --no-renames: git's rename detection may pair two different files
	// (one CRLF, one LF), and a unified hunk that changes line endings
	// is not what this test is about (see the README); renames are
	// covered by the envelope here and by the goldens for git's form.
	return []byte(g.run(t, "", nil, "diff", "--no-color", "--no-ext-diff", "--no-renames", from, to))
}

// ptEnvelope writes c as a *** Begin Patch envelope.
func ptEnvelope(c *ptChange) []byte {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	for _, p := range slices.Sorted(mapKeys(c.moves)) {
		to := c.moves[p]
		fmt.Fprintf(&b, "*** Update File: %s\n*** Move to: %s\n", p, to)
		envHunks(&b, c.old[p], c.new[to])
	}
	for _, p := range c.updates {
		if _, moved := c.moves[p]; moved {
			continue
		}
		fmt.Fprintf(&b, "*** Update File: %s\n", p)
		envHunks(&b, c.old[p], c.new[p])
	}
	for _, p := range c.deletes {
		fmt.Fprintf(&b, "*** Delete File: %s\n", p)
	}
	for _, p := range c.adds {
		fmt.Fprintf(&b, "*** Add File: %s\n", p)
		f := c.new[p]
		for i, l := range f.lines {
			if i == 0 && f.bom {
				l = "\ufeff" + l
			}
			b.WriteString("+" + l + "\n")
		}
	}
	b.WriteString("*** End Patch\n")
	return []byte(b.String())
}

func mapKeys[M ~map[K]V, K comparable, V any](m M) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// ptOp is one entry of a line edit script: ' ' kept, '-' removed, '+'
// added.
type ptOp struct {
	kind byte
	text string
}

func lineScript(a, b []string) []ptOp {
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []ptOp
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out = append(out, ptOp{' ', a[i]})
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, ptOp{'-', a[i]})
			i++
		default:
			out = append(out, ptOp{'+', b[j]})
			j++
		}
	}
	return out
}

// envHunks writes the hunks turning old into new: each change with up to
// three lines of context, grown until its old lines occur once at or
// after the end of the previous hunk (where Apply searches for it).
func envHunks(b *strings.Builder, old, new *ptFile) {
	script := lineScript(old.lines, new.lines)
	type span struct{ i, j int } // script indexes
	var spans []span
	for k, op := range script {
		if op.kind == ' ' {
			continue
		}
		lo, hi := max(0, k-3), min(len(script), k+4)
		if n := len(spans); n > 0 && lo <= spans[n-1].j {
			spans[n-1].j = max(spans[n-1].j, hi)
		} else {
			spans = append(spans, span{lo, hi})
		}
	}
	oldIdx := make([]int, len(script)+1) // script index → old line index
	for k, op := range script {
		oldIdx[k+1] = oldIdx[k]
		if op.kind != '+' {
			oldIdx[k+1]++
		}
	}
	oldLines := func(s span) []string {
		var out []string
		for _, op := range script[s.i:s.j] {
			if op.kind != '+' {
				out = append(out, op.text)
			}
		}
		return out
	}
	count := func(seq []string, from int) int {
		n := 0
		for p := from; p+len(seq) <= len(old.lines); p++ {
			if slices.Equal(old.lines[p:p+len(seq)], seq) {
				n++
			}
		}
		return n
	}
	prevEnd := 0 // script index
	for h := 0; h < len(spans); h++ {
		s := &spans[h]
		for count(oldLines(*s), oldIdx[prevEnd]) > 1 {
			s.i = max(prevEnd, s.i-1)
			s.j = min(len(script), s.j+1)
			if h+1 < len(spans) && s.j >= spans[h+1].i {
				s.j = spans[h+1].j
				spans = slices.Delete(spans, h+1, h+2)
			}
		}
		b.WriteString("@@\n")
		eol := "\n"
		if old.crlf {
			eol = "\r\n"
		}
		for _, op := range script[s.i:s.j] {
			b.WriteString(string(op.kind) + op.text + eol)
		}
		prevEnd = s.j
	}
}

func ptSandbox(t *testing.T, dir string) *sandbox.Sandbox {
	t.Helper()
	p := policy.DefaultPolicy(dir)
	p.Commands["rm"] = true
	p.Journal.State = t.TempDir()
	sb, err := sandbox.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

// corruptHunk replaces the first old line of one hunk of an updated file
// in an envelope with a line no file holds, or reports false when the
// envelope updates no file by hunks.
func corruptHunk(r *rand.Rand, env []byte) ([]byte, bool) {
	lines := strings.SplitAfter(string(env), "\n")
	var at []int
	for i := 1; i < len(lines); i++ {
		if lines[i-1] == "@@\n" && lines[i] != "" && (lines[i][0] == ' ' || lines[i][0] == '-') {
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		return nil, false
	}
	i := at[r.IntN(len(at))]
	lines[i] = lines[i][:1] + "no file holds this line" + lines[i][1:]
	return []byte(strings.Join(lines, "")), true
}

func TestPatchPropertyRoundTrip(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the unified diffs come from git diff")
	}
	n := envInt("FSBOX_PROPERTY_N", 50)
	if testing.Short() && os.Getenv("FSBOX_PROPERTY_N") == "" {
		n = 10
	}
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("FSBOX_PROPERTY_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("FSBOX_PROPERTY_SEED=%d, %d cases", seed, n)
	g := newPtGit(t)
	failed := 0
	for i := range n {
		if !runPatchCase(t, g, seed+uint64(i)) {
			failed++
			if failed >= envInt("FSBOX_PROPERTY_MAXFAIL", 3) {
				t.Fatalf("stopping after %d failing cases", failed)
			}
		}
	}
}

func runPatchCase(t *testing.T, g *ptGit, seed uint64) (ok bool) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	c := ptRandomChange(r, ptRandomTree(r))
	base := t.TempDir()
	fail := func(format string, args ...any) {
		if ok {
			t.Errorf("case FSBOX_PROPERTY_SEED=%d FSBOX_PROPERTY_N=1: %s", seed, fmt.Sprintf(format, args...))
		}
		ok = false
	}
	ok = true
	origDir, editDir := filepath.Join(base, "orig"), filepath.Join(base, "edit")
	writeTree(t, origDir, c.old)
	writeTree(t, editDir, c.new)
	tOld := g.treeID(t, origDir, fmt.Sprint(seed, "o"))
	tNew := g.treeID(t, editDir, fmt.Sprint(seed, "n"))
	forms := []struct {
		name          string
		forward, back []byte
	}{
		{"git diff", g.diff(t, tOld, tNew), g.diff(t, tNew, tOld)},
		{"envelope", ptEnvelope(c), ptEnvelope(c.reverse())},
	}
	ctx := context.Background()
	for k, form := range forms {
		work := filepath.Join(base, fmt.Sprint("work", k))
		writeTree(t, work, c.old)
		sb := ptSandbox(t, work)
		apply := func(dir string, p []byte, want ptTree) bool {
			if _, err := Patch(ctx, sb, PatchOptions{Patch: string(p)}); err != nil {
				fail("%s, %s: %v\npatch:\n%s", form.name, dir, err, p)
				return false
			}
			if d := diffTree(work, want); len(d) > 0 {
				fail("%s, %s: the tree differs:\n  %s\npatch:\n%s", form.name, dir, strings.Join(d, "\n  "), p)
				return false
			}
			return true
		}
		// Undo takes a patch back byte for byte (and mode), and undoing
		// the undo puts it back again.
		undo := func(what string, id string, want ptTree) bool {
			if _, err := Undo(ctx, sb, id, false); err != nil {
				fail("%s, %s: %v", form.name, what, err)
				return false
			}
			if d := diffTree(work, want); len(d) > 0 {
				fail("%s, %s: the tree differs:\n  %s", form.name, what, strings.Join(d, "\n  "))
				return false
			}
			return true
		}
		redoOf := func() string {
			h, _ := History(ctx, sb, "", 0)
			return h.Changes[0].ID // the undo just made
		}
		if apply("forward", form.forward, c.new) && undo("undo of the forward patch", "", c.old) &&
			undo("redo", redoOf(), c.new) && apply("reverse", form.back, c.old) {
			// All or nothing: the forward patch with one hunk's context
			// matching nowhere fails, and the tree stays as it was.
			corrupt := corruptUnified
			if k == 1 {
				corrupt = corruptHunk
			}
			bad, has := corrupt(r, form.forward)
			if has {
				_, err := Patch(ctx, sb, PatchOptions{Patch: string(bad)})
				var se *fserr.Error
				if !errors.As(err, &se) || se.Code != fserr.CodeTextNotFound {
					fail("%s, corrupted hunk: got %v, want text_not_found\npatch:\n%s", form.name, err, bad)
				} else if d := diffTree(work, c.old); len(d) > 0 {
					fail("%s, corrupted hunk: the tree changed:\n  %s", form.name, strings.Join(d, "\n  "))
				}
			}
		}
		sb.Close()
	}
	return ok
}

// corruptUnified changes one context or removed line of a hunk of a file
// git's diff updates (not one it adds or deletes) into a line no file
// holds.
func corruptUnified(r *rand.Rand, p []byte) ([]byte, bool) {
	lines := strings.SplitAfter(string(p), "\n")
	var at []int
	skip, inHunk := false, false
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			skip, inHunk = false, false
		case !inHunk && (strings.HasPrefix(l, "new file mode") || strings.HasPrefix(l, "deleted file mode")):
			skip = true
		case strings.HasPrefix(l, "@@ "):
			inHunk = true
		case inHunk && !skip && l != "" && (l[0] == ' ' || l[0] == '-'):
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		return nil, false
	}
	i := at[r.IntN(len(at))]
	lines[i] = lines[i][:1] + "no file holds this line" + lines[i][1:]
	return []byte(strings.Join(lines, "")), true
}
