package sandbox

import (
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// mountOf is the mount dir lies on: the one statx names, else the last
// listed whose mount point is the longest prefix of dir.
func mountOf(dir string, ms []policy.Mount) *policy.Mount {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, dir, 0, unix.STATX_MNT_ID, &st); err == nil && st.Mask&unix.STATX_MNT_ID != 0 {
		for i := range ms {
			if uint64(ms[i].ID) == st.Mnt_id {
				return &ms[i]
			}
		}
	}
	var best *policy.Mount
	for i := range ms {
		if policy.Within(dir, ms[i].Point) && (best == nil || len(ms[i].Point) >= len(best.Point)) {
			best = &ms[i]
		}
	}
	return best
}

// fsView is a directory of a file system (dev, fs: its path there) seen
// at the path at.
type fsView struct{ dev, fs, at string }

// fsRel is p relative to dir when p is dir or lies below it ('/'-paths).
func fsRel(p, dir string) (string, bool) {
	switch {
	case p == dir:
		return ".", true
	case dir == "/":
		return strings.TrimPrefix(p, "/"), true
	case strings.HasPrefix(p, dir+"/"):
		return p[len(dir)+1:], true
	}
	return "", false
}

// mountOverlap refuses a root that shows, at itself or at a mount point
// inside it, a directory of another root (or one holding it) at a path
// that is not that root's own: the mount table says where each
// directory's file system is shown, and a path is blamed only when it
// really is the same directory (a mount hiding the place shows nothing).
func mountOverlap(roots []*root) error {
	ms := policy.ReadMounts()
	if len(ms) == 0 {
		return nil
	}
	place := make([]fsView, len(roots))
	for i, r := range roots {
		m := mountOf(r.dir, ms)
		if m == nil {
			continue
		}
		rel, ok := fsRel(r.dir, m.Point)
		if !ok {
			continue
		}
		place[i] = fsView{m.Dev, path.Join(m.Root, rel), r.dir}
	}
	for i, a := range roots {
		if place[i].dev == "" {
			continue
		}
		views := []fsView{place[i]}
		for _, m := range ms {
			if m.Point != a.dir && policy.Within(m.Point, a.dir) {
				views = append(views, fsView{m.Dev, m.Root, m.Point})
			}
		}
		for j, b := range roots {
			pb := place[j]
			if i == j || pb.dev == "" {
				continue
			}
			for _, v := range views {
				if v.dev != pb.dev {
					continue
				}
				if rel, ok := fsRel(pb.fs, v.fs); ok {
					// b lies in what v shows: at v.at/rel, inside a.
					if alias := path.Join(v.at, rel); alias != b.dir && sameDir(alias, b.dir) {
						return fserr.Errorf(fserr.CodeConfig, a.alias, "the root %s shows the root %s again at %s (a bind mount?): roots may overlap only as their paths show; name the directory by one path", a.dir, b.dir, alias)
					}
				} else if rel, ok := fsRel(v.fs, pb.fs); ok {
					// what v shows lies in b, at b/rel.
					if orig := path.Join(b.dir, rel); orig != v.at && sameDir(orig, v.at) {
						if v.at == a.dir {
							return fserr.Errorf(fserr.CodeConfig, a.alias, "the root %s is the directory %s under another name (a bind mount?), which lies in the root %s: roots may overlap only as their paths show; name the directory by one path", a.dir, orig, b.dir)
						}
						return fserr.Errorf(fserr.CodeConfig, a.alias, "a mount at %s inside the root %s shows the directory %s, which lies in the root %s (a bind mount?): roots may overlap only as their paths show; name the directory by one path", v.at, a.dir, orig, b.dir)
					}
				}
			}
		}
	}
	return nil
}
