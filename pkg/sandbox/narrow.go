package sandbox

import (
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// One narrowing: the directories fsbox mcp DIR... serves (Policy.Serve)
// bound a policy, they never replace its roots. The sandbox opens the
// served directories (so Landlock walls in no more than them, and
// relative paths resolve under the first), and matches every rule
// relative to the policy's roots that hold the path, as the policy
// alone would: a served directory anchors no rule. Whatever a served
// policy allows, the policy allows, with the same rule deciding.
//
// A deny or write_deny glob that begins with **/ also sees the root's
// own name: it is matched against the root's name joined to the
// root-relative path too (.git/config for a root that is .git), so a
// root that is itself .git stays write-denied. The directories above a
// root never decide, and allow rules and regexes never see its name.

// nameRules is a root's name as the **/ globs see it: the globs whose
// first component after **/ could match the name (the others match the
// name-joined path exactly when they match the path).
type nameRules struct {
	lower     string // the root's name, lower-cased as globs are
	deny      []int  // indices into Sandbox.deny
	writeDeny []int  // indices into Sandbox.writeDeny
}

// nameRulesOf is the name of the root at dir, or nil when no glob could
// see it (a root at /, or no **/ glob whose first component matches it):
// then a check costs nothing more.
func (s *Sandbox) nameRulesOf(dir string) *nameRules {
	base := filepath.Base(dir)
	if base == "/" || base == "." || base == "" || base == string(filepath.Separator) {
		return nil
	}
	n := &nameRules{lower: strings.ToLower(base)}
	for i, g := range s.deny {
		if nameMayMatch(g, n.lower) {
			n.deny = append(n.deny, i)
		}
	}
	for i, g := range s.writeDeny {
		if nameMayMatch(g, n.lower) {
			n.writeDeny = append(n.writeDeny, i)
		}
	}
	if len(n.deny)+len(n.writeDeny) == 0 {
		return nil
	}
	return n
}

// nameMayMatch reports whether glob g (lower-cased) begins with **/ and
// its next component could match name: only then can g match name/rel
// where it does not match rel.
func nameMayMatch(g, name string) bool {
	rest, ok := strings.CutPrefix(g, "**/")
	if !ok {
		return false
	}
	first, _, _ := strings.Cut(rest, "/")
	if strings.Contains(first, "**") {
		return true
	}
	ok, err := doublestar.Match(first, name)
	return ok || err != nil
}

// denyNamed matches the name-joined path lower (name/rel, lower-cased)
// against the globs n says can see the name.
func (s *Sandbox) denyNamed(n *nameRules, lower string, acc Access, given string) *fserr.Error {
	for _, i := range n.deny {
		if s.denyHit(i, lower) {
			return throughName(s.denyErr(i, given), n)
		}
	}
	if acc == AccessWrite {
		for _, i := range n.writeDeny {
			if s.writeDenyHit(i, lower) {
				return throughName(s.writeDenyErr(i, given), n)
			}
		}
	}
	return nil
}

func throughName(e *fserr.Error, n *nameRules) *fserr.Error {
	e.Msg += " (a **/ rule sees the root's own name, " + n.lower + ")"
	return e
}

// nestRoots records, for each root, the other roots a path below it is
// also checked against (nest), and the root names the **/ globs see.
// Without Policy.Serve those are the other roots opened. Under it, the
// opened roots are the directories served, and their nests are the
// policy's roots that hold them or lie inside them: every rule is
// matched where the policy anchors it, and the served directory's own
// spelling of a path decides nothing. Then the served directories are
// checked (checkServed).
func (s *Sandbox) nestRoots(p *policy.Policy) error {
	if p.Serve == nil {
		for _, r := range s.roots {
			r.name = s.nameRulesOf(r.dir)
		}
		for _, a := range s.roots {
			for _, b := range s.roots {
				if a == b {
					continue
				}
				if rel, ok := a.relOf(b.dir); ok && rel != "." {
					a.nests = append(a.nests, nest{prefix: rel, inner: true, name: b.name})
					b.nests = append(b.nests, nest{prefix: rel, inner: false, name: a.name})
				}
			}
		}
		return nil
	}
	var anchors []*root // the policy's roots: dir and name only, never opened
	defer func() {
		for _, a := range anchors {
			s.anchors = append(s.anchors, a.dir)
		}
	}()
	for _, d := range append(append([]string{p.Workdir}, p.WriteRoots...), p.ReadRoots...) {
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			return fserr.Errorf(fserr.CodeConfig, d, "root %s does not exist or cannot be resolved: %v", d, unwrapPathErr(err))
		}
		dup := false
		for _, a := range anchors {
			dup = dup || a.dir == real
		}
		if !dup {
			anchors = append(anchors, &root{dir: real, name: s.nameRulesOf(real)})
		}
	}
	for _, r := range s.roots {
		r.served = true
		held := false
		for _, a := range anchors {
			if rel, ok := a.relOf(r.dir); ok {
				r.nests = append(r.nests, nest{prefix: rel, name: a.name})
				held = true
			} else if rel, ok := r.relOf(a.dir); ok {
				r.nests = append(r.nests, nest{prefix: rel, inner: true, name: a.name})
			}
		}
		if !held {
			return fserr.Errorf(fserr.CodeConfig, r.dir, "%s is not inside the policy's roots: directories only narrow a policy", r.dir)
		}
	}
	return s.checkServed(p)
}

// checkServed refuses, as config, a served directory that a deny rule
// matches (it would serve nothing); under the reference profile
// (Served.Whole), which serves every directory whole, also one that a
// write_deny rule matches or that a deny or write_deny rule holds.
func (s *Sandbox) checkServed(p *policy.Policy) error {
	for _, r := range s.roots {
		if e := s.check(r, ".", true, AccessRead, r.dir, true); e != nil {
			return fserr.Errorf(fserr.CodeConfig, r.dir, "%s: fsbox mcp serves a directory only as far as the policy allows it (directories narrow the policy, and every rule keeps its anchor), and the policy denies this one", e.Msg)
		}
		if !p.Serve.Whole {
			continue
		}
		if e := s.check(r, ".", true, AccessWrite, r.dir, true); e != nil {
			return fserr.Errorf(fserr.CodeConfig, r.dir, "%s; the reference profile serves every directory writable: serve one the rules leave writable, or use the native profile", e.Msg)
		}
		if list, g := s.holds(r); g != "" {
			return fserr.Errorf(fserr.CodeConfig, r.dir, "the %s pattern %q reaches into %s, and the reference profile serves every directory whole (readable and writable, as the reference server does): serve a directory no rule reaches into, or use the native profile", list, g, r.dir)
		}
	}
	return nil
}

// holds names a deny or write_deny glob that could match something below
// the served directory r, decided conservatively from the glob's literal
// prefix (its components before the first wildcard): one whose prefix
// lies below r's place in a policy root, or above it, or any whose
// policy root lies inside r. A glob that begins with a wildcard (**/.git/**,
// *.pem) has no prefix: it is one that matches r (checkServed), through
// the root's name too, or none, as it would otherwise hold every
// directory.
func (s *Sandbox) holds(r *root) (list, glob string) {
	for _, set := range []struct {
		list  string
		globs []string
	}{{"deny", s.deny}, {"write_deny", s.writeDeny}} {
		for _, g := range set.globs {
			lit := literalPrefix(g)
			if lit == "" {
				continue
			}
			for _, n := range r.nests {
				at := strings.ToLower(n.prefix)
				if n.inner || at == "." || at == lit || strings.HasPrefix(lit, at+"/") || strings.HasPrefix(at, lit+"/") {
					return set.list, g
				}
			}
		}
	}
	return "", ""
}

// literalPrefix is the components of a glob before the first that holds
// a wildcard (*, ?, [, { or an escape).
func literalPrefix(g string) string {
	parts := strings.Split(g, "/")
	n := 0
	for n < len(parts) && !strings.ContainsAny(parts[n], `*?[{\`) {
		n++
	}
	return strings.Join(parts[:n], "/")
}

// policyFileOutside refuses, as config, a policy file that lies in a
// writable root of its own policy, by canonical path or by identity:
// every writable root of the policy in force, not only those a
// narrowing (Policy.Serve) serves, since a sandboxed call under the
// whole policy could have written it.
func policyFileOutside(p *policy.Policy) error {
	if p.Source == "" {
		return nil
	}
	dirs := p.WritableDirs()
	in := ""
	for _, d := range dirs {
		if policy.Within(p.Source, d) || policy.Within(p.Link, d) {
			in = d
			break
		}
	}
	if in == "" {
		in = policy.LiesInByID(p.Source, dirs)
	}
	if in == "" && p.Link != "" && p.Link != p.Source {
		in = policy.LiesInByID(p.Link, dirs)
	}
	if in == "" {
		return nil
	}
	what := "write root"
	if in == dirs[0] {
		what = "workdir"
	}
	return fserr.Errorf(fserr.CodeConfig, p.Source, "the policy file %s lies inside its own %s %s, where the sandboxed side could rewrite it", p.Source, what, in)
}

// policyRoots are the canonical roots of the policy in force, every one
// of them: under fsbox mcp DIR... more than the directories opened.
func (s *Sandbox) policyRoots() []string {
	if s.anchors != nil {
		return s.anchors
	}
	out := make([]string, len(s.roots))
	for i, r := range s.roots {
		out[i] = r.dir
	}
	return out
}
