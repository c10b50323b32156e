package ops

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// TestGrepSeesAWriterMidRead changes a file after grep has read it and
// before grep checks it (the afterRead seam, not a timed race): a named
// file is then a conflict, not a count from two versions; a walked one is
// reported in errors[] while the rest of the tree is searched; a file
// that only grew (a log being appended to) passes with what it had.
func TestGrepSeesAWriterMidRead(t *testing.T) {
	sb, dir := testSandbox(t)
	write := func(name, body string) {
		t.Helper()
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	write("tree/a.txt", "needle\nneedle\n")
	write("tree/b.txt", "needle\n")
	write("log.txt", "needle\n")
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, f := range []string{"tree/a.txt", "tree/b.txt", "log.txt"} {
		must(t, os.Chtimes(filepath.Join(dir, f), old, old))
	}
	change := map[string]string{}
	afterRead = func(f *sandbox.File) {
		if body, ok := change[f.Info.Path]; ok {
			must(t, os.WriteFile(filepath.Join(dir, f.Info.Path), []byte(body), 0o644))
		}
	}
	defer func() { afterRead = nil }()

	// Written over with the same size: a conflict, named alone.
	change["tree/a.txt"] = "NEEDLE\nNEEDLE\n"
	_, err := Grep(context.Background(), sb, GrepOptions{Pattern: "needle", Paths: []string{"tree/a.txt"}, Count: true})
	if e := fserr.AsError(err); err == nil || e.Code != fserr.CodeConflict {
		t.Fatalf("named file written mid-read: %v, want conflict", err)
	}
	// In a walk: a.txt in errors[], b.txt counted.
	write("tree/a.txt", "needle\nneedle\n")
	must(t, os.Chtimes(filepath.Join(dir, "tree/a.txt"), old, old))
	res, err := Grep(context.Background(), sb, GrepOptions{Pattern: "needle", Paths: []string{"tree"}, Count: true})
	if err != nil || res.Count != 1 || len(res.Errors) != 1 || res.Errors[0].Path != "tree/a.txt" || res.Errors[0].Code != fserr.CodeConflict {
		t.Fatalf("walked file written mid-read: %v, %+v", err, res)
	}
	if res.Outcome().Failures == nil {
		t.Fatal("a walked file's conflict sets the call's outcome")
	}
	// Appended to: what it had is searched, no error.
	delete(change, "tree/a.txt")
	change["log.txt"] = "needle\nneedle more\n"
	res, err = Grep(context.Background(), sb, GrepOptions{Pattern: "needle", Paths: []string{"log.txt"}, Count: true})
	if err != nil || res.Count != 1 || len(res.Errors) != 0 {
		t.Fatalf("a log appended to mid-read: %v, %+v", err, res)
	}
}
