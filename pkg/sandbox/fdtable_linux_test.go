package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/policy"
)

// TestDescriptorTable checks the two halves of fdtable.go in a process of
// its own (the table and its growth belong to the whole process): a
// parallel walk keeps at most frugalWindow directories open ahead of it
// until the table has grown; holding more than manyTargets write targets
// grows it (GrowDescriptors), giving the table room past slot 255; and
// then the walk reads further ahead.
func TestDescriptorTable(t *testing.T) {
	if os.Getenv("FSBOX_FDTABLE_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDescriptorTable$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "FSBOX_FDTABLE_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestDescriptorTable") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		t.Logf("child:\n%s", out)
		return
	}
	dir := t.TempDir()
	for i := 0; i < 40; i++ {
		for j := 0; j < 10; j++ {
			d := filepath.Join(dir, fmt.Sprintf("d%02d", i), fmt.Sprintf("e%02d", j))
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, "f.txt"), []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	s, err := New(policy.DefaultPolicy(dir), "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	open := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	walk := func() (most int) {
		o := WalkOptions{MaxDepth: -1, workers: 2}
		_, err := s.Walk(context.Background(), ".", o, func(e *Entry) error {
			e.Release()
			if e.Type == "dir" {
				time.Sleep(20 * time.Microsecond) // let the workers run ahead
			}
			most = max(most, open())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return most
	}
	base := open()
	if descriptorsGrown() {
		t.Fatal("the table counts as grown before anyone asked")
	}
	frugal := walk() - base
	// The walk's own chain of open directories (depth 3) and the
	// ReadDir of /proc/self/fd come on top of the read-ahead.
	if frugal > frugalWindow+6 {
		t.Errorf("before the table grew, the walk held %d descriptors, more than its read-ahead of %d allows", frugal, frugalWindow)
	}
	// Holding many write targets at once (as a many-file patch does)
	// grows the table.
	var targets []*WriteTarget
	for i := 0; i <= manyTargets; i++ {
		if descriptorsGrown() {
			t.Fatalf("the table grew with only %d write targets open", i)
		}
		w, err := s.OpenWriteTarget(fmt.Sprintf("t%02d.txt", i), false)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, w)
	}
	select {
	case <-DescriptorsGrown():
	case <-time.After(time.Minute):
		t.Fatal("the table never grew")
	}
	for _, w := range targets {
		w.Close()
	}
	if n := targetsHeld.Load(); n != 0 {
		t.Errorf("%d write targets still counted after Close", n)
	}
	if n := fdSize(t); n < 256 {
		t.Errorf("FDSize %d after GrowDescriptors, want at least 256", n)
	}
	wide := walk() - base
	if wide <= frugal {
		t.Errorf("after the table grew the walk read no further ahead: %d descriptors, %d before", wide, frugal)
	}
	t.Logf("descriptors held: %d frugal, %d once grown", frugal, wide)
}

func fdSize(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "FDSize:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	t.Fatal("no FDSize in /proc/self/status")
	return 0
}
