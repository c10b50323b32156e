//go:build linux || darwin

package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// hangGuard is how long a test that must not deadlock may run before it
// is taken for hung: a guard, not a timing the test measures (here and
// in rootid_test.go).
const hangGuard = 2 * time.Minute

// TestLockWaitHonoursDeadline: a change waiting for the lock of a
// writable root that another process holds gives up at the call's
// deadline: timeout (exit class 9), nothing changed, nothing left held.
// Fails on c24bc27: flock waited without a deadline, so every change
// here waited as long as the holder held on (the guard ends the wait).
func TestLockWaitHonoursDeadline(t *testing.T) {
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(work+"/a.txt", []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := policy.DefaultPolicy(work)
	p.Journal.State = t.TempDir()
	sb, err := sandbox.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	// Another process's change on the workdir: an exclusive flock on it
	// through a descriptor of its own.
	holder, err := os.Open(work)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := unix.Flock(int(holder.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	changes := []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{"write", func(ctx context.Context) error {
			_, err := ops.Write(ctx, sb, ops.WriteOptions{Path: "a.txt", Content: strings.NewReader("new\n")})
			return err
		}},
		{"write new", func(ctx context.Context) error {
			_, err := ops.Write(ctx, sb, ops.WriteOptions{Path: "d/new.txt", Content: strings.NewReader("new\n")})
			return err
		}},
		{"mv", func(ctx context.Context) error { _, err := ops.Move(ctx, sb, "a.txt", "b.txt", false); return err }},
		{"cp", func(ctx context.Context) error { _, err := ops.Copy(ctx, sb, "a.txt", "c.txt", false); return err }},
		{"mkdir", func(ctx context.Context) error { _, err := ops.Mkdir(ctx, sb, "newdir"); return err }},
	}
	for _, c := range changes {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		done := make(chan error, 1)
		go func() { done <- c.run(ctx) }()
		select {
		case err = <-done:
		case <-time.After(hangGuard):
			t.Fatalf("%s still waits for the lock past its deadline after %v", c.name, hangGuard)
		}
		cancel()
		if e := fserr.AsError(err); e == nil || e.Code != fserr.CodeTimeout {
			t.Errorf("%s: %v, want timeout", c.name, err)
		}
	}
	entries, _ := os.ReadDir(work)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"a.txt"}) {
		t.Errorf("the workdir holds %v, want only a.txt", names)
	}
	if b, _ := os.ReadFile(work + "/a.txt"); string(b) != "old\n" {
		t.Errorf("a.txt: %q, want it unchanged", b)
	}
	// Released, the next change goes through: no waiter kept a lock.
	if err := unix.Flock(int(holder.Fd()), unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Write(context.Background(), sb, ops.WriteOptions{Path: "a.txt", Content: strings.NewReader("new\n")}); err != nil {
		t.Fatalf("write after the holder let go: %v", err)
	}
}
