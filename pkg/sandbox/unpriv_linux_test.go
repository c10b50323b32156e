//go:build linux

package sandbox_test

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// unprivEnv marks the child process unprivileged starts.
const unprivEnv = "FSBOX_TEST_UNPRIVILEGED"

// unprivileged runs the calling test where permission bits bind. As a
// user other than root it returns false at once: the caller goes on.
// As root (CI runs as root, where a mode-0 directory reads fine), it runs
// this same test again in a child process inside a new user namespace
// that maps root to uid 1000, so the child holds no capability over the
// files it makes and mode bits refuse it as they refuse any user; it
// reports the child's failures as its own and returns true: the caller
// returns. A machine where no user namespace can be made skips, saying
// so, and under CI=true fails.
func unprivileged(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 || os.Getenv(unprivEnv) == "1" {
		return false
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), unprivEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 1000, HostID: 0, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 1000, HostID: 0, Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(err.Error(), "fork/exec") {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true, and no user namespace can be made to run %s unprivileged: %v", t.Name(), err)
		}
		t.Skipf("as root, and no user namespace can be made to run this unprivileged: %v", err)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s as uid 1000 in a user namespace: %v\n%s", t.Name(), err, out)
	}
	t.Logf("ran as uid 1000 in a user namespace:\n%s", out)
	return true
}
