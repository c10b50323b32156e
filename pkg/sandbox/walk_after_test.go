//go:build unix

package sandbox

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fsbox/fsbox/pkg/policy"
)

func TestWalkCompare(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"a", "a", 0},
		{"a/x", "a/x", 0},
		{"", "a", -1},
		{"a", "b", -1},
		{"a", "a/x", -1},
		{"a/x", "a-b", -1},
		{"a-b", "b", -1},
		{"a/x", "b", -1},
		{"a", "a-b", -1},
		{"a", "ab", -1},
		{"a/zzz", "a-b", -1},
		{"a/x/y", "a/x0", -1},
		{"a/x", "a/x/y", -1},
		{"a.b", "a/x", 1},
		{"a b", "a/x", 1},
		{"a!", "a/", 1},
		{"a/", "a/x", -1},
		{"a//b", "a/b", -1},
		{"/abs", "a", -1},
		{"../x", "..a", -1},
		{"~", "a/b/c", 1},
		{"A", "a", -1},
		{"\xff", "a", 1},
	} {
		if got := WalkCompare(c.a, c.b); got != c.want {
			t.Errorf("WalkCompare(%q, %q) = %d; want %d", c.a, c.b, got, c.want)
		}
		if got := WalkCompare(c.b, c.a); got != -c.want {
			t.Errorf("WalkCompare(%q, %q) = %d; want %d", c.b, c.a, got, -c.want)
		}
	}
	// "a" < "a/x" < "a-b" < "b", in one chain.
	chain := []string{"a", "a/x", "a/x/y", "a-b", "a-b/c", "a.b", "ab", "b"}
	for i := range chain {
		for j := range chain {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := WalkCompare(chain[i], chain[j]); got != want {
				t.Errorf("WalkCompare(%q, %q) = %d; want %d", chain[i], chain[j], got, want)
			}
		}
	}
}

// afterNames are the names the generated trees are made of: several hold
// bytes below '/' ('-', '.', ' ', '!', '+'), so byte order of whole paths
// and walk order differ ("a-b" < "a/x" bytewise; "a/x" first in a walk).
var afterNames = []string{"a", "a-b", "a.b", "b", "ab", "a b", "a!", "a+", "0", "B", "z~", ".h"}

// afterTree makes a tree of dirs and files mixed, a few levels deep, from
// afterNames, and returns its workdir.
func afterTree(t *testing.T, seed uint64, levels int) string {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(base, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 7))
	var mk func(dir string, depth int)
	mk = func(dir string, depth int) {
		for _, n := range afterNames {
			switch k := r.IntN(5); {
			case depth == 0 && (n == "a" || n == "a-b"):
				sub := filepath.Join(dir, n)
				if err := os.Mkdir(sub, 0o755); err != nil {
					t.Fatal(err)
				}
				mk(sub, depth+1)
			case k == 0:
				// absent
			case k <= 2 && depth < levels:
				sub := filepath.Join(dir, n)
				if err := os.Mkdir(sub, 0o755); err != nil {
					t.Fatal(err)
				}
				mk(sub, depth+1)
			default:
				mustWrite(t, filepath.Join(dir, n), "x")
			}
		}
	}
	mk(work, 0)
	// Always the pairs whose order bytewise and in a walk differ.
	for _, p := range []string{"a/x", "a/zz/q", "a-b/c", "a.b", "b"} {
		full := filepath.Join(work, filepath.FromSlash(p))
		if _, err := os.Lstat(full); err != nil {
			mustWrite(t, full, "x")
		}
	}
	return work
}

func afterSandbox(t *testing.T, work string) *Sandbox {
	t.Helper()
	s, err := New(policy.DefaultPolicy(work), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// walkRels walks "." and returns each reported entry's Rel, in order.
func walkRels(t *testing.T, s *Sandbox, o WalkOptions) []string {
	t.Helper()
	var rels []string
	_, err := s.Walk(context.Background(), ".", o, func(e *Entry) error {
		defer e.Release()
		rels = append(rels, e.Rel)
		return nil
	})
	if err != nil {
		t.Fatalf("walk %+v: %v", o, err)
	}
	return rels
}

// suffixAfter is what of full sorts strictly after after.
func suffixAfter(full []string, after string) []string {
	for i, r := range full {
		if WalkCompare(r, after) > 0 {
			return full[i:]
		}
	}
	return nil
}

// Sorting paths with WalkCompare gives the order a real walk reports them.
func TestWalkCompareMatchesWalkAfterOrder(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		work := afterTree(t, seed, 3)
		s := afterSandbox(t, work)
		got := walkRels(t, s, WalkOptions{MaxDepth: -1, Hidden: true, NoIgnore: true, workers: -1})
		if len(got) < 20 {
			t.Fatalf("seed %d: only %d entries", seed, len(got))
		}
		r := rand.New(rand.NewPCG(seed, 99))
		sorted := slices.Clone(got)
		r.Shuffle(len(sorted), func(i, j int) { sorted[i], sorted[j] = sorted[j], sorted[i] })
		slices.SortFunc(sorted, WalkCompare)
		if !slices.Equal(sorted, got) {
			t.Fatalf("seed %d: sorted with WalkCompare differs from the walk: %s", seed, firstDiff(sorted, got))
		}
		bytewise := slices.Clone(got)
		slices.Sort(bytewise)
		if slices.Equal(bytewise, got) {
			t.Errorf("seed %d: the tree does not tell walk order from byte order", seed)
		}
	}
}

// For every entry of a walk, and for positions not in the tree at all, a
// walk resumed after it reports exactly the full walk's entries that sort
// after it, with any option mix and whatever the workers.
func TestWalkAfterSuffix(t *testing.T) {
	work := afterTree(t, 3, 3)
	mustWrite(t, filepath.Join(work, "a", ".gitignore"), "ab\n")
	mustWrite(t, filepath.Join(work, ".git", "HEAD"), "ref: refs/heads/main\n") // a repository: a/.gitignore applies
	s := afterSandbox(t, work)
	odd := []string{"a/zzz", "0", "~", "a-", "../x", "/abs", "a//b", "a/", "/", "..", ".", "a/../b",
		"a/x/../../..", "\xff", " ", "a/x/y/z/w", "b/", "z~/q", ".h/a", "a-b//"}
	for _, o := range []WalkOptions{
		{MaxDepth: -1, Hidden: true, NoIgnore: true},
		{MaxDepth: -1},
		{MaxDepth: 2, Hidden: true},
	} {
		for _, workers := range []int{-1, 0} {
			o := o
			o.workers = workers
			full := walkRels(t, s, o)
			if len(full) < 20 {
				t.Fatalf("%+v: only %d entries", o, len(full))
			}
			afters := append(slices.Clone(full), odd...)
			for _, after := range afters {
				ao := o
				ao.After = after
				got := walkRels(t, s, ao)
				want := suffixAfter(full, after)
				if !slices.Equal(got, want) {
					t.Fatalf("%+v, After %q: got %d entries, want %d: %s", o, after, len(got), len(want), firstDiff(got, want))
				}
			}
		}
	}
}

// Entries sorting before the position are not counted as skipped either.
func TestWalkAfterSkippedCounts(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(base, "work")
	mustWrite(t, filepath.Join(work, ".a"), "x")
	mustWrite(t, filepath.Join(work, "a", ".b"), "x")
	mustWrite(t, filepath.Join(work, "a", "c"), "x")
	mustWrite(t, filepath.Join(work, "b", ".d"), "x")
	mustWrite(t, filepath.Join(work, "b", "e"), "x")
	s := afterSandbox(t, work)
	sk, err := s.Walk(context.Background(), ".", WalkOptions{MaxDepth: -1, NoIgnore: true, After: "a/c"}, func(e *Entry) error {
		e.Release()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if sk.Hidden != 1 { // b/.d only
		t.Errorf("hidden %d; want 1 (b/.d)", sk.Hidden)
	}
}

// A directory whose whole subtree sorts before the position is never
// listed: only its ancestors, itself and what comes after are.
func TestWalkAfterListsNothingBefore(t *testing.T) {
	work := afterTree(t, 5, 2)
	s := afterSandbox(t, work)
	var mu sync.Mutex
	var listed []string
	undo := SetDirSeam(func(_ context.Context, point, path string) {
		if point == "dir.list" {
			mu.Lock()
			listed = append(listed, path)
			mu.Unlock()
		}
	})
	defer undo()
	o := WalkOptions{MaxDepth: -1, Hidden: true, NoIgnore: true}
	full := walkRels(t, s, o)
	mu.Lock()
	all := len(listed)
	mu.Unlock()
	for _, workers := range []int{-1, 0} {
		for _, after := range append(slices.Clone(full), "a/zzz", "a//b", "~") {
			mu.Lock()
			listed = nil
			mu.Unlock()
			ao := o
			ao.After, ao.workers = after, workers
			walkRels(t, s, ao)
			mu.Lock()
			for _, p := range listed {
				if p == "." {
					continue
				}
				if WalkCompare(p, after) < 0 && !strings.HasPrefix(after, p+"/") {
					t.Errorf("After %q, %d workers: listed %q, which sorts wholly before it", after, workers, p)
				}
			}
			n := len(listed)
			mu.Unlock()
			if after == full[len(full)-1] && n >= all {
				t.Errorf("After %q (the last entry): listed %d directories of %d", after, n, all)
			}
		}
	}
}

// An empty After is the full walk; one after the last entry gives none.
func TestWalkAfterEnds(t *testing.T) {
	work := afterTree(t, 9, 2)
	s := afterSandbox(t, work)
	o := WalkOptions{MaxDepth: -1, Hidden: true, NoIgnore: true}
	full := walkRels(t, s, o)
	o.After = full[len(full)-1]
	if got := walkRels(t, s, o); len(got) != 0 {
		t.Errorf("After the last entry: got %v", got)
	}
	o.After = "\xff"
	if got := walkRels(t, s, o); len(got) != 0 {
		t.Errorf("After \\xff: got %v", got)
	}
	o.After = ""
	if got := walkRels(t, s, o); !slices.Equal(got, full) {
		t.Errorf("no After: %s", firstDiff(got, full))
	}
}
