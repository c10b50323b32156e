//go:build unix

package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// batchTree is a workdir with a.txt, b.txt and sub/c.txt.
func batchTree(t *testing.T) (*Sandbox, string) {
	t.Helper()
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "a.txt"), "a old\n")
	mustWrite(t, filepath.Join(dir, "b.txt"), "b old\n")
	mustWrite(t, filepath.Join(dir, "sub/c.txt"), "c old\n")
	os.Chmod(filepath.Join(dir, "b.txt"), 0o600)
	s, err := New(policy.DefaultPolicy(dir), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

// snapshot is every file under dir: relative path → content ("/" for a
// directory); temporary files show up too.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel] = "/"
			return nil
		}
		b, _ := os.ReadFile(p)
		out[rel] = string(b)
		return nil
	})
	return out
}

func batchTarget(t *testing.T, s *Sandbox, p string) *WriteTarget {
	t.Helper()
	w, err := s.OpenWriteTarget(p, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

// stageAll stages the standard change: a and c rewritten, new.txt made,
// b deleted.
func stageAll(t *testing.T, s *Sandbox) *Batch {
	t.Helper()
	b := s.NewBatch()
	for _, c := range []struct{ path, content string }{{"a.txt", "a new\n"}, {"sub/c.txt", "c new\n"}, {"sub/new.txt", "fresh\n"}} {
		if err := b.Put(batchTarget(t, s, c.path), []byte(c.content), 1<<20, CommitOptions{Unchanged: true}); err != nil {
			t.Fatal(err)
		}
	}
	bw, err := s.OpenEntry("b.txt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bw.Close)
	if err := b.Delete(bw, CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBatchCommit(t *testing.T) {
	s, dir := batchTree(t)
	before := snapshot(t, dir)
	b := stageAll(t, s)
	if got := snapshot(t, dir); len(got) != len(before)+3 { // three staged temps, nothing else
		t.Errorf("staging changed the tree: %v", got)
	}
	res, err := b.Commit()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a.txt": "a new\n", "sub": "/", "sub/c.txt": "c new\n", "sub/new.txt": "fresh\n"}
	if got := snapshot(t, dir); !mapsEqual(got, want) {
		t.Errorf("after commit %v, want %v", got, want)
	}
	if len(res) != 4 || res[0].Bytes != 6 || res[0].SHA256 == "" || res[3].Bytes != 0 {
		t.Errorf("results %+v", res)
	}
	if _, err := b.Commit(); err == nil {
		t.Error("a second commit of the same batch")
	}
}

// A target that changed after staging is conflict, and nothing changes;
// a failure in the middle of the swaps is rolled back: the tree is as it
// was, with no temporary file left.
func TestBatchAllOrNothing(t *testing.T) {
	for _, c := range []struct {
		name   string
		meddle func(dir string)
		code   fserr.Code
	}{
		{"changed after staging", func(dir string) { os.WriteFile(filepath.Join(dir, "sub/c.txt"), []byte("c other\n"), 0o644) }, fserr.CodeConflict},
		{"new name taken", func(dir string) { os.WriteFile(filepath.Join(dir, "sub/new.txt"), []byte("someone\n"), 0o644) }, fserr.CodeExists},
		{"parent moved", func(dir string) {
			os.Rename(filepath.Join(dir, "sub"), filepath.Join(dir, "sub2"))
			os.Mkdir(filepath.Join(dir, "sub"), 0o755)
		}, fserr.CodeConflict},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, dir := batchTree(t)
			b := stageAll(t, s)
			before := snapshot(t, dir)
			c.meddle(dir)
			meddled := snapshot(t, dir)
			_, err := b.Commit()
			if err == nil || fserr.AsError(err).Code != c.code {
				t.Fatalf("commit: %v, want %s", err, c.code)
			}
			after := snapshot(t, dir)
			for k := range after {
				if strings.Contains(k, tempPrefix) {
					t.Errorf("temporary file %s left", k)
				}
			}
			for k, v := range meddled {
				if strings.Contains(k, tempPrefix) {
					continue
				}
				if after[k] != v {
					t.Errorf("%s: %q after the failed commit, %q before it (staged tree %v)", k, after[k], v, before)
				}
			}
		})
	}
}

// A swap that fails after others succeeded undoes them, in every
// position of the batch.
func TestBatchRollback(t *testing.T) {
	for fail := 1; fail <= 3; fail++ {
		s, dir := batchTree(t)
		b := stageAll(t, s)
		before := map[string]string{}
		for k, v := range snapshot(t, dir) {
			if !strings.Contains(k, tempPrefix) {
				before[k] = v
			}
		}
		n := 0
		Seam = func(p string) {
			if p != "batch.swapped" {
				return
			}
			if n++; n == fail {
				// The next swap meets a name that appeared meanwhile.
				os.WriteFile(filepath.Join(dir, "sub/new.txt"), []byte("intruder\n"), 0o644)
				before["sub/new.txt"] = "intruder\n"
			}
		}
		_, err := b.Commit()
		Seam = nil
		after := snapshot(t, dir)
		if fail <= 2 {
			// sub/new.txt is the third change: taken before it runs.
			if err == nil || fserr.AsError(err).Code != fserr.CodeExists {
				t.Fatalf("fail after %d: %v", fail, err)
			}
			if !mapsEqual(after, before) {
				t.Errorf("fail after %d: %v, want %v", fail, after, before)
			}
			continue
		}
		if err != nil {
			t.Errorf("fail after %d (past the new file): %v", fail, err)
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if v, ok := b[k]; !ok || v != a[k] {
			return false
		}
	}
	return true
}
