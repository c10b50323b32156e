//go:build unix

package sandbox

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

const crashFiles = 20

// TestBatchCrashRecovery kills a 20-file batch at random points (in a
// child process that exits at once, running no deferred cleanup: what
// kill -9 leaves) and checks that after the next call every file is
// all-old or all-new across the whole batch, with no temporary file left.
// FSBOX_CRASH_N sets the number of runs (default 40; CI's fuzz step runs
// 200), FSBOX_CRASH_SEED the seed (printed, so a failure reproduces).
func TestBatchCrashRecovery(t *testing.T) {
	if os.Getenv("FSBOX_CRASH_CHILD") != "" {
		crashChild(t)
		return
	}
	n := 40
	if v, err := strconv.Atoi(os.Getenv("FSBOX_CRASH_N")); err == nil && v > 0 {
		n = v
	}
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("FSBOX_CRASH_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("FSBOX_CRASH_SEED=%d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	for i := range n {
		work, state := t.TempDir(), t.TempDir()
		for f := range crashFiles {
			mustWrite(t, filepath.Join(work, fmt.Sprintf("d%d/f%d.txt", f%3, f)), fmt.Sprintf("old %d\n", f))
		}
		k := r.IntN(crashFiles + 2) // 0: after the plan; 1..20: after k swaps; 21: no crash
		cmd := exec.Command(os.Args[0], "-test.run=^TestBatchCrashRecovery$")
		cmd.Env = append(os.Environ(), "FSBOX_CRASH_CHILD=1", "FSBOX_CRASH_WORK="+work, "FSBOX_CRASH_TMP="+t.TempDir(), "XDG_STATE_HOME="+state, "FSBOX_CRASH_K="+strconv.Itoa(k))
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); (k <= crashFiles && (!ok || ee.ExitCode() != 3)) || (k > crashFiles && err != nil) {
			t.Fatalf("seed %d run %d (crash at %d): child: %v\n%s", seed, i, k, err, out)
		}
		t.Setenv("XDG_STATE_HOME", state)
		s, err := New(policy.DefaultPolicy(work), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Recover(); err != nil {
			t.Fatalf("seed %d run %d: recover: %v", seed, i, err)
		}
		s.Close()
		olds, news := 0, 0
		for f := range crashFiles {
			b, err := os.ReadFile(filepath.Join(work, fmt.Sprintf("d%d/f%d.txt", f%3, f)))
			switch {
			case err != nil:
				t.Fatalf("seed %d run %d (crash at %d): f%d: %v", seed, i, k, f, err)
			case string(b) == fmt.Sprintf("old %d\n", f):
				olds++
			case string(b) == fmt.Sprintf("new %d\n", f):
				news++
			default:
				t.Fatalf("seed %d run %d: f%d holds %q", seed, i, f, b)
			}
		}
		if olds != 0 && news != 0 {
			t.Fatalf("seed %d run %d (crash at %d): %d files old and %d new after recovery", seed, i, k, olds, news)
		}
		filepath.WalkDir(work, func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasPrefix(d.Name(), tempPrefix) {
				t.Errorf("seed %d run %d: temporary %s left", seed, i, p)
			}
			return nil
		})
	}
}

// crashChild stages the batch and exits, skipping every deferred
// cleanup, at the point FSBOX_CRASH_K names. Its scratch directory is
// the parent's (FSBOX_CRASH_TMP): a t.TempDir of its own would outlive
// the os.Exit.
func crashChild(t *testing.T) {
	work := os.Getenv("FSBOX_CRASH_WORK")
	k, _ := strconv.Atoi(os.Getenv("FSBOX_CRASH_K"))
	s, err := New(policy.DefaultPolicy(work), os.Getenv("FSBOX_CRASH_TMP"))
	if err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch()
	for f := range crashFiles {
		w, err := s.OpenWriteTarget(fmt.Sprintf("d%d/f%d.txt", f%3, f), false)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Put(w, fmt.Appendf(nil, "new %d\n", f), 1<<20, CommitOptions{Unchanged: true}); err != nil {
			t.Fatal(err)
		}
	}
	swaps := 0
	Seam = func(p string) {
		switch {
		case p == "batch.planned" && k == 0:
			os.Exit(3)
		case p == "batch.swapped":
			if swaps++; swaps == k {
				os.Exit(3)
			}
		}
	}
	if _, err := b.Commit(); err != nil {
		t.Fatal(err)
	}
}

// Where the journal lives: an explicit dir inside a root is config; a
// default place inside a root, or [journal] enabled = false, turns it off
// with the reason; otherwise it is made (0700) on first need, outside
// every root, and Load takes the state directory from the call's
// environment.
func TestJournalPlace(t *testing.T) {
	base := t.TempDir()
	work := filepath.Join(base, "work")
	mustWrite(t, filepath.Join(work, "a.txt"), "a\n")
	state := filepath.Join(base, "state")

	p := policy.DefaultPolicy(work)
	p.Journal.Dir = filepath.Join(work, ".journal")
	if _, err := New(p, base); err == nil || fserr.AsError(err).Code != fserr.CodeConfig {
		t.Errorf("a journal inside the workdir: %v, want config", err)
	}
	p = policy.DefaultPolicy(work)
	p.Journal.Dir = base // holds the workdir
	if _, err := New(p, base); err == nil || fserr.AsError(err).Code != fserr.CodeConfig {
		t.Errorf("a journal holding the workdir: %v, want config", err)
	}

	p = policy.DefaultPolicy(work)
	p.Journal.State = filepath.Join(work, "state") // a workdir of $HOME, say
	s, err := New(p, base)
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Journal(); st.Enabled || !strings.Contains(st.Reason, "overlaps the root") {
		t.Errorf("default place inside the workdir: %+v, want off with the reason", st)
	}
	s.Close()

	p = policy.DefaultPolicy(work)
	p.Journal.Enabled = false
	s, _ = New(p, base)
	if st := s.Journal(); st.Enabled || !strings.Contains(st.Reason, "enabled = false") {
		t.Errorf("switched off: %+v", st)
	}
	s.Close()

	p = policy.DefaultPolicy(work)
	p.Journal.State = state
	s, err = New(p, base)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(state); err == nil {
		t.Error("the journal was made before any change needed it")
	}
	if err := s.Recover(); err != nil {
		t.Fatal(err)
	}
	st := s.Journal()
	if !st.Enabled || st.Dir != state+"/journal" || len(st.Roots) != 1 {
		t.Fatalf("journal %+v", st)
	}
	for _, d := range []string{st.Dir, st.Roots[0].Dir} {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("journal %s: %v %v", d, fi, err)
		}
		if _, err := s.Open(d); err == nil {
			t.Errorf("a command reached the journal %s", d)
		}
	}
	if !strings.HasPrefix(st.Roots[0].Dir, st.Dir+"/") {
		t.Errorf("the workdir's journal %s is not in %s", st.Roots[0].Dir, st.Dir)
	}

	// A policy file's [journal] table, and the state directory from the
	// call's environment.
	cfg := filepath.Join(base, "cfg", "p.toml")
	mustWrite(t, cfg, fmt.Sprintf("workdir = %q\n[journal]\nenabled = true\nmax_bytes = 70000\n", work))
	lp, err := policy.Load(policy.Env{ConfigFlag: cfg, Cwd: work, Home: base, Getenv: fakeEnv{"XDG_STATE_HOME": state}.get})
	if err != nil {
		t.Fatal(err)
	}
	if lp.Journal.MaxBytes != 70000 || lp.Journal.State != state+"/fsbox" {
		t.Errorf("loaded [journal] %+v", lp.Journal)
	}
	mustWrite(t, cfg, fmt.Sprintf("workdir = %q\n[journal]\nmax_bytes = 0\n", work))
	if _, err := policy.Load(policy.Env{ConfigFlag: cfg, Cwd: work, Home: base}); err == nil || !strings.Contains(err.Error(), "max_bytes") {
		t.Errorf("max_bytes = 0: %v", err)
	}
}
