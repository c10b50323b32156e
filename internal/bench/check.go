//go:build unix

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// The freshness row (issue 31): stat --check-file over a list of PATH=HEX
// lines, one for each .go file of a copy of Go's src/net, every hash
// current (all unchanged), against sha256sum -c on the same list in its
// own format: both read a list, hash each file once and compare.
const (
	dirCheck       = "check-net"               // a copy of $GOROOT/src/net, with the two lists in it
	checkList      = dirCheck + "/LIST.check"  // PATH=HEX a line, for fsbox stat --check-file
	checkListSHA   = dirCheck + "/LIST.sha256" // HEX  PATH a line, for sha256sum -c
	checkListFiles = dirCheck + "/LIST.files"  // the paths, one a line
)

func init() {
	datasets = append(datasets, dataset{dirCheck, 0, genCheck})
	comparisons = append(comparisons, comparison{
		// The rival is sha256sum -c --quiet on the same files, listed the
		// way it reads them: the like-for-like task (read a list, hash
		// every file, compare), rather than sha256sum FILES..., which
		// compares nothing. fsbox prints the unchanged paths as JSON;
		// sha256sum --quiet prints nothing when all match.
		name: "stat-check-net", needs: []string{dirCheck},
		fsbox:    []string{"stat", "--check-file", checkList},
		rival:    []string{"sha256sum", "--quiet", "-c", checkListSHA},
		maxRatio: 1.2,
	})
}

// genCheck copies $GOROOT/src/net to path and writes the lists, naming
// each file as the data directory sees it (dirCheck/...).
func genCheck(path string, _ int64) (int64, error) {
	if err := os.RemoveAll(path); err != nil {
		return 0, err
	}
	if out, err := exec.Command("cp", "-r", filepath.Join(runtime.GOROOT(), "src", "net"), path).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("copying src/net: %v: %s", err, out)
	}
	var names []string
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".go") {
			rel, _ := filepath.Rel(path, p)
			names = append(names, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	sort.Strings(names)
	var check, sums, files strings.Builder
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(path, n))
		if err != nil {
			return 0, err
		}
		h := sha256.Sum256(b)
		sum := hex.EncodeToString(h[:])
		fmt.Fprintf(&check, "%s/%s=%s\n", dirCheck, n, sum)
		fmt.Fprintf(&sums, "%s  %s/%s\n", sum, dirCheck, n)
		fmt.Fprintf(&files, "%s/%s\n", dirCheck, n)
	}
	for name, text := range map[string]string{checkList: check.String(), checkListSHA: sums.String(), checkListFiles: files.String()} {
		if err := os.WriteFile(filepath.Join(path, filepath.Base(name)), []byte(text), 0o644); err != nil {
			return 0, err
		}
	}
	return int64(len(names)), nil
}
