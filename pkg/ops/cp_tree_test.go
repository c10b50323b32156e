//go:build unix

package ops

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// noCopyLeft fails when dst or any temporary name exists below dir.
func noCopyLeft(t *testing.T, dir, dst string) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(dir, dst)); err == nil {
		t.Errorf("%s exists after a copy that failed", dst)
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".fsbox-tmp-") {
			t.Errorf("temporary %s left", p)
		}
		return nil
	})
}

// TestCopyTreeTable: cp -r's refusals, each before anything is made,
// and what a copy that goes through makes.
func TestCopyTreeTable(t *testing.T) {
	base := map[string]string{"src/a.txt": "a\n", "src/sub/b.txt": "bb\n", "src/.h/c": "c\n", "big/f": strings.Repeat("x", 100)}
	cases := []struct {
		name     string
		policy   func(p *policy.Policy)
		setup    func(t *testing.T, dir string)
		src, dst string
		o        CopyTreeOptions
		code     fserr.Code
		rule     fserr.Rule
		files    int
	}{
		{name: "new tree", src: "src", dst: "out", files: 3},
		{name: "into a directory", setup: func(t *testing.T, dir string) { os.Mkdir(filepath.Join(dir, "d"), 0o755) }, src: "src", dst: "d", files: 3},
		{name: "dst inside src", src: "src", dst: "src/sub/x", code: fserr.CodeUsage},
		{name: "dst is src", src: "src", dst: "src", code: fserr.CodeUsage},
		{name: "dst through a link into src", setup: func(t *testing.T, dir string) { os.Symlink("src/sub", filepath.Join(dir, "ln")) }, src: "src", dst: "ln/x", code: fserr.CodeUsage},
		{name: "missing parent", src: "src", dst: "no/such/out", code: fserr.CodeNotFound},
		{name: "existing file dst", setup: func(t *testing.T, dir string) { os.WriteFile(filepath.Join(dir, "f"), nil, 0o644) }, src: "src", dst: "f", code: fserr.CodeExists},
		{name: "over max_write_bytes", policy: func(p *policy.Policy) { p.Limits.MaxWriteBytes = 50 }, src: "big", dst: "out", code: fserr.CodeTooLarge},
		{name: "write_deny below", policy: func(p *policy.Policy) { p.Paths.WriteDeny = []string{"out/sub/**"} }, src: "src", dst: "out", code: fserr.CodeDenied, rule: fserr.RuleWriteDeny},
		{name: "read-denied skipped", policy: func(p *policy.Policy) { p.Paths.Deny = []string{"src/sub/**"} }, src: "src", dst: "out", files: 2},
		{name: "link out", setup: func(t *testing.T, dir string) { os.Symlink("/", filepath.Join(dir, "src/root")) }, src: "src", dst: "out", code: fserr.CodeDenied, rule: fserr.RuleSymlink},
		{name: "dangling link inside", setup: func(t *testing.T, dir string) { os.Symlink("nowhere", filepath.Join(dir, "src/dl")) }, src: "src", dst: "out", files: 3},
		{name: "bad expect form", src: "src", dst: "out", o: CopyTreeOptions{Force: true, Expect: []string{"abc"}}, code: fserr.CodeUsage},
		{name: "exclude everything", src: "src", dst: "out", o: CopyTreeOptions{Exclude: []string{"*"}}, files: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			tree(t, dir, base)
			if c.setup != nil {
				c.setup(t, dir)
			}
			p := policy.DefaultPolicy(dir)
			if c.policy != nil {
				c.policy(p)
			}
			sb, err := sandbox.New(p, "")
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			r, err := CopyTree(context.Background(), sb, c.src, c.dst, c.o)
			if c.code != "" {
				e := fserr.AsError(err)
				if e == nil || e.Code != c.code || (c.rule != "" && e.Rule != c.rule) {
					t.Fatalf("err %v, want %s %s", err, c.code, c.rule)
				}
				switch {
				case c.dst == c.src:
					noCopyLeft(t, dir, filepath.Join(c.dst, filepath.Base(c.src)))
				case c.code != fserr.CodeExists:
					noCopyLeft(t, dir, c.dst)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Files != c.files {
				t.Errorf("files %d, want %d", r.Files, c.files)
			}
			n := 0
			filepath.WalkDir(filepath.Join(dir, r.To), func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					n++
				}
				return nil
			})
			if n != c.files {
				t.Errorf("%d files on disk below %s, want %d", n, r.To, c.files)
			}
		})
	}
}

// TestCopyTreeDeadline: a copy whose deadline passes while it copies
// stops before its rename, and nothing is left.
func TestCopyTreeDeadline(t *testing.T) {
	sb, dir := testSandbox(t)
	files := map[string]string{}
	for i := range 20 {
		files[filepath.Join("src", string(rune('a'+i))+".txt")] = "x\n"
	}
	tree(t, dir, files)
	ctx := newDeadlineCtx()
	n := 0
	sandbox.Seam = func(point string) {
		if point == "cp.copied" {
			if n++; n == 5 {
				ctx.fire()
			}
		}
	}
	t.Cleanup(func() { sandbox.Seam = nil })
	_, err := CopyTree(ctx, sb, "src", "out", CopyTreeOptions{})
	if e := fserr.AsError(err); e == nil || e.Code != fserr.CodeTimeout {
		t.Fatalf("cp -r past its deadline: %v, want timeout", err)
	}
	if n != 5 {
		t.Errorf("the copy went on %d entries past its deadline", n-5)
	}
	noCopyLeft(t, dir, "out")
}

// TestCopyTreeUndo: a copy is one journal change that undo takes back
// whole; a merge's undo restores the files it replaced.
func TestCopyTreeUndo(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	sb, dir := testSandbox(t)
	tree(t, dir, map[string]string{"src/a.txt": "new\n", "src/d/b.txt": "b\n", "dst/src/a.txt": "old\n", "dst/src/keep": "k\n"})
	ctx := context.Background()
	if _, err := CopyTree(ctx, sb, "src", "copy", CopyTreeOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := CopyTree(ctx, sb, "src", "dst", CopyTreeOptions{Force: true})
	if err != nil || r.Replaced != 1 || r.Files != 2 {
		t.Fatalf("merge: %+v, %v", r, err)
	}
	h, err := History(ctx, sb, "", 0)
	if err != nil || len(h.Changes) != 2 {
		t.Fatalf("history: %d changes, %v; want 2", len(h.Changes), err)
	}
	if _, err := Undo(ctx, sb, "", false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "dst/src/a.txt")); string(b) != "old\n" {
		t.Errorf("dst/src/a.txt holds %q after undo of the merge", b)
	}
	if _, err := os.Lstat(filepath.Join(dir, "dst/src/d")); err == nil {
		t.Errorf("dst/src/d, made by the merge, is left after its undo")
	}
	if _, err := Undo(ctx, sb, "", false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "copy")); err == nil {
		t.Errorf("copy is left after its undo")
	}
}
