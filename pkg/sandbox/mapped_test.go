//go:build unix

package sandbox

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

func mappedFile(t *testing.T, size int) (*Sandbox, string, []byte) {
	t.Helper()
	dir := t.TempDir()
	s, err := New(policy.DefaultPolicy(dir), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	data := make([]byte, size)
	for i := range data {
		data[i] = byte('a' + i%26)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return s, filepath.Join(dir, "big.txt"), data
}

// TestMapAtWindows maps windows at offsets that are not page-aligned,
// past the end and empty, and reads back what the file holds.
func TestMapAtWindows(t *testing.T) {
	s, _, data := mappedFile(t, 3*int(pageSize)+100)
	f, err := s.Open("big.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !f.Mappable() {
		t.Fatal("a regular file is not mappable")
	}
	for _, c := range []struct {
		off  int64
		n    int
		want []byte
	}{
		{0, len(data), data},
		{1, 10, data[1:11]},
		{pageSize - 1, 2, data[pageSize-1 : pageSize+1]},
		{int64(len(data)) - 5, 100, data[len(data)-5:]},
		{int64(len(data)), 10, nil},
		{7, 0, nil},
	} {
		w, err := f.MapAt(c.off, c.n)
		if err != nil {
			t.Fatalf("MapAt(%d, %d): %v", c.off, c.n, err)
		}
		if !bytes.Equal(w.Data, c.want) {
			t.Errorf("MapAt(%d, %d) = %d bytes, want %d", c.off, c.n, len(w.Data), len(c.want))
		}
		w.Unmap()
	}
	if _, err := f.MapAt(-1, 1); err == nil {
		t.Error("a negative offset mapped")
	}
	if st, err := s.OpenStdin(); err == nil && st.Mappable() {
		t.Error("standard input is mappable")
	}
}

// TestMappedTruncatedIsAnError truncates a file under a mapped window:
// reading the window faults (SIGBUS), which GuardFaults turns into an io
// error instead of a crash; Unchanged reports the change as well.
func TestMappedTruncatedIsAnError(t *testing.T) {
	s, path, _ := mappedFile(t, 64*int(pageSize))
	f, err := s.Open("big.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	was, err := f.Stamp()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Unchanged(was); err != nil {
		t.Fatalf("an untouched file changed: %v", err)
	}
	w, err := f.MapAt(0, int(f.Info.Size))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Unmap()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	sum := 0
	err = GuardFaults("big.txt", func() error {
		for i := 0; i < len(w.Data); i += int(pageSize) {
			sum += int(w.Data[i])
		}
		return nil
	})
	var e *fserr.Error
	if !errors.As(err, &e) || e.Code != fserr.CodeConflict {
		t.Fatalf("reading a truncated window: %v (sum %d), want a conflict", err, sum)
	}
	// Fails on 6a21fbf: the message carried the runtime's "invalid memory
	// address or nil pointer dereference".
	if strings.Contains(e.Msg, "nil pointer") || strings.Contains(e.Msg, "memory address") || !strings.Contains(e.Msg, "shrank") {
		t.Errorf("message %q: want the file's own words, no runtime fault text", e.Msg)
	}
	if err := f.Unchanged(was); err == nil || fserr.AsError(err).Code != fserr.CodeConflict {
		t.Errorf("Unchanged after a truncation: %v, want a conflict", err)
	}
	// Other panics are not faults: they go on.
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("recovered %v, want the panic itself", r)
		}
	}()
	_ = GuardFaults("x", func() error { panic("boom") })
}

// TestMappedWrittenIsAChange: a write of the same size moves the times.
// (The file's times are set back first, so that a clock coarser than the
// test cannot hide the write.)
func TestMappedWrittenIsAChange(t *testing.T) {
	s, path, data := mappedFile(t, 4096)
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	f, err := s.Open("big.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	was, err := f.Stamp()
	if err != nil {
		t.Fatal(err)
	}
	g, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.WriteAt(bytes.ToUpper(data[:10]), 0); err != nil {
		t.Fatal(err)
	}
	g.Close()
	if err := f.Unchanged(was); err == nil {
		t.Error("a file written in place is unchanged")
	}
	// Growth alone passes: windows mapped at the old size never see it.
	was, err = f.Stamp()
	if err != nil {
		t.Fatal(err)
	}
	g, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	g.Write([]byte("more\n"))
	g.Close()
	if err := f.Unchanged(was); err != nil {
		t.Errorf("a file that grew: %v", err)
	}
}
