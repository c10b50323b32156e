package policy

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// mountAliases lists the other names of the file abs (a canonical path)
// through this process's mounts: where abs lies in a mount of a
// subtree (a bind mount), the same place under every other mount of that
// file system that shows it, and the other way round. An identity
// comparison of the directories above abs cannot see a bind mount of a
// directory inside a root; this can.
func mountAliases(abs string) []string {
	// The kernel's list of mounts, read before any sandbox exists.
	mounts := ReadMounts()
	if len(mounts) == 0 || abs == "" {
		return nil
	}
	// The mount abs lies in: the deepest mount point above it, the last
	// one listed when several are stacked there.
	best := -1
	for i, m := range mounts {
		if Within(abs, m.Point) && (best < 0 || len(m.Point) >= len(mounts[best].Point)) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	m := mounts[best]
	rel, err := filepath.Rel(m.Point, abs)
	if err != nil {
		return nil
	}
	src := filepath.Join(m.Root, rel) // where abs lies in its file system
	var out []string
	for i, o := range mounts {
		if i == best || o.Dev != m.Dev || !Within(src, o.Root) {
			continue
		}
		r, err := filepath.Rel(o.Root, src)
		if err != nil {
			continue
		}
		if alias := filepath.Join(o.Point, r); alias != abs {
			out = append(out, alias)
		}
	}
	return out
}

// Mount is one line of /proc/self/mountinfo: what is mounted (Dev, its
// major:minor, and Root, the directory of that file system it shows) and
// where (Point), with the mount's ID.
type Mount struct {
	ID    int
	Dev   string
	Root  string
	Point string
}

// ReadMounts parses this process's /proc/self/mountinfo (nil when there
// is none). The policy loader and the sandbox's root check both read the
// mount table through it.
func ReadMounts() []Mount {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []Mount
	for _, line := range strings.Split(string(data), "\n") {
		// ID PARENT MAJOR:MINOR ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		id, err := strconv.Atoi(f[0])
		if err != nil {
			continue
		}
		out = append(out, Mount{ID: id, Dev: f[2], Root: unescapeMount(f[3]), Point: unescapeMount(f[4])})
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
