//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// TestReadOfFileMovedIntoJournal: a read whose file a concurrent change
// replaced between the open and the descriptor check (the journal took
// the old file in) is a conflict, not "leads out of its root" — found by
// the sequence property test with two policies on one tree.
func TestReadOfFileMovedIntoJournal(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work, state := filepath.Join(base, "work"), filepath.Join(base, "state")
	mustWrite(t, filepath.Join(work, "c.txt"), "old\n")
	p := policy.DefaultPolicy(work)
	p.Journal.State = state
	s, err := New(p, base)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.useJournal(); err != nil || s.work.jn == nil {
		t.Fatalf("journal: %v", err)
	}
	f, err := os.Open(filepath.Join(work, "c.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Rename(filepath.Join(work, "c.txt"), filepath.Join(s.work.jn.dir, "taken")); err != nil {
		t.Fatal(err)
	}
	tg, err := s.pin("c.txt", AccessRead, false)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.checkOpened(&posixFile{os: f, fd: -1}, factsOf(fi), tg, false, AccessRead)
	if e := fserr.AsError(err); e == nil || e.Code != fserr.CodeConflict {
		t.Fatalf("a file moved into the journal under the read: %v, want conflict", err)
	}
}
