package ops

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// TestEditDiffLabels: the diff names a workdir file a/PATH and b/PATH, as
// git does; a file in a write root by its absolute path, never a//PATH.
func TestEditDiffLabels(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	work, other := filepath.Join(base, "work"), filepath.Join(base, "other")
	for _, d := range []string{work, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "f.txt"), []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := policy.DefaultPolicy(work)
	p.WriteRoots = []string{other}
	p.Journal.State = t.TempDir()
	sb, err := sandbox.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	for path, want := range map[string]string{"f.txt": "--- a/f.txt\n+++ b/f.txt\n", filepath.Join(other, "f.txt"): "--- " + filepath.Join(other, "f.txt") + "\n+++ " + filepath.Join(other, "f.txt") + "\n"} {
		r, err := Edit(context.Background(), sb, EditOptions{Path: path, Edits: []EditSpec{{Old: "old", New: "new"}}, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(r.Diff, want) {
			t.Errorf("%s: diff %q, want it to start %q", path, r.Diff, want)
		}
	}
}
