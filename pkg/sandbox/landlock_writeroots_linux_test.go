package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/policy"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// TestLandlockWriteRoots: under Landlock each write root is read-write as
// the workdir is (a raw write there passes the kernel; one in a read root
// or outside does not), fsbox's own changes in a write root still work
// after the wall went up, and their locks still reach every ancestor
// directory (opened before the wall, which would refuse them afterwards).
//
// Fails on 6a21fbf: there are no write roots (Policy has no WriteRoots).
func TestLandlockWriteRoots(t *testing.T) {
	if os.Getenv("FSBOX_LLWR_CHILD") != "" {
		landlockWriteRootsChild()
		return
	}
	if abi, err := llsys.LandlockGetABIVersion(); err != nil || abi < 1 {
		t.Skip("this kernel offers no Landlock")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"work", "wr", "ro", "outside", "state"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLandlockWriteRoots$")
	cmd.Env = append(os.Environ(), "FSBOX_LLWR_CHILD="+base)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child failed (%v):\n%s", err, out)
	}
	for _, p := range []string{"wr/raw", "wr/d/f.txt", "work/w.txt"} {
		if _, err := os.Stat(filepath.Join(base, p)); err != nil {
			t.Errorf("%s was not written: %v", p, err)
		}
	}
	for _, p := range []string{"ro/planted", "outside/planted"} {
		if _, err := os.Stat(filepath.Join(base, p)); err == nil {
			t.Errorf("%s was planted through the wall", p)
		}
	}
}

func landlockWriteRootsChild() {
	base := os.Getenv("FSBOX_LLWR_CHILD")
	fail := func(format string, a ...any) {
		os.Stderr.WriteString(strings.TrimSpace(fmt.Sprintf(format, a...)) + "\n")
		os.Exit(2)
	}
	p := policy.DefaultPolicy(filepath.Join(base, "work"))
	p.WriteRoots = []string{filepath.Join(base, "wr")}
	p.ReadRoots = []string{filepath.Join(base, "ro")}
	p.Journal.State = filepath.Join(base, "state")
	s, err := New(p, base)
	if err != nil {
		fail("New: %v", err)
	}
	if err := s.Restrict(); err != nil || !s.Landlock().Enforced {
		fail("Restrict: %v, %+v", err, s.Landlock())
	}
	if err := os.WriteFile(filepath.Join(base, "wr", "raw"), []byte("x"), 0o644); err != nil {
		fail("a raw write in the write root: %v", err)
	}
	for _, d := range []string{"ro", "outside"} {
		if err := os.WriteFile(filepath.Join(base, d, "planted"), []byte("x"), 0o644); err == nil {
			fail("a raw write in %s passed the wall", d)
		}
	}
	if _, _, err := s.Mkdir(filepath.Join(base, "wr", "d")); err != nil {
		fail("mkdir in the write root: %v", err)
	}
	for _, f := range []string{filepath.Join(base, "wr", "d", "f.txt"), "w.txt"} {
		w, err := s.OpenWriteTarget(f, false)
		if err != nil {
			fail("open %s: %v", f, err)
		}
		if _, err := w.Commit(strings.NewReader("content\n"), 1<<20, CommitOptions{}); err != nil {
			fail("write %s: %v", f, err)
		}
		w.Close()
	}
	for _, rt := range s.roots {
		if !rt.writable {
			continue
		}
		want := strings.Count(rt.dir, "/") + 1 // the root and each ancestor up to /
		if got := len(rt.lock.locks); got != want {
			fail("the lock of %s holds %d descriptors, want %d (the root and every ancestor)", rt.dir, got, want)
		}
	}
	os.Exit(0)
}
