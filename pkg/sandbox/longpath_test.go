//go:build unix

package sandbox

import (
	"os"
	"strings"
	"testing"
)

// deepChain makes top/n/n/... under dir, levels deep, with names of 200
// bytes: its paths pass 4096 bytes after about twenty levels. (os.Root
// reaches each level from the one above, past PATH_MAX.)
func deepChain(t *testing.T, dir, top string, levels int) {
	t.Helper()
	name := strings.Repeat("n", 200)
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Mkdir(top, 0o755); err != nil {
		t.Fatal(err)
	}
	cur, err := r.OpenRoot(top)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < levels; i++ {
		if err := cur.Mkdir(name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := cur.OpenRoot(name)
		cur.Close()
		if err != nil {
			t.Fatal(err)
		}
		cur = next
	}
	cur.Close()
}

// TestLongPathsAreNotEntered: a walk stops where a path would pass 4096
// bytes and counts it (skipped.long_paths), so its cost stays linear in
// the entries reported; rm -r refuses such a tree (too_large) and
// removes nothing. On 1f42b5c the walk reported every level, each path
// longer than the last, and rm -r took time in the square of the depth.
func TestLongPathsAreNotEntered(t *testing.T) {
	dir := t.TempDir()
	deepChain(t, dir, "chain", 30) // 30 × 201 bytes
	p := DefaultPolicy(dir)
	p.Commands["rm"] = true
	s, err := New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	longest, n := 0, 0
	sk, err := s.Walk("chain", WalkOptions{MaxDepth: -1}, func(e *Entry) error {
		n++
		longest = max(longest, len(e.Path))
		e.Release()
		return nil
	})
	if err != nil || sk.LongPaths != 1 || longest > maxPathLen || n != 20 {
		t.Errorf("walk: %d entries, longest path %d bytes, skipped %+v, %v", n, longest, sk, err)
	}
	w, err := s.OpenEntry("chain")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := s.Remove(w, true); AsError(err).Code != CodeTooLarge {
		t.Errorf("rm -r of a tree with a path over %d bytes: %v", maxPathLen, err)
	}
	if _, err := os.Stat(dir + "/chain/" + strings.Repeat("n", 200)); err != nil {
		t.Errorf("a refused rm -r removed something: %v", err)
	}
}
