//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The cp -r row (issue 42): fsbox cp -r of a 1,000-file tree (in 20
// directories of 50 files, 1 to 8 KiB each, about 4.5 MiB) against
// `cp -r SRC DST && sync -f DST`, the journal on (the default policy's).
// fsbox syncs every file and directory it makes before the rename that
// puts the tree in place; sync -f flushes the whole file system, which
// is what GNU cp needs to give the same guarantee. The row's setup
// removes DST before every run of either side, untimed.
const (
	dirCopyTree   = "cp-r-1000"
	copyTreeFiles = 1000
	copyTreeDirs  = 20
)

// genCopyTree writes the tree to copy, SRC (dirCopyTree/src),
// deterministically.
func genCopyTree(path string, _ int64) (int64, error) {
	if err := os.RemoveAll(path); err != nil {
		return 0, err
	}
	for i := range copyTreeFiles {
		d := filepath.Join(path, "src", fmt.Sprintf("d%02d", i%copyTreeDirs))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return 0, err
		}
		line := fmt.Sprintf("file %04d: the quick brown fox jumps over the lazy dog\n", i)
		body := strings.Repeat(line, (1024+(i*7919)%7168)/len(line)+1)
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%04d.txt", i)), []byte(body), 0o644); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// resetCopyTree removes the copy before a run.
func resetCopyTree(dir string) error {
	return os.RemoveAll(filepath.Join(dir, dirCopyTree, "dst"))
}
