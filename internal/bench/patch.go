//go:build unix

package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// The patch row (issue 17): a 50-file, 200-hunk unified diff over Go
// source files, applied by fsbox patch (which fsyncs every file and
// directory, all or nothing) and by git apply (which does not fsync).
// Each run starts from the same files: the row's setup copies the 50
// originals back over the tree, untimed, before every run of either side.
const (
	dirPatch   = "patch-50"
	patchFiles = 50
	patchHunks = 4 // per file
)

// genPatch copies 50 Go files of at least 80 lines from GOROOT/src
// (sorted, so the choice is the same every time) to orig/ and tree/, and
// writes fix.patch: in each file, 4 lines spread over it get a comment
// appended, each hunk with 3 lines of context.
func genPatch(path string, _ int64) (int64, error) {
	if err := os.RemoveAll(path); err != nil {
		return 0, err
	}
	var picked []string
	src := filepath.Join(runtime.GOROOT(), "src")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(picked) == patchFiles {
			return filepath.SkipDir
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			if b, err := os.ReadFile(p); err == nil && strings.Count(string(b), "\n") >= 80 && !strings.Contains(string(b), "\r") {
				picked = append(picked, p)
			}
		}
		return nil
	})
	if err != nil && len(picked) < patchFiles {
		return 0, err
	}
	sort.Strings(picked)
	var diff strings.Builder
	for i, p := range picked {
		b, err := os.ReadFile(p)
		if err != nil {
			return 0, err
		}
		name := fmt.Sprintf("f%02d.go", i)
		for _, d := range []string{"orig", "tree"} {
			if err := os.MkdirAll(filepath.Join(path, d), 0o755); err != nil {
				return 0, err
			}
			if err := os.WriteFile(filepath.Join(path, d, name), b, 0o644); err != nil {
				return 0, err
			}
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		rel := dirPatch + "/tree/" + name
		fmt.Fprintf(&diff, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n", rel, rel, rel, rel)
		for h := 1; h <= patchHunks; h++ {
			at := h * len(lines) / (patchHunks + 1) // 0-based line to change
			lo, hi := max(at-3, 0), min(at+4, len(lines))
			fmt.Fprintf(&diff, "@@ -%d,%d +%d,%d @@\n", lo+1, hi-lo, lo+1, hi-lo)
			for j := lo; j < hi; j++ {
				if j == at {
					fmt.Fprintf(&diff, "-%s\n+%s // patched %d\n", lines[j], lines[j], h)
				} else {
					fmt.Fprintf(&diff, " %s\n", lines[j])
				}
			}
		}
	}
	return 0, os.WriteFile(filepath.Join(path, "fix.patch"), []byte(diff.String()), 0o644)
}

// resetPatch puts the original files back before a run.
func resetPatch(dir string) error {
	base := filepath.Join(dir, dirPatch)
	for i := range patchFiles {
		name := fmt.Sprintf("f%02d.go", i)
		b, err := os.ReadFile(filepath.Join(base, "orig", name))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(base, "tree", name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
