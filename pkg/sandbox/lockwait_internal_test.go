//go:build linux || darwin

package sandbox

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// TestInProcessLockWaitHonoursDeadline: a call of a long-lived server
// waiting for another call of the same process to finish its change
// gives up at its deadline (timeout), holding nothing.
func TestInProcessLockWaitHonoursDeadline(t *testing.T) {
	work := t.TempDir()
	p := policy.DefaultPolicy(work)
	p.Journal.Enabled = false
	s, err := New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	busy, waiting := s.ForCall(), s.ForCall()
	busy.writes <- struct{}{} // another call, mid-change
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	waiting.SetContext(ctx)
	done := make(chan error, 1)
	go func() {
		unlock, err := waiting.lockRoots([]*root{s.work})
		if err == nil {
			unlock()
		}
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(lockHangGuard):
		t.Fatalf("the call still waits past its deadline after %v", lockHangGuard)
	}
	if e := fserr.AsError(err); e.Code != fserr.CodeTimeout {
		t.Fatalf("lockRoots: %v, want timeout", err)
	}
	<-busy.writes
	// Nothing is left held: the next change locks at once.
	unlock, err := s.ForCall().lockRoots([]*root{s.work})
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if _, err := os.Stat(work); err != nil {
		t.Fatal(err)
	}
}
