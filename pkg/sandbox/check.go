package sandbox

import (
	"path"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// Stage 2, check: the rules — deny, allow, write_deny, regexes on every
// ancestor, writable roots, fsbox's own files, kinds, links — and the
// mapping of an operating-system error to the caller's error.

// lexicalChecks are the checks on the spelling of a path, before any
// open: /proc, /sys and /dev, and deny patterns on the path as written.
func (s *Sandbox) lexicalChecks(t *target) error {
	clean := path.Clean(t.rel)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return fserr.Deny(fserr.RuleRoot, t.given, "%s climbs out of its root with '..'", t.given)
	}
	if specialFS(t.rt.abs(clean)) {
		return fserr.Deny(fserr.RuleSpecialFS, t.given, "%s is under /proc, /sys or /dev, which are never readable", t.given)
	}
	if err := s.checkPatterns(t.rt, clean, true, AccessRead, t.given); err != nil {
		return err
	}
	return nil
}

// ownFiles is the set of fsbox's own files, shared by a sandbox's views.
// Paths are canonicalised on first use (a change), so a call that only
// reads pays nothing for them.
type ownFiles struct {
	mu    sync.Mutex
	paths []ownFile
	raw   int // paths[raw:] are not canonical yet
}

type ownFile struct{ path, what string }

// Protect adds fsbox's own files (absolute paths; each is canonicalised
// component by component) that no change may touch: the running
// executables and the companion's lookup name, which the command layer
// knows. The policy file, the journal and the audit log are protected
// by New.
func (s *Sandbox) Protect(what string, paths ...string) {
	s.own.mu.Lock()
	defer s.own.mu.Unlock()
	for _, p := range paths {
		if p != "" {
			s.own.paths = append(s.own.paths, ownFile{p, what})
		}
	}
}

// ownFile names the own file that abs is or lies in, or with holds, one
// that lies below abs ("" when none).
func (s *Sandbox) ownFile(abs string, holds bool) (string, string) {
	s.own.mu.Lock()
	defer s.own.mu.Unlock()
	for ; s.own.raw < len(s.own.paths); s.own.raw++ {
		o := &s.own.paths[s.own.raw]
		o.path = policy.Canonical(o.path)
	}
	for _, o := range s.own.paths {
		if policy.Within(abs, o.path) || holds && policy.Within(o.path, abs) {
			return o.path, o.what
		}
	}
	return "", ""
}

// checkPatterns applies deny, allow and (for writes) write_deny to a real
// path relative to root rt. A path is denied when it or any of its parent
// directories matches a deny glob or deny regex (a rule that matches a
// directory protects everything beneath it), relative to rt or to any
// root overlapping rt (see nest). Allow rules apply to everything but
// directories, which stay traversable, relative to the most specific
// root. The cost is one match per rule, not one per ancestor (see
// treeGlob, hasEndAssertion).
func (s *Sandbox) checkPatterns(rt *root, rel string, isDir bool, acc Access, given string) *fserr.Error {
	return s.check(rt, rel, isDir, acc, given, true)
}

// checkLeaf is checkPatterns for a path whose parent directory has already
// passed checkPatterns (a walk's entries, a tree's members): no regex is
// tried on the ancestors again.
func (s *Sandbox) checkLeaf(rt *root, rel string, isDir bool, acc Access, given string) *fserr.Error {
	return s.check(rt, rel, isDir, acc, given, false)
}

// admitChild is the one admission of a name below a directory the door
// already pinned and checked (its real path, the rules on it and above
// it): what a listing shows, a walk reports or enters, a walk opens by
// name (an ignore file), and what a change to a tree (mv, rm -r) moves or
// removes. rel is the child's real root-relative path: the directory's
// real path and the name. It applies the rules to the name alone (the
// directory's ancestors passed already) and refuses /proc, /sys and /dev
// below a root that holds them. A change's callers add the write rules
// (checkWrite) with their own wording.
func (s *Sandbox) admitChild(rt *root, rel string, isDir bool, acc Access, given string) *fserr.Error {
	if e := s.checkLeaf(rt, rel, isDir, acc, given); e != nil {
		return e
	}
	if rt.special && specialFS(rt.abs(rel)) {
		return fserr.Deny(fserr.RuleSpecialFS, given, "%s leads into /proc, /sys or /dev, which are never readable", given)
	}
	return nil
}

func (s *Sandbox) check(rt *root, rel string, isDir bool, acc Access, given string, ancestors bool) *fserr.Error {
	if s.within != nil && !underAny(rt.abs(rel), s.within) {
		return fserr.Deny(fserr.RuleRoot, given, "%s is outside the roots this client announced", given)
	}
	if rt.state.static != nil {
		if e := stateByPath(rt, rel, given); e != nil {
			return e
		}
	}
	if !s.hasPatterns && (acc == AccessRead || len(s.writeDeny) == 0) {
		return nil
	}
	// Allow rules apply relative to the most specific root holding the
	// path: the shortest of its forms (allowForm, inline). A served
	// directory's own form is none of them (nestRoots).
	canon := rel
	if rt.served {
		canon = ""
	} else if e := s.checkDeny(rt.name, rel, acc, given, ancestors); e != nil {
		return e
	}
	for _, n := range rt.nests {
		alt, ok := n.alias(rel)
		if !ok {
			continue
		}
		if e := s.checkDeny(n.name, alt, acc, given, ancestors); e != nil {
			return e
		}
		if canon == "" || len(alt) < len(canon) {
			canon = alt // below a root nested in rt: that root is the more specific
		}
	}
	return s.checkAllow(canon, isDir, given)
}

// checkDeny applies the deny globs and regexes (and write_deny for
// writes) to one root-relative form of a path; with ancestors, the regexes
// with an end assertion are tried on each parent directory too. name,
// when not nil, is the root's name, which the **/ globs see too.
func (s *Sandbox) checkDeny(name *nameRules, rel string, acc Access, given string, ancestors bool) *fserr.Error {
	if rel == "." {
		if name != nil {
			return s.denyNamed(name, name.lower, acc, given)
		}
		return nil
	}
	lower := strings.ToLower(rel)
	if e := s.denyGlobs(lower, acc, given); e != nil {
		return e
	}
	for i, re := range s.denyRe {
		if re.MatchString(rel) {
			return denyRegex(re, given, rel)
		}
		if !ancestors || !s.denyReEnd[i] {
			continue
		}
		for end := strings.LastIndexByte(rel, '/'); end > 0; end = strings.LastIndexByte(rel[:end], '/') {
			if re.MatchString(rel[:end]) {
				return denyRegex(re, given, rel[:end])
			}
		}
	}
	if name != nil {
		return s.denyNamed(name, name.lower+"/"+lower, acc, given)
	}
	return nil
}

// denyGlobs matches a lower-cased path against the deny globs and, for
// writes, the write_deny globs, each as "the path or an ancestor".
func (s *Sandbox) denyGlobs(lower string, acc Access, given string) *fserr.Error {
	// denyHit and writeDenyHit, inline: this loop runs for every path.
	for i := range s.deny {
		if from := s.denyFrom[i]; from != nil {
			if from.match(s.denyMatch[i], lower) {
				return s.denyErr(i, given)
			}
			continue
		}
		if s.denyMatch[i].match(lower) {
			return s.denyErr(i, given)
		}
	}
	if acc == AccessWrite {
		for i := range s.writeDeny {
			if from := s.writeDenyFrom[i]; from != nil {
				if from.match(s.writeDenyMatch[i], lower) {
					return s.writeDenyErr(i, given)
				}
				continue
			}
			if s.writeDenyMatch[i].match(lower) {
				return s.writeDenyErr(i, given)
			}
		}
	}
	return nil
}

// denyHit reports whether deny glob i matches lower or an ancestor of it
// (a rule set's exceptions aside).
func (s *Sandbox) denyHit(i int, lower string) bool {
	if from := s.denyFrom[i]; from != nil {
		return from.match(s.denyMatch[i], lower)
	}
	return s.denyMatch[i].match(lower)
}

func (s *Sandbox) denyErr(i int, given string) *fserr.Error {
	g := s.deny[i]
	if from := s.denyFrom[i]; from != nil {
		return from.deny(fserr.RuleDeny, given, "%s matches the deny pattern %q of the built-in rule set %s", given, g, from.set)
	}
	return fserr.Deny(fserr.RuleDeny, given, "%s matches the deny pattern %q", given, g)
}

// writeDenyHit is denyHit for write_deny glob i.
func (s *Sandbox) writeDenyHit(i int, lower string) bool {
	if from := s.writeDenyFrom[i]; from != nil {
		return from.match(s.writeDenyMatch[i], lower)
	}
	return s.writeDenyMatch[i].match(lower)
}

func (s *Sandbox) writeDenyErr(i int, given string) *fserr.Error {
	g := s.writeDeny[i]
	if from := s.writeDenyFrom[i]; from != nil {
		return from.deny(fserr.RuleWriteDeny, given, "%s matches the write_deny pattern %q of the built-in rule set %s: readable, never written", given, g, from.set)
	}
	return fserr.Deny(fserr.RuleWriteDeny, given, "%s matches the write_deny pattern %q: readable, never written", given, g)
}

// setRule is a glob of a named rule set (policy.RuleSets) as the
// sandbox matches it: like a [paths] glob, and where it has exceptions
// (unless, lower-cased globs on the matched component's name), on the
// path and each ancestor in turn, so an excepted name is excepted only
// where it is the component the glob matched.
type setRule struct {
	set    string
	unless []string
}

func newSetRule(set string, r policy.SetRule) *setRule {
	sr := &setRule{set: set}
	for _, u := range r.Unless {
		sr.unless = append(sr.unless, strings.ToLower(u))
	}
	return sr
}

// match reports whether glob m matches lower or an ancestor of it, the
// exceptions aside. When m matches neither lower nor any ancestor, no
// ancestor needs trying one by one.
func (r *setRule) match(m *globMatcher, lower string) bool {
	if !m.match(lower) {
		return false
	}
	if len(r.unless) == 0 {
		return true
	}
	for p := lower; ; {
		if ok, _ := doublestar.Match(m.glob, p); ok && !r.excepted(path.Base(p)) {
			return true
		}
		end := strings.LastIndexByte(p, '/')
		if end <= 0 {
			return false
		}
		p = p[:end]
	}
}

func (r *setRule) excepted(name string) bool {
	for _, u := range r.unless {
		if ok, _ := path.Match(u, name); ok {
			return true
		}
	}
	return false
}

// deny is a denial by the rule set: the rule code stays that of the
// list (deny, write_deny); Set names the set (explain reports it).
func (r *setRule) deny(rule fserr.Rule, given, format string, args ...any) *fserr.Error {
	e := fserr.Deny(rule, given, format, args...)
	e.Set = r.set
	return e
}

// globOrBelow reports whether glob g matches p or an ancestor of p: g
// itself, or its tree form (g/**) for what lies below a match.
func globOrBelow(g, tree, p string) bool {
	if ok, _ := doublestar.Match(g, p); ok {
		return true
	}
	ok, _ := doublestar.Match(tree, p)
	return ok
}

func denyRegex(re *regexp.Regexp, given, matched string) *fserr.Error {
	under := ""
	if matched != given && !strings.HasSuffix(given, matched) {
		under = " (through " + matched + ")"
	}
	return fserr.Deny(fserr.RuleDeny, given, "%s matches the deny_regex %q%s", given, strings.TrimPrefix(re.String(), "(?i)"), under)
}

// treeGlob turns a glob into one that matches a path below a match of
// the glob: g/**. A glob already ending in /** means that on its own.
// (doublestar's g/** also matches most, but not all, paths g matches, so
// g itself is tried first: see globOrBelow.)
func treeGlob(g string) string {
	if g == "**" || strings.HasSuffix(g, "/**") {
		return g
	}
	return g + "/**"
}

// hasEndAssertion reports whether a regex holds $, \z or a word boundary:
// such a regex can match an ancestor of a path without matching the path
// itself, so it must be tried on each ancestor.
func hasEndAssertion(expr string) bool {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return true
	}
	var walk func(*syntax.Regexp) bool
	walk = func(r *syntax.Regexp) bool {
		switch r.Op {
		case syntax.OpEndLine, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
			return true
		}
		for _, sub := range r.Sub {
			if walk(sub) {
				return true
			}
		}
		return false
	}
	return walk(re)
}

// allowAt is checkAllow for rel relative to rt, in the form allow rules
// see it (allowForm): every check of allow outside check goes through it.
func (s *Sandbox) allowAt(rt *root, rel string, isDir bool, given string) *fserr.Error {
	if isDir || (len(s.allow) == 0 && len(s.allowRe) == 0) {
		return nil
	}
	return s.checkAllow(rt.allowForm(rel), isDir, given)
}

// allowForm is rel, relative to rt, relative to the most specific root
// holding it: rt, or a root nested in it; for a served directory, the
// most specific of the policy's roots holding it (its own form anchors
// nothing).
func (rt *root) allowForm(rel string) string {
	canon := rel
	if rt.served {
		canon = ""
	}
	for _, n := range rt.nests {
		if alt, ok := n.alias(rel); ok && (canon == "" || len(alt) < len(canon)) {
			canon = alt
		}
	}
	return canon
}

// checkAllow refuses a non-directory that matches no allow rule when the
// policy has any; rel is in the form allow rules see (allowForm).
func (s *Sandbox) checkAllow(rel string, isDir bool, given string) *fserr.Error {
	if isDir || (len(s.allow) == 0 && len(s.allowRe) == 0) {
		return nil
	}
	for _, g := range s.allow {
		if ok, _ := doublestar.Match(g, rel); ok {
			return nil
		}
	}
	for _, re := range s.allowRe {
		if re.MatchString(rel) {
			return nil
		}
	}
	return fserr.Deny(fserr.RuleAllow, given, "%s matches no allow pattern", given)
}

// checkWrite applies the rules only writes have: the path lies in a
// writable root, and it neither is, holds nor lies in one of fsbox's own
// files (the policy file, its executables and the companion's name, the
// journal, the audit log) nor lies in one, compared by canonical path.
func (s *Sandbox) checkWrite(rt *root, rel, given string) *fserr.Error {
	if !rt.writable {
		if _, writeRoots, _ := s.rootLists(); len(writeRoots) == 0 {
			return fserr.Deny(fserr.RuleReadOnly, given, "%s is outside the workdir %s, the only writable directory", given, s.work.dir)
		}
		return fserr.Deny(fserr.RuleReadOnly, given, "%s is outside every writable root (%s)", given, strings.Join(s.WritableRoots(), ", "))
	}
	return s.checkOwn(rt, rel, given, false)
}

// checkOwn refuses a change to one of fsbox's own files, or to a place
// inside one; with holds (an entry moved or removed: mv's source, rm),
// also to a directory that holds one, so renaming an ancestor cannot
// carry an own file away.
func (s *Sandbox) checkOwn(rt *root, rel, given string, holds bool) *fserr.Error {
	own, what := s.ownFile(rt.abs(rel), holds)
	switch {
	case own == "":
		return nil
	case what == "the active policy file":
		return fserr.Deny(fserr.RuleConfigFile, given, "%s is or holds the active policy file", given)
	}
	return fserr.Deny(fserr.RuleOwnFile, given, "%s is, holds or lies in %s (%s): fsbox never changes its own files", given, what, own)
}

// alias returns rel (relative to the root holding this nest) relative to
// the nested root, or false when rel does not lie below both.
func (n nest) alias(rel string) (string, bool) {
	if !n.inner {
		switch {
		case n.prefix == ".":
			return rel, true
		case rel == ".":
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
func underAny(abs string, dirs []string) bool { return policy.UnderAny(abs, dirs) }

// specialFS reports whether an absolute path lies in /proc, /sys or /dev.
func specialFS(abs string) bool { return policy.SpecialFS(abs) }
