package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fsbox/fsbox/pkg/policy"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// TestLandlockSecondWall restricts a child process and then reads around
// the sandbox on purpose (a stand-in for a bug in the user-space checks):
// the kernel must refuse what lies outside the roots, and allow the roots.
func TestLandlockSecondWall(t *testing.T) {
	if dir := os.Getenv("FSBOX_LANDLOCK_CHILD"); dir != "" {
		sb, err := New(policy.DefaultPolicy(dir), "")
		if err != nil {
			os.Exit(10)
		}
		if err := sb.Restrict(); err != nil || !sb.Landlock().Enforced {
			os.Exit(11)
		}
		if _, err := os.ReadFile(os.Getenv("FSBOX_OUTSIDE")); err == nil {
			os.Exit(12) // the wall let an outside read through
		}
		if err := os.WriteFile(filepath.Join(os.Getenv("FSBOX_OUTSIDE_DIR"), "planted"), []byte("x"), 0o644); err == nil {
			os.Exit(13)
		}
		if _, err := os.ReadFile(filepath.Join(dir, "inside")); err != nil {
			os.Exit(14) // the workdir must stay readable
		}
		if err := os.WriteFile(filepath.Join(dir, "new"), []byte("x"), 0o644); err != nil {
			os.Exit(15) // and writable
		}
		os.Exit(0)
	}
	if abi, err := llsys.LandlockGetABIVersion(); err != nil || abi < 1 {
		t.Skip("this kernel offers no Landlock")
	}
	work, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(work, "inside"), []byte("ok"), 0o644)
	secret := filepath.Join(outside, "secret")
	os.WriteFile(secret, []byte("SECRET"), 0o644)
	cmd := exec.Command(os.Args[0], "-test.run=^TestLandlockSecondWall$")
	cmd.Env = append(os.Environ(), "FSBOX_LANDLOCK_CHILD="+work, "FSBOX_OUTSIDE="+secret, "FSBOX_OUTSIDE_DIR="+outside)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child failed (%v): exit codes: 11 not enforced, 12 outside read allowed, 13 outside write allowed, 14/15 workdir refused\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(outside, "planted")); err == nil {
		t.Fatal("a file was planted outside")
	}
}
