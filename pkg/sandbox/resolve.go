package sandbox

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Stage 1, resolve: a path argument is matched to its root, lexically
// (no disk access), and the roots themselves are described.

const (
	maxPathLen      = 4096
	maxComponentLen = 255
)

// root is one opened root directory.
type root struct {
	dir      string   // canonical absolute path
	alias    string   // the path as configured, cleaned (may differ through symlinks)
	r        *os.Root // every access below dir goes through r
	writable bool     // the workdir or a write root
	work     bool     // the workdir: paths below it print relative
	lock     rootLock // change's lock of this location (writable roots)
	special  bool     // /proc, /sys or /dev may lie below dir
	// nests are the other roots that overlap this one (a read root
	// holding the workdir, or lying inside it): a path below both is
	// checked relative to each, so which root its spelling picks never
	// decides which deny rules apply.
	nests []nest
}

// nest is another root overlapping a root: inside it at prefix (inner),
// or holding it, the root lying at prefix below the other.
type nest struct {
	prefix string // root-relative, '/'-separated
	inner  bool
}

// alias returns rel (relative to the root holding this nest) relative to
// the nested root, or false when rel does not lie below both.
func (n nest) alias(rel string) (string, bool) {
	if !n.inner {
		if rel == "." {
			return n.prefix, true
		}
		return n.prefix + "/" + rel, true
	}
	if strings.HasPrefix(rel, n.prefix+"/") {
		return rel[len(n.prefix)+1:], true
	}
	return "", false // the nested root itself ("." there) or outside it
}

// insideRoot: abs is a root or lies below one.
func (s *Sandbox) insideRoot(abs string) bool {
	for _, r := range s.roots {
		if abs == r.dir || strings.HasPrefix(abs, strings.TrimSuffix(r.dir, "/")+"/") {
			return true
		}
	}
	return false
}

// underAny: abs is one of dirs or lies below one.
func underAny(abs string, dirs []string) bool {
	for _, d := range dirs {
		if abs == d || strings.HasPrefix(abs, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// ValidatePath applies the shape rules every path argument must pass: not
// empty, no NUL byte, at most 4096 bytes, no component over 255 bytes.
func ValidatePath(p string) error {
	switch {
	case p == "":
		return Errorf(CodeUsage, p, "empty path")
	case strings.IndexByte(p, 0) >= 0:
		return Errorf(CodeUsage, p, "path holds a NUL byte")
	case len(p) > maxPathLen:
		return Errorf(CodeUsage, p, "path is longer than %d bytes", maxPathLen)
	}
	for _, c := range strings.Split(p, "/") {
		if len(c) > maxComponentLen {
			return Errorf(CodeUsage, p, "a path component is longer than %d bytes", maxComponentLen)
		}
	}
	return nil
}

// target is a path argument matched to its root.
type target struct {
	given string // as the caller wrote it
	rt    *root
	rel   string // root-relative, '/'-separated, "." for the root; may hold ".."
}

// resolve matches a path argument to a root without touching the disk.
func (s *Sandbox) resolve(p string) (*target, error) {
	t, err := s.resolveLexical(p)
	if t != nil {
		s.trail.note(p, t.rt.abs(path.Clean(t.rel)), false)
	} else {
		s.trail.note(p, "", false)
	}
	return t, err
}

func (s *Sandbox) resolveLexical(p string) (*target, error) {
	if err := ValidatePath(p); err != nil {
		return nil, err
	}
	given := p
	if p == "~" || strings.HasPrefix(p, "~/") {
		if s.home == "" {
			return nil, Errorf(CodeUsage, given, "~ needs a home directory and $HOME is unset")
		}
		p = s.home + strings.TrimPrefix(p, "~")
	}
	if !strings.HasPrefix(p, "/") {
		return &target{given: given, rt: s.work, rel: relJoin(splitPath(p))}, nil
	}
	parts := splitPath(p)
	for _, r := range s.roots {
		for _, base := range []string{r.dir, r.alias} {
			bp := splitPath(base)
			if len(bp) <= len(parts) && equalParts(bp, parts[:len(bp)]) {
				return &target{given: given, rt: r, rel: relJoin(parts[len(bp):])}, nil
			}
		}
	}
	return nil, deny(RuleRoot, given, "%s is outside the workdir and every read root", given)
}

// splitPath splits on '/', dropping empty and "." components. ".." stays:
// os.Root resolves it against real directories, never lexically.
func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

func relJoin(parts []string) string {
	if len(parts) == 0 {
		return "."
	}
	return strings.Join(parts, "/")
}

func equalParts(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// display is how output names a path: relative to the workdir inside it,
// absolute elsewhere. Lexical: it is the caller's spelling, cleaned.
func (t *target) display() string {
	return displayPath(t.rt, path.Clean(t.rel))
}

func displayPath(rt *root, rel string) string {
	if rt.work {
		return rel
	}
	if rel == "." {
		return rt.dir
	}
	return path.Join(filepath.ToSlash(rt.dir), rel)
}

// journalPath names a root-relative real path in the journal: as is in
// the workdir, absolute in another writable root.
func (rt *root) journalPath(rel string) string {
	if rt.work {
		return rel
	}
	return filepath.ToSlash(rt.abs(rel))
}

// absReal is the absolute path of a root-relative real path.
func (rt *root) abs(rel string) string {
	if rel == "." {
		return rt.dir
	}
	return filepath.Join(rt.dir, filepath.FromSlash(rel))
}

// relOf turns an absolute real path into one relative to rt, or reports
// that it is not below rt.
func (rt *root) relOf(abs string) (string, bool) {
	if abs == rt.dir {
		return ".", true
	}
	prefix := rt.dir
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	if !strings.HasPrefix(abs, prefix) {
		return "", false
	}
	return filepath.ToSlash(abs[len(prefix):]), true
}

// specialFS reports whether an absolute path lies in /proc, /sys or /dev.
func specialFS(abs string) bool {
	for _, d := range []string{"/proc", "/sys", "/dev"} {
		if abs == d || strings.HasPrefix(abs, d+"/") {
			return true
		}
	}
	return false
}
