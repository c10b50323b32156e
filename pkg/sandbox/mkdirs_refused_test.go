//go:build unix

package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// TestRefusedWriteMakesNoParents: a write through a symlink whose target
// (docs/docs/c.lock, parents missing) a write_deny rule protects is
// refused before any parent is made. Found by the sequence property test
// (seed 1795684692755742950): the parents were made first, then the name
// was checked, so a refused call left vault/docs/docs behind.
func TestRefusedWriteMakesNoParents(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(base, "work")
	if err := os.MkdirAll(filepath.Join(work, "vault"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("docs/docs/c.lock", filepath.Join(work, "vault", "ln")); err != nil {
		t.Fatal(err)
	}
	p := policy.DefaultPolicy(work)
	p.Paths.WriteDeny = []string{"**/c.lock"}
	p.Journal.Enabled = false
	s, err := New(p, base)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, err := s.OpenWriteTarget("vault/ln", true)
	if err == nil {
		w.Close()
	}
	if e := fserr.AsError(err); e == nil || e.Rule != fserr.RuleWriteDeny {
		t.Fatalf("write through a symlink to a write_deny name: %v, want denied (write_deny)", err)
	}
	if _, err := os.Lstat(filepath.Join(work, "vault", "docs")); err == nil {
		t.Error("the refused write made vault/docs")
	}
}
