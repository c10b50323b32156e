package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"golang.org/x/sys/unix"
)

// TestStateBindMount: a bind mount gives fsbox's state a second name that
// no path shows: the configuration directory and the default journal
// base bound inside the read root are found by identity (st_dev, st_ino)
// and stay unreadable, by a read, a missing name, a listing and a walk.
// It runs in a mount namespace of its own (unshare -rm) and says so when
// it cannot make one.
func TestStateBindMount(t *testing.T) {
	if os.Getenv("FSBOX_STATE_MOUNTNS") == "" {
		cmd := exec.Command("unshare", "-rm", os.Args[0], "-test.run=^TestStateBindMount$", "-test.v")
		cmd.Env = append(os.Environ(), "FSBOX_STATE_MOUNTNS=1")
		out, err := cmd.CombinedOutput()
		if err != nil && !strings.Contains(string(out), "=== RUN") {
			t.Skipf("skipped: cannot make a mount namespace here (unshare -rm: %v: %s)", err, strings.TrimSpace(string(out)))
		}
		t.Logf("in a mount namespace of its own:\n%s", out)
		if err != nil || !strings.Contains(string(out), "--- PASS: TestStateBindMount") {
			t.Fatalf("the test in the mount namespace failed: %v", err)
		}
		return
	}
	fx := newStateFixture(t)
	mnt := filepath.Join(fx.base, "mnt")
	for _, b := range []struct{ src, at string }{
		{filepath.Join(fx.state, "journal"), filepath.Join(mnt, "j")},
		{fx.cfg, filepath.Join(mnt, "cfg")},
	} {
		if err := os.MkdirAll(b.at, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mount(b.src, b.at, "", unix.MS_BIND, ""); err != nil {
			t.Fatalf("mount --bind %s %s: %v", b.src, b.at, err)
		}
		defer unix.Unmount(b.at, unix.MNT_DETACH)
	}
	// The marker would tell the journal base on its own: without it only
	// the identity does.
	if err := os.Remove(filepath.Join(fx.state, "journal", journalMarker)); err != nil {
		t.Fatal(err)
	}
	s := fx.reader(false)
	jf := journalFile(t, filepath.Join(mnt, "j"))
	for _, c := range []struct{ name, path, what string }{
		{"journal file", jf, "fsbox's default journal directory"},
		{"journal, missing name", filepath.Join(mnt, "j", "no-such-file"), "fsbox's default journal directory"},
		{"config file", filepath.Join(mnt, "cfg", "config.toml"), "fsbox's configuration directory"},
	} {
		_, err := s.Open(c.path)
		if e := fserr.AsError(err); err == nil || e.Rule != fserr.RuleOwnFile || !strings.Contains(e.Msg, c.what) {
			t.Errorf("%s: read %s: %v, want denied (own_file) naming %q", c.name, c.path, err, c.what)
		}
	}
	d, err := s.OpenDir(filepath.Join(mnt, "j"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.ReadDir()
	d.Close()
	if err != nil || len(l.Entries) != 0 || l.Denied == 0 {
		t.Errorf("ls of the bound journal base: %v, %d denied, %v", l.Entries, l.Denied, err)
	}
	n := 0
	sk, err := s.Walk(context.Background(), mnt, WalkOptions{Hidden: true, NoIgnore: true, MaxDepth: -1}, func(e *Entry) error {
		e.Release()
		n++
		return nil
	})
	if err != nil || n != 2 || sk.Denied < 2 {
		t.Errorf("walk of the mounts: %d entries (want the two directories), skipped %+v, %v", n, sk, err)
	}
}
