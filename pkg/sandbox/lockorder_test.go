//go:build linux || darwin

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/policy"
	"golang.org/x/sys/unix"
)

// lockHangGuard is how long a lock test waits before it takes the code
// under test for deadlocked: a guard, not a timing the test measures.
const lockHangGuard = time.Minute

// TestLocksByIdentityTakenOnce: a change whose roots meet one directory
// twice, under two names and at two depths (a write root that is the
// workdir's parent through a bind mount, which New now refuses; here the
// write root's lock list is given a second descriptor of the parent, as
// such a root had), locks that directory once, exclusively. Fails on
// c24bc27: locks were ordered by path depth and de-duplicated only when
// adjacent, so the change took the parent's shared lock through one
// descriptor, then waited forever for its exclusive lock through the
// other (the guard ends the wait).
func TestLocksByIdentityTakenOnce(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	parent, deep := base+"/P", base+"/x/y/z/R"
	for _, d := range []string{parent + "/W", deep} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := policy.DefaultPolicy(parent + "/W")
	p.WriteRoots = []string{deep}
	p.Journal.Enabled = false
	s, err := New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var r *root
	for _, rt := range s.roots {
		if rt.dir == deep {
			r = rt
		}
	}
	if err := r.prepareLock(); err != nil {
		t.Fatal(err)
	}
	alias, err := os.Open(parent)
	if err != nil {
		t.Fatal(err)
	}
	defer alias.Close()
	r.lock.locks = append(r.lock.locks, heldLock{f: alias, depth: strings.Count(deep, "/"), key: lockKey(alias)})

	type result struct {
		unlock func()
		err    error
	}
	done := make(chan result, 1)
	go func() {
		unlock, err := s.lockRoots([]*root{s.work, r})
		done <- result{unlock, err}
	}()
	var res result
	select {
	case res = <-done:
	case <-time.After(lockHangGuard):
		t.Fatalf("the change still waits for a lock it holds itself after %v", lockHangGuard)
	}
	if res.err != nil {
		t.Fatalf("lockRoots: %v", res.err)
	}
	probe, err := os.Open(parent)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	if err := unix.Flock(int(probe.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != unix.EWOULDBLOCK {
		t.Errorf("while the change holds its locks, a shared lock on %s from elsewhere: %v, want EWOULDBLOCK (held exclusively)", parent, err)
	}
	res.unlock()
	if err := unix.Flock(int(probe.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		t.Errorf("after the change, a shared lock on %s: %v, want it free", parent, err)
	}
}
