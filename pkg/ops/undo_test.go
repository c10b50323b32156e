package ops

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// journaled is a sandbox over a fresh workdir with files, its journal in
// a state directory of its own.
func journaled(t *testing.T, files map[string]string, edit func(p *policy.Policy)) (*sandbox.Sandbox, string) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := policy.DefaultPolicy(dir)
	p.Journal.State = t.TempDir()
	if edit != nil {
		edit(p)
	}
	sb, err := sandbox.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb, dir
}

// tree is every file under dir with its content and mode.
func undoTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		fi, _ := os.Lstat(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = fi.Mode().Perm().String() + " " + string(b)
		return nil
	})
	return out
}

func sameTree(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d files %v, want %d %v", what, len(got), got, len(want), want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s is %q, want %q", what, k, got[k], v)
		}
	}
}

// Undo after write, edit, append, cp and a multi-file patch puts every
// byte and mode back; an undo is a change, so undoing it redoes.
func TestUndoRestores(t *testing.T) {
	ctx := context.Background()
	sb, dir := journaled(t, map[string]string{"a.txt": "one\r\ntwo\r\n", "b.txt": "bee\n", "sub/c.txt": "sea\n"}, func(p *policy.Policy) { p.Commands["rm"] = true })
	os.Chmod(filepath.Join(dir, "a.txt"), 0o600)
	orig := undoTree(t, dir)
	steps := []func() error{
		func() error {
			_, err := Write(ctx, sb, WriteOptions{Path: "a.txt", Content: stringsReader("replaced\n")})
			return err
		},
		func() error {
			_, err := Edit(ctx, sb, EditOptions{Path: "b.txt", Edits: []EditSpec{{Old: "bee", New: "BEE"}}})
			return err
		},
		func() error {
			_, err := Write(ctx, sb, WriteOptions{Path: "new/n.txt", Content: stringsReader("created\n")})
			return err
		},
		func() error {
			_, err := Write(ctx, sb, WriteOptions{Path: "b.txt", Append: true, Content: stringsReader("more\n")})
			return err
		},
		func() error {
			_, err := Copy(ctx, sb, "sub/c.txt", "copy.txt", false)
			return err
		},
		func() error {
			_, err := Patch(ctx, sb, PatchOptions{Patch: "*** Begin Patch\n*** Update File: sub/c.txt\n*** Move to: sub/moved.txt\n@@\n-sea\n+SEA\n*** Delete File: copy.txt\n*** Add File: added.txt\n+added\n*** End Patch\n"})
			return err
		},
	}
	var trees []map[string]string
	for i, step := range steps {
		trees = append(trees, undoTree(t, dir))
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	h, err := History(ctx, sb, "", 0)
	if err != nil || h.Count != len(steps) {
		t.Fatalf("history: %d changes, %v; want %d", h.Count, err, len(steps))
	}
	for i := len(steps) - 1; i >= 0; i-- {
		r, err := Undo(ctx, sb, "", false)
		if err != nil {
			t.Fatalf("undo of step %d: %v", i, err)
		}
		sameTree(t, "after undoing step "+r.Undid, undoTree(t, dir), trees[i])
		// The undo is a change: undoing it by its id redoes, and undoing
		// that takes the step back again.
		if i == 3 {
			redo, err := Undo(ctx, sb, *r.ChangeID, false)
			if err != nil {
				t.Fatalf("redo: %v", err)
			}
			sameTree(t, "after redo", undoTree(t, dir), trees[i+1])
			if _, err := Undo(ctx, sb, *redo.ChangeID, false); err != nil {
				t.Fatalf("undo of the redo: %v", err)
			}
			sameTree(t, "after redo and undo", undoTree(t, dir), trees[i])
		}
	}
	if _, err := Undo(ctx, sb, "", false); fserr.AsError(err).Code != fserr.CodeNotFound {
		t.Errorf("undo with everything undone: %v, want not_found", err)
	}
	sameTree(t, "all undone", undoTree(t, dir), orig)
}

// A path changed since the change is conflict, naming it, and nothing is
// restored; force restores anyway. An unknown id is not_found.
func TestUndoConflict(t *testing.T) {
	ctx := context.Background()
	sb, dir := journaled(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"}, nil)
	if _, err := Patch(ctx, sb, PatchOptions{Patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-b\n+B\n*** End Patch\n"}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("someone else\n"), 0o644)
	_, err := Undo(ctx, sb, "", false)
	if e := fserr.AsError(err); err == nil || e.Code != fserr.CodeConflict || e.Path != "b.txt" {
		t.Fatalf("undo over a changed file: %v, want conflict on b.txt", err)
	}
	if got := undoTree(t, dir); got["a.txt"] != "-rw-r--r-- A\n" {
		t.Errorf("a conflicting undo changed a.txt: %q", got["a.txt"])
	}
	if _, err := Undo(ctx, sb, "", true); err != nil {
		t.Fatalf("forced undo: %v", err)
	}
	if got := undoTree(t, dir); got["a.txt"] != "-rw-r--r-- a\n" || got["b.txt"] != "-rw-r--r-- b\n" {
		t.Errorf("forced undo left %v", got)
	}
	if _, err := Undo(ctx, sb, "99", false); fserr.AsError(err).Code != fserr.CodeNotFound {
		t.Errorf("undo 99: %v, want not_found", err)
	}
	if _, err := Undo(ctx, sb, "x", false); fserr.AsError(err).Code != fserr.CodeUsage {
		t.Errorf("undo x: %v, want usage", err)
	}
}

// Undo of a creation deletes the file only while it holds what the
// change wrote, even with rm off (the default); undo obeys its own
// switch; the oldest changes are evicted past max_bytes; purge forgets
// all.
func TestUndoRulesAndEviction(t *testing.T) {
	ctx := context.Background()
	sb, dir := journaled(t, nil, func(p *policy.Policy) { p.Journal.MaxBytes = 64 << 10 })
	if _, err := Write(ctx, sb, WriteOptions{Path: "n.txt", Content: stringsReader("new\n")}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "n.txt"), []byte("edited by hand\n"), 0o644)
	if _, err := Undo(ctx, sb, "", false); fserr.AsError(err).Code != fserr.CodeConflict {
		t.Fatalf("undo of a creation whose file changed: %v, want conflict", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "n.txt")); err != nil {
		t.Fatal("the changed file was deleted")
	}
	// Eviction: each rewrite keeps 20 KB of prior content; 40 KiB are
	// left for changes in 64 KiB.
	for _, s := range []string{"v1 " + strings.Repeat("x", 20000), "v2 " + strings.Repeat("x", 20000), "v3 " + strings.Repeat("x", 20000)} {
		if _, err := Write(ctx, sb, WriteOptions{Path: "n.txt", Content: stringsReader(s)}); err != nil {
			t.Fatal(err)
		}
	}
	h, _ := History(ctx, sb, "", 0)
	if h.Count != 1 || h.Changes[0].ID != "4" {
		t.Errorf("after eviction: %+v, want only change 4", h.Changes)
	}
	if _, err := Undo(ctx, sb, "2", false); fserr.AsError(err).Code != fserr.CodeNotFound {
		t.Errorf("undo of an evicted change: %v", err)
	}
	if h, err := History(ctx, sb, "n.txt", 0); err != nil || h.Count != 1 {
		t.Errorf("history of n.txt: %+v %v", h, err)
	}
	if h, err := History(ctx, sb, "other.txt", 0); err != nil || h.Count != 0 {
		t.Errorf("history of other.txt: %+v %v", h, err)
	}
	p0 := sb.Policy()
	if _, err := Purge(ctx, sb); fserr.AsError(err).Rule != fserr.RuleCommand {
		t.Errorf("purge under a policy that leaves it off: %v, want denied (rule command)", err)
	}
	p0.Commands["purge"] = true
	if r, err := Purge(ctx, sb); err != nil || r.Removed == 0 || r.Kept != 0 {
		t.Fatalf("purge: %+v %v", r, err)
	}
	if h, _ := History(ctx, sb, "", 0); h.Count != 0 {
		t.Errorf("after purge: %d changes", h.Count)
	}
	p := sb.Policy()
	p.Commands["undo"] = false
	if _, err := Undo(ctx, sb, "", false); fserr.AsError(err).Rule != fserr.RuleCommand {
		t.Errorf("undo switched off: %v", err)
	}
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

// The default of undo walks back through redos: undo, redo (an undo of
// the undo), then undo takes the redone change back again.
func TestNewestUndoable(t *testing.T) {
	ch := func(id, undoes string) sandbox.Change { return sandbox.Change{ID: id, Undoes: undoes} }
	for _, c := range []struct {
		log  []sandbox.Change // newest first
		want string
	}{
		{[]sandbox.Change{ch("2", ""), ch("1", "")}, "2"},
		{[]sandbox.Change{ch("3", "2"), ch("2", ""), ch("1", "")}, "1"},
		{[]sandbox.Change{ch("4", "3"), ch("3", "2"), ch("2", ""), ch("1", "")}, "2"},               // 2 redone
		{[]sandbox.Change{ch("5", "4"), ch("4", "3"), ch("3", "2"), ch("2", ""), ch("1", "")}, "1"}, // redo undone
		{[]sandbox.Change{ch("2", "1"), ch("1", "")}, ""},
	} {
		read := 0
		got, _, ok, _ := newestUndoable(func(fn func(sandbox.Change) bool) error {
			for _, x := range c.log {
				read++
				if !fn(x) {
					break
				}
			}
			return nil
		}, nil)
		if (c.want == "") == ok || got.ID != c.want {
			t.Errorf("%v: %q %v, want %q", c.log, got.ID, ok, c.want)
		}
		// The walk stops at the change it picks: nothing older is read.
		if i := slices.IndexFunc(c.log, func(x sandbox.Change) bool { return x.ID == c.want }); ok && read != i+1 {
			t.Errorf("%v: read %d changes to pick %s, want %d", c.log, read, c.want, i+1)
		}
	}
}

// mv (a file, a directory, one over another with --force), rm (a file, a
// symlink, a whole tree) and mkdir are recorded too, and undo takes each
// back exactly; undoing the undo redoes it.
func TestUndoTreeChanges(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{"a.txt": "a\n", "b.txt": "b\n", "d/x.txt": "x\n", "d/e/y.txt": "y\n", "d/.hidden": "h\n"}
	for _, c := range []struct {
		name string
		do   func(sb *sandbox.Sandbox, dir string) error
	}{
		{"mv file", func(sb *sandbox.Sandbox, _ string) error {
			_, err := Move(ctx, sb, "a.txt", "c.txt", false)
			return err
		}},
		{"mv dir", func(sb *sandbox.Sandbox, _ string) error { _, err := Move(ctx, sb, "d", "d2", false); return err }},
		{"mv --force", func(sb *sandbox.Sandbox, _ string) error { _, err := Move(ctx, sb, "a.txt", "b.txt", true); return err }},
		{"rm file", func(sb *sandbox.Sandbox, _ string) error { _, err := Remove(ctx, sb, "a.txt", false); return err }},
		{"rm symlink", func(sb *sandbox.Sandbox, _ string) error { _, err := Remove(ctx, sb, "link", false); return err }},
		{"rm -r", func(sb *sandbox.Sandbox, _ string) error { _, err := Remove(ctx, sb, "d", true); return err }},
		{"mkdir -p", func(sb *sandbox.Sandbox, _ string) error { _, err := Mkdir(ctx, sb, "m/n/o"); return err }},
	} {
		t.Run(c.name, func(t *testing.T) {
			sb, dir := journaled(t, files, func(p *policy.Policy) { p.Commands["rm"] = true })
			os.Chmod(filepath.Join(dir, "d/e/y.txt"), 0o600)
			var before map[string]string
			snap := func() map[string]string {
				out := undoTree(t, dir)
				filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
					rel, _ := filepath.Rel(dir, p)
					if err == nil && d.IsDir() && rel != "." {
						out[rel+"/"] = "dir"
					}
					if err == nil && d.Type()&os.ModeSymlink != 0 {
						target, _ := os.Readlink(p)
						out[rel] = "-> " + target
					}
					return nil
				})
				return out
			}
			if c.name == "rm symlink" {
				os.Symlink("a.txt", filepath.Join(dir, "link"))
			}
			if c.name == "rm -r" {
				os.Symlink("x.txt", filepath.Join(dir, "d/lx"))
			}
			before = snap()
			if err := c.do(sb, dir); err != nil {
				t.Fatal(err)
			}
			after := snap()
			r, err := Undo(ctx, sb, "", false)
			if err != nil {
				t.Fatalf("undo: %v", err)
			}
			sameTree(t, "undone", snap(), before)
			if _, err := Undo(ctx, sb, *r.ChangeID, false); err != nil {
				t.Fatalf("redo: %v", err)
			}
			sameTree(t, "redone", snap(), after)
		})
	}
}

// Kept content that no longer hashes to its name is never restored.
func TestUndoDamagedObject(t *testing.T) {
	ctx := context.Background()
	sb, dir := journaled(t, map[string]string{"a.txt": "original\n"}, nil)
	if _, err := Write(ctx, sb, WriteOptions{Path: "a.txt", Content: stringsReader("new\n")}); err != nil {
		t.Fatal(err)
	}
	objs, _ := filepath.Glob(filepath.Join(sb.Journal().Roots[0].Dir, "objects", "*"))
	if len(objs) != 1 {
		t.Fatalf("objects: %v", objs)
	}
	os.WriteFile(objs[0], []byte("tampered\n"), 0o600)
	if _, err := Undo(ctx, sb, "", false); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("undo from a damaged object: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "new\n" {
		t.Errorf("a.txt is %q after the refused undo", b)
	}
}

// An undo whose change moved an entry that no longer exists is conflict
// before anything changes, force or not: there is nothing to move back.
// Found by the journal property test: undo --force of an undo (its moves
// come after its files) deleted the restored file, then failed on the
// missing entry.
func TestUndoOfAMoveWhoseEntryIsGone(t *testing.T) {
	ctx := context.Background()
	sb, dir := journaled(t, map[string]string{"a.txt": "a\n", "c.toml": "c\n"}, nil)
	if _, err := Move(ctx, sb, "a.txt", "c.toml", true); err != nil {
		t.Fatal(err)
	}
	u, err := Undo(ctx, sb, "", false) // a.txt and c.toml back
	if err != nil {
		t.Fatal(err)
	}
	must := func(name, want string) {
		t.Helper()
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != want {
			t.Errorf("%s holds %q, want %q", name, b, want)
		}
	}
	must("a.txt", "a\n")
	must("c.toml", "c\n")
	os.Remove(filepath.Join(dir, "a.txt")) // gone by hand
	for _, force := range []bool{false, true} {
		if _, err := Undo(ctx, sb, *u.ChangeID, force); fserr.AsError(err).Code != fserr.CodeConflict {
			t.Errorf("redo (force %v) of a move whose entry is gone: %v, want conflict", force, err)
		}
		must("c.toml", "c\n")
	}
}
