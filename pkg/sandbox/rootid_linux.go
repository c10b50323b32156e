package sandbox

import (
	"bufio"
	"os"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// mountEntry is one line of /proc/self/mountinfo: what is mounted (dev,
// and root, the directory of that file system it shows) and where
// (point).
type mountEntry struct {
	id    int
	dev   string // major:minor
	root  string
	point string
}

// readMounts parses /proc/self/mountinfo (nil when there is none).
func readMounts() []mountEntry {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []mountEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		// ID PARENT MAJOR:MINOR ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		id, err := strconv.Atoi(fields[0])
		if err != nil {
			continue
		}
		out = append(out, mountEntry{id: id, dev: fields[2], root: unescapeMount(fields[3]), point: unescapeMount(fields[4])})
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space,
// \011, \012, \134).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountOf is the mount dir lies on: the one statx names, else the last
// listed whose mount point is the longest prefix of dir.
func mountOf(dir string, ms []mountEntry) *mountEntry {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, dir, 0, unix.STATX_MNT_ID, &st); err == nil && st.Mask&unix.STATX_MNT_ID != 0 {
		for i := range ms {
			if uint64(ms[i].id) == st.Mnt_id {
				return &ms[i]
			}
		}
	}
	var best *mountEntry
	for i := range ms {
		if within(dir, ms[i].point) && (best == nil || len(ms[i].point) >= len(best.point)) {
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
	ms := readMounts()
	if len(ms) == 0 {
		return nil
	}
	place := make([]fsView, len(roots))
	for i, r := range roots {
		m := mountOf(r.dir, ms)
		if m == nil {
			continue
		}
		rel, ok := fsRel(r.dir, m.point)
		if !ok {
			continue
		}
		place[i] = fsView{m.dev, path.Join(m.root, rel), r.dir}
	}
	for i, a := range roots {
		if place[i].dev == "" {
			continue
		}
		views := []fsView{place[i]}
		for _, m := range ms {
			if m.point != a.dir && within(m.point, a.dir) {
				views = append(views, fsView{m.dev, m.root, m.point})
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
						return Errorf(CodeConfig, a.alias, "the root %s shows the root %s again at %s (a bind mount?): roots may overlap only as their paths show; name the directory by one path", a.dir, b.dir, alias)
					}
				} else if rel, ok := fsRel(v.fs, pb.fs); ok {
					// what v shows lies in b, at b/rel.
					if orig := path.Join(b.dir, rel); orig != v.at && sameDir(orig, v.at) {
						if v.at == a.dir {
							return Errorf(CodeConfig, a.alias, "the root %s is the directory %s under another name (a bind mount?), which lies in the root %s: roots may overlap only as their paths show; name the directory by one path", a.dir, orig, b.dir)
						}
						return Errorf(CodeConfig, a.alias, "a mount at %s inside the root %s shows the directory %s, which lies in the root %s (a bind mount?): roots may overlap only as their paths show; name the directory by one path", v.at, a.dir, orig, b.dir)
					}
				}
			}
		}
	}
	return nil
}
