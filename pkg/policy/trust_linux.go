package policy

import (
	"os"
	"path/filepath"
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
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil || abs == "" {
		return nil
	}
	type mount struct{ dev, root, at string }
	var mounts []mount
	for _, line := range strings.Split(string(data), "\n") {
		// id parent major:minor root mount-point options ... - type source
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mounts = append(mounts, mount{f[2], unescapeMount(f[3]), unescapeMount(f[4])})
	}
	// The mount abs lies in: the deepest mount point above it, the last
	// one listed when several are stacked there.
	best := -1
	for i, m := range mounts {
		if Within(abs, m.at) && (best < 0 || len(m.at) >= len(mounts[best].at)) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	m := mounts[best]
	rel, err := filepath.Rel(m.at, abs)
	if err != nil {
		return nil
	}
	src := filepath.Join(m.root, rel) // where abs lies in its file system
	var out []string
	for i, o := range mounts {
		if i == best || o.dev != m.dev || !Within(src, o.root) {
			continue
		}
		r, err := filepath.Rel(o.root, src)
		if err != nil {
			continue
		}
		if alias := filepath.Join(o.at, r); alias != abs {
			out = append(out, alias)
		}
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
