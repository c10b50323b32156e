//go:build unix

package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// A served root removed (SPEC §5): a long-lived sandbox whose workdir or
// read root was removed, removed and re-created, or renamed away answers
// every access below it with not_found naming the root and saying to
// restart, never a symlink denial; GoneRoots says which root and how; the
// sandbox never serves what now stands at the path.
func TestServedRootRemoved(t *testing.T) {
	cases := []struct {
		name  string
		which string // "work" or "ro"
		act   func(t *testing.T, dir string)
		state RootState
		word  string
	}{
		{"removed", "work", func(t *testing.T, dir string) { mustRemoveAll(t, dir) }, RootRemoved, "was removed"},
		{"re-created", "work", func(t *testing.T, dir string) {
			mustRemoveAll(t, dir)
			mustWrite(t, filepath.Join(dir, "a.txt"), "NEW")
			mustWrite(t, filepath.Join(dir, "b.txt"), "NEW")
		}, RootRecreated, "re-created"},
		{"renamed away", "work", func(t *testing.T, dir string) { mustRename(t, dir, dir+".old") }, RootMoved, "moved or renamed"},
		{"renamed away and re-created", "work", func(t *testing.T, dir string) {
			mustRename(t, dir, dir+".old")
			mustWrite(t, filepath.Join(dir, "a.txt"), "NEW")
		}, RootRecreated, "re-created"},
		{"read root removed", "ro", func(t *testing.T, dir string) { mustRemoveAll(t, dir) }, RootRemoved, "was removed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			work, ro := filepath.Join(base, "proj"), filepath.Join(base, "docs")
			mustWrite(t, filepath.Join(work, "a.txt"), "old")
			mustWrite(t, filepath.Join(work, "sub", "c.txt"), "old")
			mustWrite(t, filepath.Join(ro, "a.txt"), "old")
			p := policy.DefaultPolicy(work)
			p.ReadRoots = []string{ro}
			s, err := New(p, base)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if g := s.GoneRoots(); g != nil {
				t.Fatalf("GoneRoots before = %v, want none", g)
			}
			dir, pre := work, ""
			if c.which == "ro" {
				dir, pre = ro, ro+"/"
			}
			c.act(t, dir)
			g := s.GoneRoots()
			if len(g) != 1 || g[0].Root != dir || g[0].State != c.state {
				t.Fatalf("GoneRoots = %v, want [{%s %s}]", g, dir, c.state)
			}
			calls := map[string]func() error{
				"open": func() error {
					f, err := s.Open(pre + "a.txt")
					if err == nil {
						f.Close()
					}
					return err
				},
				"open missing": func() error { _, err := s.Open(pre + "nope.txt"); return err },
				"opendir root": func() error {
					d, err := s.OpenDir(pre + ".")
					if err == nil {
						d.Close()
					}
					return err
				},
				"opendir sub": func() error { _, err := s.OpenDir(pre + "sub"); return err },
				"lstat":       func() error { _, err := s.Lstat(pre + "a.txt"); return err },
				"walk": func() error {
					_, err := s.Walk(context.Background(), pre+".", WalkOptions{}, func(*Entry) error { return nil })
					return err
				},
			}
			if c.which == "work" {
				calls["write target"] = func() error {
					w, err := s.OpenWriteTarget("b.txt", false)
					if err == nil {
						w.Close()
					}
					return err
				}
				calls["write target mkdirs"] = func() error {
					w, err := s.OpenWriteTarget("x/y/b.txt", true)
					if err == nil {
						w.Close()
					}
					return err
				}
				calls["entry"] = func() error {
					w, err := s.OpenEntry("a.txt")
					if err == nil {
						w.Close()
					}
					return err
				}
				calls["mkdir"] = func() error { _, _, err := s.Mkdir("newdir"); return err }
			}
			for name, call := range calls {
				err := call()
				if err == nil {
					t.Errorf("%s: succeeded on a gone root", name)
					continue
				}
				if fserr.Absent(err) {
					t.Errorf("%s: %v reads as a missing path (stat would say exists: false)", name, err)
				}
				e := fserr.AsError(err)
				if e.Code != fserr.CodeNotFound || e.Rule == fserr.RuleSymlink || !strings.Contains(e.Msg, dir) ||
					!strings.Contains(e.Msg, c.word) || !strings.Contains(e.Msg, "restart") || strings.Contains(e.Msg, "symlink") {
					t.Errorf("%s: got %v (rule %q), want not_found naming %s, %q and restart", name, err, e.Rule, dir, c.word)
				}
			}
			// Nothing was made at the new directory's path, and it was
			// never served.
			if _, err := os.Stat(filepath.Join(dir, "newdir")); err == nil {
				t.Errorf("a directory was made in what now stands at %s", dir)
			}
		})
	}
}

// A root that is still there, and a missing name below it, keep their
// own answers.
func TestServedRootPresent(t *testing.T) {
	tr := newTree(t, t.TempDir())
	s := newSandbox(t, tr, nil)
	if g := s.GoneRoots(); g != nil {
		t.Fatalf("GoneRoots = %v, want none", g)
	}
	_, err := s.Open("nope.txt")
	checkErr(t, err, fserr.CodeNotFound, "")
	if strings.Contains(err.Error(), "restart") {
		t.Fatalf("a missing name reads as a gone root: %v", err)
	}
}

func mustRemoveAll(t *testing.T, dir string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
}

func mustRename(t *testing.T, a, b string) {
	t.Helper()
	if err := os.Rename(a, b); err != nil {
		t.Fatal(err)
	}
}
