//go:build unix

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/policy"
)

// bigTree makes a tree of ~400 directories and ~1200 files, with ignore
// files, hidden names, a denied directory and (for -L) symlinks back up.
func bigTree(t *testing.T) string {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var mk func(dir string, depth int)
	n := 0
	mk = func(dir string, depth int) {
		for i := 0; i < 3; i++ {
			mustWrite(t, filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), "x")
		}
		if r.IntN(5) == 0 {
			mustWrite(t, filepath.Join(dir, ".gitignore"), "f1.txt\n")
		}
		if r.IntN(7) == 0 {
			mustWrite(t, filepath.Join(dir, ".hidden"), "h")
		}
		if depth == 5 || n > 400 {
			return
		}
		for i := 0; i < 1+r.IntN(4); i++ {
			n++
			sub := filepath.Join(dir, fmt.Sprintf("d%d", i))
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			mk(sub, depth+1)
		}
	}
	work := filepath.Join(base, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	mk(work, 0)
	mustWrite(t, filepath.Join(work, ".git", "HEAD"), "ref: refs/heads/main\n") // a repository: its .gitignore files apply
	mustWrite(t, filepath.Join(work, "secrets", "key"), "k")
	mustSymlink(t, "..", filepath.Join(work, "d0", "up"))
	mustSymlink(t, "../d1", filepath.Join(work, "d0", "side"))
	return work
}

// openFDs counts the process's descriptors, after letting finalizers
// close whatever earlier tests dropped.
func openFDs(t *testing.T) int {
	runtime.GC()
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// The parallel walk reports exactly what the serial one does, in the same
// order, with the same counts, for every option mix — and, however it is
// cut short (an error after any number of entries, SkipDir anywhere), it
// leaves no descriptor open behind it.
func TestParallelWalkMatchesSerial(t *testing.T) {
	work := bigTree(t)
	p := policy.DefaultPolicy(work)
	p.Paths.Deny = []string{"secrets"}
	s, err := New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	type run struct {
		paths   []string
		skipped WalkSkipped
		err     error
	}
	walk := func(o WalkOptions, stopAt int, skipEvery int) run {
		var r run
		errStop := errors.New("stop")
		r.skipped, r.err = s.Walk(context.Background(), ".", o, func(e *Entry) error {
			defer e.Release()
			r.paths = append(r.paths, e.Path+" "+e.Type)
			if stopAt > 0 && len(r.paths) == stopAt {
				return errStop
			}
			if skipEvery > 0 && e.Type == "dir" && len(r.paths)%skipEvery == 0 {
				return SkipDir
			}
			return nil
		})
		if errors.Is(r.err, errStop) {
			r.err = nil
		}
		return r
	}
	before := openFDs(t)
	for _, o := range []WalkOptions{
		{MaxDepth: -1},
		{MaxDepth: -1, Hidden: true, NoIgnore: true},
		{MaxDepth: -1, Follow: true, Hidden: true},
		{MaxDepth: 2},
		{MaxDepth: 0},
	} {
		for _, cut := range []struct{ stop, skip int }{{0, 0}, {1, 0}, {37, 0}, {500, 0}, {0, 3}, {0, 11}, {800, 7}} {
			name := fmt.Sprintf("%+v/stop=%d/skip=%d", o, cut.stop, cut.skip)
			serial := o
			serial.workers = -1
			want := walk(serial, cut.stop, cut.skip)
			if want.err != nil {
				t.Fatalf("%s: serial walk: %v", name, want.err)
			}
			if cut == (struct{ stop, skip int }{}) && len(want.paths) < 10 && o.MaxDepth != 0 {
				t.Fatalf("%s: the tree walked to only %d entries", name, len(want.paths))
			}
			for _, workers := range []int{1, 2, 8} {
				par := o
				par.workers = workers
				got := walk(par, cut.stop, cut.skip)
				if got.err != nil || !slices.Equal(got.paths, want.paths) || got.skipped != want.skipped {
					t.Fatalf("%s, %d workers: got %d paths %+v err %v; want %d paths %+v\nfirst difference: %s",
						name, workers, len(got.paths), got.skipped, got.err, len(want.paths), want.skipped, firstDiff(got.paths, want.paths))
				}
			}
		}
	}
	if after := openFDs(t); after > before {
		t.Errorf("%d descriptors open before the walks, %d after", before, after)
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("at %d: %q vs %q", i, a[i], b[i])
		}
	}
	return fmt.Sprintf("lengths %d vs %d", len(a), len(b))
}
