//go:build linux

// Roots by identity (SPEC §5, "Roots by identity [seal]"): roots that
// overlap in a way their canonical paths do not show — a bind mount of
// one root's directory under another root, or as another root — are
// config at New. These tests need a mount namespace: the test re-runs
// itself under `unshare -rm` (or `unshare -m`, as root) and makes its bind
// mounts there; where neither works it skips and says why.
package sandbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// inMountNS reports whether this process is the re-run of the calling
// test inside a mount namespace of its own. In the parent it runs the
// test binary again, for this test alone, under unshare, fails the
// test with the child's output when the child fails, and returns false;
// it skips the test (saying why) when no mount namespace can be made.
// The child is killed past hangGuard: a deadlock fails the test and
// never hangs the suite.
func inMountNS(t *testing.T) bool {
	t.Helper()
	if os.Getenv("FSBOX_TEST_MOUNTNS") == t.Name() {
		return true
	}
	bin, err := exec.LookPath("unshare")
	if err != nil {
		t.Skipf("bind-mount test skipped: no unshare(1) to make a mount namespace: %v", err)
	}
	var flags []string
	var why []string
	for _, f := range [][]string{{"-rm"}, {"-m"}} {
		out, err := exec.Command(bin, append(f, "true")...).CombinedOutput()
		if err == nil {
			flags = f
			break
		}
		why = append(why, strings.Join(f, " ")+": "+strings.TrimSpace(string(out))+" "+err.Error())
	}
	if flags == nil {
		t.Skipf("bind-mount test skipped: unshare cannot make a mount namespace here (%s)", strings.Join(why, "; "))
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	args := append(flags, os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "FSBOX_TEST_MOUNTNS="+t.Name())
	out, err := cmd.CombinedOutput()
	switch {
	case ctx.Err() != nil:
		t.Errorf("the test hung in its mount namespace (killed after %v):\n%s", hangGuard, out)
	case err != nil:
		t.Errorf("in a mount namespace (unshare %s): %v\n%s", strings.Join(flags, " "), err, out)
	case strings.Contains(string(out), "--- SKIP"):
		t.Skipf("skipped in its mount namespace:\n%s", out)
	default:
		t.Logf("ran in a mount namespace (unshare %s)", strings.Join(flags, " "))
	}
	return false
}

func bindMount(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("bind-mount test skipped: mount --bind %s %s: %v", src, dst, err)
	}
	// Before the temporary directory is removed (cleanups run last
	// first), so its removal never walks a second name.
	t.Cleanup(func() { unix.Unmount(dst, unix.MNT_DETACH) })
}

// TestRootsByIdentity: each layout mounts a directory under a second
// name, then builds a policy on it. Fails on c24bc27: every layout was
// accepted (roots were compared as path strings), so one directory was
// under two sets of anchored rules and two locks.
func TestRootsByIdentity(t *testing.T) {
	if !inMountNS(t) {
		return
	}
	type layout struct {
		name string
		// make builds the tree below base and returns the policy's
		// workdir, write roots and read roots.
		make func(t *testing.T, base string) (work string, write, read []string)
		ok   bool // the paths show the overlap, or there is none
	}
	mk := func(t *testing.T, dirs ...string) {
		for _, d := range dirs {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	layouts := []layout{
		{"write root a bind of the workdir's parent (issue 39)", func(t *testing.T, b string) (string, []string, []string) {
			mk(t, b+"/P/W")
			bindMount(t, b+"/P", b+"/mnt/deep/M")
			return b + "/P/W", []string{b + "/mnt/deep/M"}, nil
		}, false},
		{"write root a bind of the workdir", func(t *testing.T, b string) (string, []string, []string) {
			mk(t, b+"/W")
			bindMount(t, b+"/W", b+"/M")
			return b + "/W", []string{b + "/M"}, nil
		}, false},
		{"write root a bind of a directory in the workdir", func(t *testing.T, b string) (string, []string, []string) {
			mk(t, b+"/W/sub")
			bindMount(t, b+"/W/sub", b+"/M")
			return b + "/W", []string{b + "/M"}, nil
		}, false},
		{"read root a bind of a directory in the workdir", func(t *testing.T, b string) (string, []string, []string) {
			mk(t, b+"/W/secret")
			bindMount(t, b+"/W/secret", b+"/R")
			return b + "/W", nil, []string{b + "/R"}
		}, false},
		{"read root below a bind of the workdir", func(t *testing.T, b string) (string, []string, []string) {
			mk(t, b+"/W/sub")
			bindMount(t, b+"/W", b+"/M")
			return b + "/W", nil, []string{b + "/M/sub"}
		}, false},
		{"read root holding a mount of the workdir", func(t *testing.T, b string) (string, []string, []string) {
			mk(t, b+"/W", b+"/R")
			bindMount(t, b+"/W", b+"/R/alias")
			return b + "/W", nil, []string{b + "/R"}
		}, false},
		{"read root holding a mount of the workdir's parent", func(t *testing.T, b string) (string, []string, []string) {
			mk(t, b+"/P/W", b+"/R")
			bindMount(t, b+"/P", b+"/R/up")
			return b + "/P/W", nil, []string{b + "/R"}
		}, false},
		{"workdir holding a mount of a write root", func(t *testing.T, b string) (string, []string, []string) {
			mk(t, b+"/W", b+"/O")
			bindMount(t, b+"/O", b+"/W/o")
			return b + "/W", []string{b + "/O"}, nil
		}, false},
		{"read roots, one a bind of the other's child", func(t *testing.T, b string) (string, []string, []string) {
			mk(t, b+"/W", b+"/R1/d")
			bindMount(t, b+"/R1/d", b+"/R2")
			return b + "/W", nil, []string{b + "/R1", b + "/R2"}
		}, false},
		// The paths show these: they nest as before.
		{"read root ~ holding the workdir", func(t *testing.T, b string) (string, []string, []string) {
			mk(t, b+"/home/W")
			return b + "/home/W", nil, []string{b + "/home"}
		}, true},
		{"read root holding a workdir that is a bind from elsewhere", func(t *testing.T, b string) (string, []string, []string) {
			mk(t, b+"/elsewhere", b+"/R")
			bindMount(t, b+"/elsewhere", b+"/R/W")
			return b + "/R/W", nil, []string{b + "/R"}
		}, true},
		{"a mount in the workdir from outside every root", func(t *testing.T, b string) (string, []string, []string) {
			mk(t, b+"/W", b+"/vol", b+"/O")
			bindMount(t, b+"/vol", b+"/W/node_modules")
			return b + "/W", []string{b + "/O"}, nil
		}, true},
		{"write root a bind of a directory outside every root", func(t *testing.T, b string) (string, []string, []string) {
			mk(t, b+"/W", b+"/store/t1")
			bindMount(t, b+"/store/t1", b+"/M")
			return b + "/W", []string{b + "/M"}, []string{b + "/W"}
		}, true},
		{"a place another mount hides is no second name", func(t *testing.T, b string) (string, []string, []string) {
			mk(t, b+"/R/x/W", b+"/empty")
			bindMount(t, b+"/R/x/W", b+"/W2")
			bindMount(t, b+"/empty", b+"/R/x") // R/x/W is no longer reachable from R
			return b + "/W2", nil, []string{b + "/R"}
		}, true},
		{"the same place not hidden is", func(t *testing.T, b string) (string, []string, []string) {
			mk(t, b+"/R/x/W")
			bindMount(t, b+"/R/x/W", b+"/W2")
			return b + "/W2", nil, []string{b + "/R"}
		}, false},
	}
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			work, write, read := l.make(t, base)
			p := policy.DefaultPolicy(work)
			p.WriteRoots, p.ReadRoots = write, read
			p.Journal.Enabled = false
			sb, err := sandbox.New(p, "")
			if l.ok {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				sb.Close()
				return
			}
			if err == nil {
				sb.Close()
				t.Fatalf("New accepted roots that are one directory under two names (workdir %s, write roots %v, read roots %v)", work, write, read)
			}
			t.Logf("New: %v", err)
			if e := fserr.AsError(err); e.Code != fserr.CodeConfig || !strings.Contains(e.Msg, "roots may overlap only as their paths show") {
				t.Fatalf("New: %v, want config naming the overlap", err)
			}
		})
	}
}

// TestBindMountedRootsNoDeadlock is issue 39's finding 6 as reported: a
// write root that is a bind mount of the workdir's parent, then a mv
// across the two roots. Fails on c24bc27: New accepted the roots and the
// mv waited forever on its own lock (locks ordered by path depth took a
// shared lock on the parent, then waited for the exclusive one on the
// same directory through the write root's descriptor, ignoring the
// deadline); here the child is killed by the guard.
func TestBindMountedRootsNoDeadlock(t *testing.T) {
	if !inMountNS(t) {
		return
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(base+"/P/W", 0o755))
	must(os.WriteFile(base+"/P/W/a.txt", []byte("a"), 0o644))
	bindMount(t, base+"/P", base+"/mnt/deep/M")
	p := policy.DefaultPolicy(base + "/P/W")
	p.WriteRoots = []string{base + "/mnt/deep/M"}
	p.Journal.Enabled = false
	sb, err := sandbox.New(p, "")
	if err == nil {
		defer sb.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := ops.Move(ctx, sb, "a.txt", base+"/mnt/deep/M/b.txt", false)
		t.Fatalf("New accepted a write root that is the workdir's parent under another name; mv: %v", err)
	}
	if e := fserr.AsError(err); e.Code != fserr.CodeConfig || !strings.Contains(e.Msg, "is the directory "+base+"/P under another name") {
		t.Fatalf("New: %v, want config naming %s/P", err, base)
	}
	if b, err := os.ReadFile(base + "/P/W/a.txt"); err != nil || string(b) != "a" {
		t.Errorf("a.txt: %q, %v", b, err)
	}
}
