//go:build unix

package ops

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

const crashTreeFiles = 30

// TestCopyTreeCrash kills (SIGKILL) a child process in the middle of a
// cp -r of a 30-file tree, at a random seam: after the plan, after k
// entries made in the stage, once the stage is complete, or just after
// the rename (before the record); and once not at all. The next call
// must leave all or nothing: no copy, or the whole copy equal to the
// source, and no temporary name anywhere. FSBOX_CRASH_N sets the runs
// (default 24), FSBOX_CRASH_SEED the seed (printed).
func TestCopyTreeCrash(t *testing.T) {
	if os.Getenv("FSBOX_CPCRASH_CHILD") != "" {
		copyTreeCrashChild(t)
		return
	}
	n := 24
	if v, err := strconv.Atoi(os.Getenv("FSBOX_CRASH_N")); err == nil && v > 0 {
		n = v
	}
	if testing.Short() {
		n = 6
	}
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("FSBOX_CRASH_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("FSBOX_CRASH_SEED=%d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	entries := crashTreeFiles + 3 + 1 // files, three subdirectories, the top
	for i := range n {
		work, state := t.TempDir(), t.TempDir()
		for f := range crashTreeFiles {
			p := filepath.Join(work, "src", fmt.Sprintf("d%d", f%3), fmt.Sprintf("f%d.txt", f))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("file %d\n", f), 100)), 0o640); err != nil {
				t.Fatal(err)
			}
		}
		// 0: after the plan; 1..entries: after k entries; entries+1: staged;
		// entries+2: renamed; entries+3: no crash.
		k := r.IntN(entries + 4)
		if i < 4 {
			k = []int{0, entries + 1, entries + 2, entries + 3}[i] // every seam kind at least once
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestCopyTreeCrash$")
		cmd.Env = append(os.Environ(), "FSBOX_CPCRASH_CHILD=1", "FSBOX_CRASH_WORK="+work, "FSBOX_CRASH_TMP="+t.TempDir(), "XDG_STATE_HOME="+state, "FSBOX_CRASH_K="+strconv.Itoa(k))
		out, err := cmd.CombinedOutput()
		killed := false
		if ee, ok := err.(*exec.ExitError); ok {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
				killed = true
			}
		}
		if (k <= entries+2 && !killed) || (k > entries+2 && err != nil) {
			t.Fatalf("seed %d run %d (crash at %d): child: %v\n%s", seed, i, k, err, out)
		}
		t.Setenv("XDG_STATE_HOME", state)
		sb, err := sandbox.New(policy.DefaultPolicy(work), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		// The next call: any change (here a mkdir elsewhere) finishes
		// what the crash left.
		if _, err := Mkdir(context.Background(), sb, "other"); err != nil {
			t.Fatalf("seed %d run %d (crash at %d): next call: %v", seed, i, k, err)
		}
		hist, err := History(context.Background(), sb, "", 0)
		sb.Close()
		if err != nil {
			t.Fatal(err)
		}
		copied := 0
		if _, err := os.Lstat(filepath.Join(work, "copy")); err == nil {
			for f := range crashTreeFiles {
				rel := filepath.Join(fmt.Sprintf("d%d", f%3), fmt.Sprintf("f%d.txt", f))
				a, _ := os.ReadFile(filepath.Join(work, "src", rel))
				b, err := os.ReadFile(filepath.Join(work, "copy", rel))
				if err != nil || string(a) != string(b) {
					t.Fatalf("seed %d run %d (crash at %d): copy/%s: %v (a partial copy)", seed, i, k, rel, err)
				}
				copied++
			}
		}
		switch {
		case k < entries+2 && copied != 0:
			t.Fatalf("seed %d run %d (crash at %d, before the rename): a copy was left", seed, i, k)
		case k >= entries+2 && copied != crashTreeFiles:
			t.Fatalf("seed %d run %d (crash at %d, after the rename): the copy is gone", seed, i, k)
		}
		// The record: there when the call finished; not when it was
		// killed before it was written (a copy killed between its rename
		// and its record is whole, and unrecorded, as any change is there).
		recorded := false
		for _, c := range hist.Changes {
			recorded = recorded || c.Command == "cp"
		}
		if recorded != (k == entries+3) {
			t.Fatalf("seed %d run %d (crash at %d): recorded %v", seed, i, k, recorded)
		}
		filepath.WalkDir(work, func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasPrefix(d.Name(), ".fsbox-tmp-") {
				t.Errorf("seed %d run %d (crash at %d): temporary %s left", seed, i, k, p)
			}
			return nil
		})
	}
}

// copyTreeCrashChild copies src to copy and is killed (SIGKILL: no
// deferred cleanup runs) at the seam FSBOX_CRASH_K names.
func copyTreeCrashChild(t *testing.T) {
	work := os.Getenv("FSBOX_CRASH_WORK")
	k, _ := strconv.Atoi(os.Getenv("FSBOX_CRASH_K"))
	sb, err := sandbox.New(policy.DefaultPolicy(work), os.Getenv("FSBOX_CRASH_TMP"))
	if err != nil {
		t.Fatal(err)
	}
	entries := crashTreeFiles + 3 + 1
	kill := func() { syscall.Kill(os.Getpid(), syscall.SIGKILL); select {} }
	made := 0
	sandbox.Seam = func(p string) {
		switch {
		case p == "cp.planned" && k == 0:
			kill()
		case p == "cp.copied":
			if made++; made == k {
				kill()
			}
		case p == "cp.staged" && k == entries+1:
			kill()
		case p == "cp.renamed" && k == entries+2:
			kill()
		}
	}
	if _, err := CopyTree(context.Background(), sb, "src", "copy", CopyTreeOptions{}); err != nil {
		t.Fatal(err)
	}
}
