package policy

import (
	"os"
	"path/filepath"
)

// LiesInByID returns the root of roots (directories) that p lies in by
// identity (st_dev, st_ino), whatever the paths say: one that is p's
// directory or an ancestor of it. A bind mount shows one directory under
// two names, so a file reached under another name than a writable root's
// is as writable as one below the root's own path. "" when none. Each
// root and each ancestor of p is stat'ed: they are configuration (the
// policy's roots, fsbox's own files), never a command's argument. A root
// that cannot be stat'ed holds nothing by identity (its path still
// counts: compare with Within first).
func LiesInByID(p string, roots []string) string {
	type id struct {
		root string
		fi   os.FileInfo
	}
	var ids []id
	for _, r := range roots {
		if fi, err := os.Stat(r); err == nil && fi.IsDir() {
			ids = append(ids, id{r, fi})
		}
	}
	if len(ids) == 0 {
		return ""
	}
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil {
			for _, r := range ids {
				if os.SameFile(fi, r.fi) {
					return r.root
				}
			}
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}
