// Package sandbox is the only part of fsbox that touches the filesystem.
// Every open, stat, listing and write goes through a *Sandbox, which holds
// one os.Root per configured root and applies the policy to the path each
// descriptor really refers to.
package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/bmatcuk/doublestar/v4"
)

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

// Sandbox applies one policy to every filesystem access.
type Sandbox struct {
	policy    *Policy
	work      *root
	roots     []*root // workdir first, then read roots, most specific first
	deny      []string
	allow     []string
	writeDeny []string
	// denyTree and writeDenyTree are deny and write_deny as "the path or
	// an ancestor matches": each glob with "/**" appended (one match per
	// path instead of one per ancestor).
	denyTree      []string
	writeDenyTree []string
	// denyReEnd marks the deny regexes with an end assertion ($, \z,
	// \b): only those must be tried on every ancestor; for the others a
	// match in an ancestor is a match in the whole path.
	denyReEnd []bool
	denyRe    []*regexp.Regexp
	allowRe   []*regexp.Regexp
	home      string
	// hasPatterns: any deny, allow or regex rule (write_deny aside)
	hasPatterns bool
	landlock    LandlockStatus
	trail       trail
	writes      *sync.Mutex // held with the roots' flocks by change; shared by ForCall views
	stdin       io.Reader   // the call's standard input (SetStdin), or nil
	stdinUsed   atomic.Bool
	view        bool                   // made by ForCall: Close leaves the roots open
	jn          *journalState          // the workdir's journal, shared by views
	cmd         atomic.Pointer[string] // the operation this sandbox runs for (SetCommand)
	quiet       bool                   // Quiet: the journal records nothing this view changes
	// progress, when set (SetProgress), hears a walk's running count of
	// entries.
	progress func(entries int64)
	// within, when not nil, is the only part of the roots this view
	// reaches (Narrow): canonical directories, each inside a root.
	within []string
	// own are fsbox's own files (canonical paths): the policy file,
	// the executables the command layer names (Protect), the journal and
	// the audit log. None of them, and no ancestor of one, is ever
	// written, renamed or removed.
	own *ownFiles
}

// ownFiles is the set of fsbox's own files, shared by a sandbox's views.
type ownFiles struct {
	mu    sync.RWMutex
	paths []ownFile
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
		if p == "" {
			continue
		}
		s.own.paths = append(s.own.paths, ownFile{canonical(p), what})
	}
}

// ownFile names the own file that abs is, holds or lies in ("" when none).
func (s *Sandbox) ownFile(abs string) (string, string) {
	s.own.mu.RLock()
	defer s.own.mu.RUnlock()
	for _, o := range s.own.paths {
		if within(o.path, abs) || within(abs, o.path) {
			return o.path, o.what
		}
	}
	return "", ""
}

// WritableRoots returns the canonical writable roots: the workdir, then
// write_roots in configuration order.
func (s *Sandbox) WritableRoots() []string {
	out := []string{s.work.dir}
	for _, d := range s.policy.WriteRoots {
		for _, r := range s.roots {
			if r.alias == filepath.Clean(d) && r.writable {
				out = append(out, r.dir)
				break
			}
		}
	}
	return out
}

// Landlock reports whether Restrict raised the kernel wall.
func (s *Sandbox) Landlock() LandlockStatus {
	if s.landlock.Mode == "" {
		return LandlockStatus{Mode: s.policy.Sandbox.Landlock, Reason: "not applied in this process"}
	}
	return s.landlock
}

// New opens the policy's roots. The policy must come from Load or
// DefaultPolicy. Errors are CodeConfig.
func New(p *Policy, home string) (*Sandbox, error) {
	if err := p.validate(); err != nil {
		return nil, Errorf(CodeConfig, p.Source, "%v", err)
	}
	s := &Sandbox{policy: p, home: home, allow: p.Paths.Allow, writes: new(sync.Mutex), own: &ownFiles{}}
	open := func(dir string, writable bool) (*root, error) {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return nil, Errorf(CodeConfig, dir, "root %s does not exist or cannot be resolved: %v", dir, unwrapPathErr(err))
		}
		fi, err := os.Stat(real)
		if err != nil || !fi.IsDir() {
			return nil, Errorf(CodeConfig, dir, "root %s is not a directory", dir)
		}
		r, err := os.OpenRoot(real)
		if err != nil {
			return nil, Errorf(CodeConfig, dir, "cannot open root %s: %v", dir, unwrapPathErr(err))
		}
		return &root{dir: real, alias: filepath.Clean(dir), r: r, writable: writable,
			special: real == "/" || specialFS(real)}, nil
	}
	var err error
	if s.work, err = open(p.Workdir, true); err != nil {
		return nil, err
	}
	s.work.work = true
	s.roots = []*root{s.work}
	for _, d := range p.WriteRoots {
		r, err := open(d, true)
		if err != nil {
			return nil, err
		}
		for _, o := range s.roots {
			if within(r.dir, o.dir) || within(o.dir, r.dir) {
				return nil, Errorf(CodeConfig, d, "write_roots: %s overlaps the writable root %s: writable roots must be disjoint", d, o.dir)
			}
		}
		s.roots = append(s.roots, r)
	}
	for _, r := range s.roots {
		if p.Source != "" && (within(p.Source, r.dir) || within(p.Link, r.dir)) {
			what := "write root"
			if r.work {
				what = "workdir"
			}
			return nil, Errorf(CodeConfig, p.Source, "the policy file %s lies inside its own %s %s, where the sandboxed side could rewrite it", p.Source, what, r.dir)
		}
	}
	for _, d := range p.ReadRoots {
		r, err := open(d, false)
		if err != nil {
			return nil, err
		}
		s.roots = append(s.roots, r)
	}
	// Most specific root first; the workdir wins a tie so writes can happen.
	sort.SliceStable(s.roots, func(i, j int) bool {
		a, b := s.roots[i], s.roots[j]
		if len(a.dir) != len(b.dir) {
			return len(a.dir) > len(b.dir)
		}
		return a.writable && !b.writable
	})
	for _, a := range s.roots {
		for _, b := range s.roots {
			if a == b {
				continue
			}
			if rel, ok := a.relOf(b.dir); ok && rel != "." {
				a.nests = append(a.nests, nest{prefix: rel, inner: true})
				b.nests = append(b.nests, nest{prefix: rel, inner: false})
			}
		}
	}
	// Paths are matched relative to their root, so a leading "/" or "./"
	// (written to anchor a pattern at the root) is dropped rather than
	// leaving a rule that silently never matches.
	anchor := normalizeGlob
	for _, g := range p.Paths.Deny {
		s.deny = append(s.deny, strings.ToLower(anchor(g)))
	}
	for _, g := range p.Paths.WriteDeny {
		s.writeDeny = append(s.writeDeny, strings.ToLower(anchor(g)))
	}
	s.allow = nil
	for _, g := range p.Paths.Allow {
		if strings.HasSuffix(g, "/") { // "docs/": the files below docs (allow rules are on files)
			g += "**"
		}
		s.allow = append(s.allow, anchor(g))
	}
	for _, r := range p.Paths.DenyRegex {
		s.denyRe = append(s.denyRe, regexp.MustCompile("(?i)"+r))
		s.denyReEnd = append(s.denyReEnd, hasEndAssertion(r))
	}
	for _, g := range s.deny {
		s.denyTree = append(s.denyTree, treeGlob(g))
	}
	for _, g := range s.writeDeny {
		s.writeDenyTree = append(s.writeDenyTree, treeGlob(g))
	}
	for _, r := range p.Paths.AllowRegex {
		s.allowRe = append(s.allowRe, regexp.MustCompile(r))
	}
	s.hasPatterns = len(s.deny)+len(s.allow)+len(s.denyRe)+len(s.allowRe) > 0
	s.jn = &journalState{}
	if err := s.findJournal(); err != nil {
		s.Close()
		return nil, err
	}
	if p.Source != "" {
		s.Protect("the active policy file", p.Source, p.Link)
	}
	if s.jn.dir != "" {
		s.Protect("fsbox's journal", s.jn.dir)
	}
	if p.Audit.Log != "" {
		s.Protect("fsbox's audit log", p.Audit.Log)
	}
	return s, nil
}

// Close releases the roots.
func (s *Sandbox) Close() error {
	if s.view {
		return nil
	}
	if j := s.jn.open; j != nil {
		j.r.Close()
	}
	for _, r := range s.roots {
		r.closeLock()
		r.r.Close()
	}
	return nil
}

// ForCall returns a view of s for one call of a long-lived host (the MCP
// server): the same roots, rules, Landlock status and write lock, with
// its own audit trail (Usage counts this call only) and no standard
// input. Closing a view is a no-op: the roots belong to s.
func (s *Sandbox) ForCall() *Sandbox {
	v := &Sandbox{
		policy: s.policy, work: s.work, roots: s.roots, deny: s.deny, allow: s.allow, writeDeny: s.writeDeny,
		denyTree: s.denyTree, writeDenyTree: s.writeDenyTree, denyReEnd: s.denyReEnd, denyRe: s.denyRe, allowRe: s.allowRe,
		home: s.home, hasPatterns: s.hasPatterns, landlock: s.landlock, writes: s.writes, view: true, within: s.within,
		jn: s.jn, own: s.own,
	}
	return v
}

// SetProgress asks for fn to be called as walks go: with the count of
// entries delivered so far, every ProgressEvery entries. For a per-call
// view (ForCall) of a long-lived host; fn must not block for long.
func (s *Sandbox) SetProgress(fn func(entries int64)) { s.progress = fn }

// ProgressEvery is how many walk entries pass between progress calls.
const ProgressEvery = 512

// Narrow returns a view of s (as ForCall) that reaches only the given
// directories and what lies below them: the roots an MCP client
// announces narrow the policy's, never widen them. Each directory is
// resolved to its real path; one that lies inside no root (or does not
// exist) is left out and returned in ignored. When none is left, the
// view is s's own: an announcement fsbox cannot honour does not take
// the policy's roots away.
func (s *Sandbox) Narrow(dirs []string) (v *Sandbox, kept, ignored []string) {
	v = s.ForCall()
	for _, d := range dirs {
		real, err := filepath.EvalSymlinks(d)
		if err == nil && filepath.IsAbs(real) && s.insideRoot(real) {
			kept = append(kept, filepath.Clean(real))
		} else {
			ignored = append(ignored, d)
		}
	}
	switch {
	case len(kept) == 0:
	case s.within == nil:
		v.within = kept
	default: // narrowing a narrowed view: only what lies in both
		var both []string
		for _, k := range kept {
			if underAny(k, s.within) {
				both = append(both, k)
			}
		}
		if len(both) > 0 {
			v.within = both
		}
	}
	return v, kept, ignored
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

// Policy returns the policy the sandbox enforces.
func (s *Sandbox) Policy() *Policy { return s.policy }

// Workdir returns the canonical workdir.
func (s *Sandbox) Workdir() string { return s.work.dir }

// ReadRoots returns the canonical read roots, in configuration order.
func (s *Sandbox) ReadRoots() []string {
	out := []string{}
	for _, d := range s.policy.ReadRoots {
		for _, r := range s.roots {
			if r.alias == filepath.Clean(d) && !r.writable {
				out = append(out, r.dir)
				break
			}
		}
	}
	return out
}

// Limits returns the policy's limits.
func (s *Sandbox) Limits() Limits { return s.policy.Limits }

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

// checkPatterns applies deny, allow and (for writes) write_deny to a real
// path relative to root rt. A path is denied when it or any of its parent
// directories matches a deny glob or deny regex (a rule that matches a
// directory protects everything beneath it), relative to rt or to any
// root overlapping rt (see nest). Allow rules apply to everything but
// directories, which stay traversable, relative to the most specific
// root. The cost is one match per rule, not one per ancestor (see
// treeGlob, hasEndAssertion).
func (s *Sandbox) checkPatterns(rt *root, rel string, isDir bool, acc Access, given string) *Error {
	return s.check(rt, rel, isDir, acc, given, true)
}

// checkLeaf is checkPatterns for a path whose parent directory has already
// passed checkPatterns (a walk's entries, a tree's members): no regex is
// tried on the ancestors again.
func (s *Sandbox) checkLeaf(rt *root, rel string, isDir bool, acc Access, given string) *Error {
	return s.check(rt, rel, isDir, acc, given, false)
}

func (s *Sandbox) check(rt *root, rel string, isDir bool, acc Access, given string, ancestors bool) *Error {
	if s.within != nil && !underAny(rt.abs(rel), s.within) {
		return deny(RuleRoot, given, "%s is outside the roots this client announced", given)
	}
	if !s.hasPatterns && (acc == AccessRead || len(s.writeDeny) == 0) {
		return nil
	}
	if e := s.checkDeny(rel, acc, given, ancestors); e != nil {
		return e
	}
	canon := rel
	for _, n := range rt.nests {
		alt, ok := n.alias(rel)
		if !ok {
			continue
		}
		if e := s.checkDeny(alt, acc, given, ancestors); e != nil {
			return e
		}
		if n.inner && len(alt) < len(canon) {
			canon = alt // below a root nested in rt: that root is the more specific
		}
	}
	return s.checkAllow(canon, isDir, given)
}

// checkDeny applies the deny globs and regexes (and write_deny for
// writes) to one root-relative form of a path; with ancestors, the regexes
// with an end assertion are tried on each parent directory too.
func (s *Sandbox) checkDeny(rel string, acc Access, given string, ancestors bool) *Error {
	if rel == "." {
		return nil
	}
	if e := s.denyGlobs(strings.ToLower(rel), acc, given); e != nil {
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
	return nil
}

// denyGlobs matches a lower-cased path against the deny globs and, for
// writes, the write_deny globs, each as "the path or an ancestor".
func (s *Sandbox) denyGlobs(lower string, acc Access, given string) *Error {
	for i, g := range s.deny {
		if globOrBelow(g, s.denyTree[i], lower) {
			return deny(RuleDeny, given, "%s matches the deny pattern %q", given, g)
		}
	}
	if acc == AccessWrite {
		for i, g := range s.writeDeny {
			if globOrBelow(g, s.writeDenyTree[i], lower) {
				return deny(RuleWriteDeny, given, "%s matches the write_deny pattern %q: readable, never written", given, g)
			}
		}
	}
	return nil
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

func denyRegex(re *regexp.Regexp, given, matched string) *Error {
	under := ""
	if matched != given && !strings.HasSuffix(given, matched) {
		under = " (through " + matched + ")"
	}
	return deny(RuleDeny, given, "%s matches the deny_regex %q%s", given, strings.TrimPrefix(re.String(), "(?i)"), under)
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

// checkAllow refuses a non-directory that matches no allow rule when the
// policy has any.
func (s *Sandbox) checkAllow(rel string, isDir bool, given string) *Error {
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
	return deny(RuleAllow, given, "%s matches no allow pattern", given)
}

// checkWrite applies the rules only writes have: the path lies in a
// writable root, and it neither is, holds nor lies in one of fsbox's own
// files (the policy file, its executables and the companion's name, the
// journal, the audit log), compared by canonical path.
func (s *Sandbox) checkWrite(rt *root, rel, given string) *Error {
	if !rt.writable {
		if len(s.policy.WriteRoots) == 0 {
			return deny(RuleReadOnly, given, "%s is outside the workdir %s, the only writable directory", given, s.work.dir)
		}
		return deny(RuleReadOnly, given, "%s is outside every writable root (%s)", given, strings.Join(s.WritableRoots(), ", "))
	}
	if own, what := s.ownFile(rt.abs(rel)); own != "" {
		if what == "the active policy file" {
			return deny(RuleConfigFile, given, "%s is or holds the active policy file", given)
		}
		return deny(RuleOwnFile, given, "%s is, holds or lies in %s (%s): fsbox never changes its own files", given, what, own)
	}
	return nil
}

// mapOpenErr turns an error from os.Root into an *Error.
func mapOpenErr(err error, given string) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	msg := unwrapPathErr(err).Error()
	switch {
	case strings.Contains(msg, "path escapes from parent"):
		return deny(RuleSymlink, given, "%s leads out of its root (through '..' or a symlink)", given)
	case errors.Is(err, syscall.ELOOP):
		return deny(RuleSymlink, given, "%s: too many levels of symbolic links", given)
	case errors.Is(err, fs.ErrNotExist):
		return Errorf(CodeNotFound, given, "%s does not exist", given)
	case errors.Is(err, syscall.ENOTDIR), msg == "not a directory": // os.Root.OpenRoot on a file says so without ENOTDIR
		return Errorf(CodeNotFound, given, "%s does not exist (a parent is not a directory)", given)
	case errors.Is(err, syscall.ENAMETOOLONG):
		return Errorf(CodeUsage, given, "%s: path too long", given)
	}
	return &Error{Code: CodeIO, Path: given, Msg: fmt.Sprintf("%s: %s", given, msg), Err: err}
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
