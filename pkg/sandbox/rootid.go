package sandbox

import (
	"os"
	"path/filepath"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// Roots by identity: two roots that are, or hold, one directory under two
// names (a bind mount, the same file system mounted twice) would put one
// file under two sets of anchored rules and two locks. Overlap their
// canonical paths show (a read root ~ holding the workdir) nests as
// before (root.nests); overlap they do not show is config at New.

// dirID is a directory on the way from a root up to /: its canonical
// path and identity (device, inode).
type dirID struct {
	path string
	key  [2]uint64
}

// ancestorIDs returns dir and each directory above it, with their
// identities; one that cannot be described is left out.
func ancestorIDs(dir string) []dirID {
	var out []dirID
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil {
			if k := devIno(fi); k != ([2]uint64{}) {
				out = append(out, dirID{d, k})
			}
		}
		if d == filepath.Dir(d) {
			return out
		}
	}
}

// checkRootIdentities refuses roots that overlap in a way their canonical
// paths do not show: a root whose identity is that of another root, or of
// a directory above one, under another path; and (where the system lists
// its mounts) a root that shows, at itself or at a mount inside it, a
// directory that lies in another root or holds it under another path.
// The cost is a stat per directory above each root (they are few) and,
// with more than one root, one reading of the mount table.
func checkRootIdentities(roots []*root) error {
	if len(roots) < 2 {
		return nil
	}
	chains := make([][]dirID, len(roots))
	for i, r := range roots {
		chains[i] = ancestorIDs(r.dir)
	}
	for i, a := range roots {
		if len(chains[i]) == 0 || chains[i][0].path != a.dir {
			continue
		}
		self := chains[i][0].key
		for j, b := range roots {
			if i == j {
				continue
			}
			for _, p := range chains[j] {
				if p.key != self || p.path == a.dir {
					continue
				}
				if p.path == b.dir {
					return fserr.Errorf(fserr.CodeConfig, a.alias, "the roots %s and %s are one directory under two names (a bind mount?): roots may overlap only as their paths show; name the directory by one path", a.dir, b.dir)
				}
				return fserr.Errorf(fserr.CodeConfig, a.alias, "the root %s is the directory %s under another name (a bind mount?), which holds the root %s: roots may overlap only as their paths show; name the directory by one path", a.dir, p.path, b.dir)
			}
		}
	}
	return mountOverlap(roots)
}

// sameDir reports whether the paths a and b are one directory.
func sameDir(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false
	}
	ka, kb := devIno(fa), devIno(fb)
	return ka == kb && ka != ([2]uint64{})
}
