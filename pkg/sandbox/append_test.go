//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// TestAppendFailureRestoresLength: an append that cannot be written whole
// (here: over RLIMIT_FSIZE, as a full disk would) leaves the file at its
// old length, not with a partial tail (issue 12 item 14).
func TestAppendFailureRestoresLength(t *testing.T) {
	tr := newTree(t, t.TempDir())
	s := newSandbox(t, tr, nil)
	p := filepath.Join(tr.work, "grow.txt")
	mustWrite(t, p, strings.Repeat("o", 1000))
	// The journal is opened first: go test logs the files a test opens,
	// and that log cannot grow under the limit either.
	if err := s.Recover(); err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	lim := old
	lim.Cur = 4096
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skip(err)
	}
	w, err := s.OpenWriteTarget("grow.txt", false)
	if err != nil {
		syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
		t.Fatal(err)
	}
	_, err = w.Append([]byte(strings.Repeat("n", 8000)), CommitOptions{})
	w.Close()
	syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
	checkErr(t, err, fserr.CodeIO, "")
	got, _ := os.ReadFile(p)
	if string(got) != strings.Repeat("o", 1000) {
		t.Fatalf("after a failed append the file has %d bytes, want the old 1000", len(got))
	}
}

// TestSweepTemps: a write removes fsbox's own temp files older than an
// hour from the directory it commits in, and leaves young ones and other
// files alone (issue 12 item 14).
func TestSweepTemps(t *testing.T) {
	tr := newTree(t, t.TempDir())
	s := newSandbox(t, tr, nil)
	oldTmp := filepath.Join(tr.work, "a", tempPrefix+"0123456789abcdef")
	youngTmp := filepath.Join(tr.work, "a", tempPrefix+"fedcba9876543210")
	other := filepath.Join(tr.work, "a", ".fsbox-tmp")
	for _, p := range []string{oldTmp, youngTmp, other} {
		mustWrite(t, p, "x")
	}
	past := time.Now().Add(-2 * time.Hour)
	for _, p := range []string{oldTmp, other} {
		if err := os.Chtimes(p, past, past); err != nil {
			t.Fatal(err)
		}
	}
	w, err := s.OpenWriteTarget("a/new.txt", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Replace(strings.NewReader("new"), 100, nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := os.Lstat(oldTmp); !os.IsNotExist(err) {
		t.Errorf("an hour-old temp file was left: %v", err)
	}
	for _, p := range []string{youngTmp, other} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
}
