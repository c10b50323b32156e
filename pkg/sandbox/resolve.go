package sandbox

import (
	"os"
	"path"
	"strings"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// Stage 1, resolve: a path argument is matched to its root, lexically
// (no disk access), and the roots themselves are described.

const (
	maxPathLen      = 4096
	maxComponentLen = 255
)

// root is one opened root directory.
type root struct {
	dir   string // canonical absolute path
	alias string // the path as configured, cleaned (may differ through symlinks)
	// st is the root's storage: every access below dir goes through it
	// (root.go). r is the posix root's os.Root, which the change side and
	// the journal still use directly; nil for another kind.
	st       store
	r        *os.Root
	writable bool     // the workdir or a write root
	work     bool     // the workdir: paths below it print relative
	lock     rootLock // change's lock of this location (writable roots)
	jn       *journal // its journal, once opened (writable roots)
	special  bool     // /proc, /sys or /dev may lie below dir
	// url: dir is an object root's URL (s3://BUCKET[/PREFIX]), which only
	// an s3:// argument reaches (an absolute path never does).
	url bool
	// nests are the other roots that overlap this one (a read root
	// holding the workdir, or lying inside it): a path below both is
	// checked relative to each, so which root its spelling picks never
	// decides which deny rules apply.
	nests []nest
	// name is the root's own name as **/ deny and write_deny globs see
	// it (nameRules); nil for / or a served directory (served), whose
	// rules are all matched through nests.
	name *nameRules
	// served: a directory fsbox mcp DIR serves under a policy file
	// (Policy.Serve). Its nests are the policy's roots that overlap it,
	// and every rule is matched relative to those alone: the directory
	// bounds what is reached, it never anchors a rule.
	served bool
	// state: fsbox's state directories as this root sees them (ownstate.go)
	state rootState
}

// nest is another root overlapping a root: inside it at prefix (inner),
// or holding it, the root lying at prefix below the other ("." when it
// is the other: a served directory that is a policy root).
type nest struct {
	prefix string // root-relative, '/'-separated
	inner  bool
	name   *nameRules // the other root's name, as root.name
}

// ValidatePath applies the shape rules every path argument must pass: not
// empty, no NUL byte, at most 4096 bytes, no component over 255 bytes.
func ValidatePath(p string) error {
	switch {
	case p == "":
		return fserr.Errorf(fserr.CodeUsage, p, "empty path")
	case strings.IndexByte(p, 0) >= 0:
		return fserr.Errorf(fserr.CodeUsage, p, "path holds a NUL byte")
	case len(p) > maxPathLen:
		return fserr.Errorf(fserr.CodeUsage, p, "path is longer than %d bytes", maxPathLen)
	}
	for _, c := range strings.Split(p, "/") {
		if len(c) > maxComponentLen {
			return fserr.Errorf(fserr.CodeUsage, p, "a path component is longer than %d bytes", maxComponentLen)
		}
	}
	return nil
}

// target is a path argument matched to its root.
type target struct {
	given string // as the caller wrote it
	rt    *root
	rel   string // root-relative, '/'-separated, "." for the root, cleaned: a ".." left in it leads out of the root
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
			return nil, fserr.Errorf(fserr.CodeUsage, given, "~ needs a home directory and $HOME is unset")
		}
		p = s.home + strings.TrimPrefix(p, "~")
	}
	url := policy.IsObjectURL(p) // always a URL: a local directory named s3: is ./s3:
	if !url && !strings.HasPrefix(p, "/") {
		t := &target{given: given, rt: s.work, rel: path.Clean(relJoin(splitPath(p)))}
		return t, s.work.checkKey(t)
	}
	parts := splitPath(p)
	for _, r := range s.roots {
		if r.url != url {
			continue
		}
		for _, base := range []string{r.dir, r.alias} {
			bp := splitPath(base)
			if len(bp) <= len(parts) && equalParts(bp, parts[:len(bp)]) {
				t := &target{given: given, rt: r, rel: path.Clean(relJoin(parts[len(bp):]))}
				return t, r.checkKey(t)
			}
		}
	}
	if len(s.policy.WriteRoots) > 0 {
		return nil, fserr.Deny(fserr.RuleRoot, given, "%s is outside every root", given)
	}
	return nil, fserr.Deny(fserr.RuleRoot, given, "%s is outside the workdir and every read root", given)
}

// splitPath splits on '/', dropping empty and "." components. ".." stays
// here; resolve then cleans the root-relative path lexically (path.Clean),
// so a ".." takes back the component before it whatever that is on disk
// (a symlink, a file, a missing or denied directory): the path checked
// is the path opened, and nothing below a denied directory is walked to
// answer a path that only passes through it. A ".." left at the front
// climbs out of the root (denied by lexicalChecks).
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
