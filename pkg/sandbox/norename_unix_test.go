//go:build linux || darwin

package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"golang.org/x/sys/unix"
)

// TestLinkNoReplace is the fallback where a file system has no
// no-replace rename: a file moves to a free name, never over a taken one,
// and a directory is refused rather than risked.
func TestLinkNoReplace(t *testing.T) {
	dir := t.TempDir()
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	dfd := int(d.Fd())
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a", "A")
	write("taken", "T")
	if err := linkNoReplace(dfd, "a", dfd, "taken"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("onto a taken name: %v, want ErrExist", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "taken")); string(b) != "T" {
		t.Errorf("the taken name now holds %q", b)
	}
	if err := linkNoReplace(dfd, "a", dfd, "free"); err != nil {
		t.Fatalf("to a free name: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the old name is still there: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "free")); string(b) != "A" {
		t.Errorf("the new name holds %q", b)
	}
	if err := unix.Mkdirat(dfd, "sub", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := linkNoReplace(dfd, "sub", dfd, "sub2"); err == nil || fserr.AsError(err).Code != fserr.CodeConflict {
		t.Errorf("a directory: %v, want conflict", err)
	}
}
