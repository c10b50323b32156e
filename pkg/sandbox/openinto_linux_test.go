package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// One File reused through OpenInto for every walked file reads each one's
// own bytes and Info, survives a refused open in between (a FIFO swapped in
// after the listing), counts the bytes read once per file and leaves no
// descriptor open.
func TestOpenIntoReuse(t *testing.T) {
	tr := newTree(t, t.TempDir())
	mustWrite(t, filepath.Join(tr.work, "r/1.txt"), "one")
	mustWrite(t, filepath.Join(tr.work, "r/2.txt"), "second file")
	mustWrite(t, filepath.Join(tr.work, "r/3.txt"), "")
	mustWrite(t, filepath.Join(tr.work, "r/4.txt"), "fourth")
	s := newSandbox(t, tr, nil)
	before := openFDs(t)
	var f File
	var got []string
	var want int64
	if _, err := s.Walk(context.Background(), "r", WalkOptions{MaxDepth: -1, workers: -1}, func(e *Entry) error {
		defer e.Release()
		if e.Name == "2.txt" { // swap the listed file for a FIFO
			p := filepath.Join(tr.work, "r", e.Name)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip("mkfifo:", err)
			}
		}
		err := e.OpenInto(&f)
		if e.Name == "2.txt" {
			if fserr.AsError(err).Rule != fserr.RuleSpecialFile {
				t.Errorf("FIFO swapped in: err = %v, want rule %s", err, fserr.RuleSpecialFile)
			}
			return nil
		}
		if err != nil {
			t.Fatalf("%s: %v", e.Path, err)
		}
		data, err := io.ReadAll(&f)
		if err != nil {
			t.Fatal(err)
		}
		want += int64(len(data))
		if f.Info.Path != e.Path || f.Info.Name != e.Name || f.Info.Size != int64(len(data)) || f.Info.Type != "file" {
			t.Errorf("%s: Info = %+v", e.Path, f.Info)
		}
		got = append(got, e.Name+"="+string(data))
		return f.Close()
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[1.txt=one 3.txt= 4.txt=fourth]" {
		t.Errorf("read %v", got)
	}
	if _, read, _ := s.Usage(); read != want {
		t.Errorf("bytes read = %d, want %d", read, want)
	}
	if after := openFDs(t); after != before {
		t.Errorf("%d descriptors open before, %d after", before, after)
	}
}
