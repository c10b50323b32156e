package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestPosixDirLstatIsLstat: a posix directory handle describes its
// entries from its descriptor (fstatat) exactly as os.Lstat does: kind,
// permission, setuid, setgid and sticky bits, size, times, links,
// identity (ls and stat print them).
func TestPosixDirLstatIsLstat(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "file"), "content")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Chmod(filepath.Join(dir, "file"), 0o640|os.ModeSetuid|os.ModeSetgid))
	must(os.Mkdir(filepath.Join(dir, "sticky"), 0o755))
	must(os.Chmod(filepath.Join(dir, "sticky"), 0o777|os.ModeSticky))
	must(os.Symlink("file", filepath.Join(dir, "link")))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	must(os.Link(filepath.Join(dir, "file"), filepath.Join(dir, "hard")))
	st, err := openPosixStore(dir)
	must(err)
	defer st.close()
	h, _, err := st.openDir(context.Background(), ".")
	must(err)
	defer h.close()
	for _, name := range []string{"file", "sticky", "link", "fifo", "hard"} {
		fi, err := os.Lstat(filepath.Join(dir, name))
		must(err)
		want := factsOf(fi).Info
		got, err := h.lstat(name)
		must(err)
		if got.Info != want {
			t.Errorf("%s: handle %+v\nos.Lstat %+v", name, got.Info, want)
		}
	}
	if _, err := h.lstat("nope"); !os.IsNotExist(err) {
		t.Errorf("a missing entry: %v, want not exist", err)
	}
}
