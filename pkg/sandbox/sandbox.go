// Package sandbox is the only part of fsbox that touches the filesystem.
// Every open, stat, listing and write goes through a *Sandbox, which holds
// one root per configured root — a directory opened as an os.Root, or an
// object store — and applies the policy to what each handle the root
// pinned really is and where it really lies (root.go).
package sandbox

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// Sandbox applies one policy to every filesystem access.
type Sandbox struct {
	policy    *policy.Policy
	work      *root
	roots     []*root // workdir first, then read roots, most specific first
	deny      []string
	allow     []string
	writeDeny []string
	// denyMatch and writeDenyMatch are deny and write_deny compiled as
	// "the path or an ancestor matches" (globMatcher: the glob or its
	// tree form, one match per path instead of one per ancestor).
	denyMatch      []*globMatcher
	writeDenyMatch []*globMatcher
	// denyFrom and writeDenyFrom say, for each deny and write_deny glob,
	// where it comes from: its named rule set, or nil for [paths]; a
	// rule set's glob may carry exceptions on the matched name
	// (policy.SetRule.Unless).
	denyFrom      []*setRule
	writeDenyFrom []*setRule
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
	writes      chan struct{}                   // one token: held with the roots' flocks by change; shared by ForCall views
	ctx         atomic.Pointer[context.Context] // the call's (SetContext): lock waits end with it; a change checks it before it commits
	stdin       io.Reader                       // the call's standard input (SetStdin), or nil
	stdinUsed   atomic.Bool
	view        bool                   // made by ForCall: Close leaves the roots open
	jn          *journalState          // the workdir's journal, shared by views
	objs        map[string]ObjectStore // the stores given for roots (tests), by name
	cmd         atomic.Pointer[string] // the operation this sandbox runs for (SetCommand)
	// progress, when set (SetProgress), hears a walk's running count of
	// entries.
	progress func(entries int64)
	// anchors are the policy's own roots (canonical) when the roots
	// opened are the directories fsbox mcp DIR... serves (nestRoots);
	// nil otherwise.
	anchors []string
	// within, when not nil, is the only part of the roots this view
	// reaches (Narrow): canonical directories, each inside a root.
	within []string
	// own are fsbox's own files (canonical paths): the policy file,
	// the executables the command layer names (Protect), the journal and
	// the audit log. None of them, and no ancestor of one, is ever
	// written, renamed or removed.
	own *ownFiles
	// state are fsbox's state directories, never read (ownstate.go).
	state *stateDirs
}

// rootLists are the roots the sandbox opens, as configured: the policy's,
// or under fsbox mcp DIR... the directories served (Policy.Serve).
func (s *Sandbox) rootLists() (workdir string, writeRoots, readRoots []string) {
	if b := s.policy.Serve; b != nil {
		return b.Workdir, b.WriteRoots, b.ReadRoots
	}
	return s.policy.Workdir, s.policy.WriteRoots, s.policy.ReadRoots
}

// WritableRoots returns the canonical writable roots in force: the
// workdir, then write_roots in configuration order (under fsbox mcp
// DIR..., the directories served writable: the bound in force).
func (s *Sandbox) WritableRoots() []string {
	out := []string{s.work.dir}
	_, writeRoots, _ := s.rootLists()
	for _, d := range writeRoots {
		for _, r := range s.roots {
			if r.alias == cleanRoot(d) && r.writable {
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
func New(p *policy.Policy, home string) (*Sandbox, error) { return newSandboxOver(p, home, nil) }

// newSandboxOver is New with some of the policy's roots made of object
// stores: a root whose path (as configured, cleaned) is a key of objs is
// an object root over that store (root_object.go), named by that path;
// the others are directories.
func newSandboxOver(p *policy.Policy, home string, objs map[string]ObjectStore) (*Sandbox, error) {
	if err := p.Validate(); err != nil {
		return nil, fserr.Errorf(fserr.CodeConfig, p.Source, "%v", err)
	}
	s := &Sandbox{policy: p, home: home, allow: p.Paths.Allow, writes: make(chan struct{}, 1), own: &ownFiles{}, objs: objs}
	open := func(dir string, writable bool) (*root, error) { return openRootAt(dir, writable, objs, p.Store) }
	// Under fsbox mcp DIR... (Policy.Serve) the sandbox opens the
	// directories served, and nothing else of the policy's roots: they
	// bound what is reached (and Landlock walls them in), while every
	// rule stays anchored at the policy's roots (nestRoots).
	workdir, writeRoots, readRoots := s.rootLists()
	var err error
	if s.work, err = open(workdir, true); err != nil {
		return nil, err
	}
	s.work.work = true
	s.roots = []*root{s.work}
	for _, d := range writeRoots {
		r, err := open(d, true)
		if err != nil {
			return nil, err
		}
		for _, o := range s.roots {
			if policy.Within(r.dir, o.dir) || policy.Within(o.dir, r.dir) {
				return nil, fserr.Errorf(fserr.CodeConfig, d, "write_roots: %s overlaps the writable root %s: writable roots must be disjoint", d, o.dir)
			}
		}
		s.roots = append(s.roots, r)
	}
	if err := policyFileOutside(p); err != nil {
		return nil, err
	}
	for _, d := range readRoots {
		r, err := open(d, false)
		if err != nil {
			return nil, err
		}
		s.roots = append(s.roots, r)
	}
	if err := checkRootIdentities(posixRoots(s.roots)); err != nil {
		for _, r := range s.roots {
			r.st.close()
		}
		return nil, err
	}
	// Most specific root first; the workdir wins a tie so writes can happen.
	sort.SliceStable(s.roots, func(i, j int) bool {
		a, b := s.roots[i], s.roots[j]
		if len(a.dir) != len(b.dir) {
			return len(a.dir) > len(b.dir)
		}
		return a.writable && !b.writable
	})
	// Paths are matched relative to their root, so a leading "/" or "./"
	// (written to anchor a pattern at the root) is dropped rather than
	// leaving a rule that silently never matches.
	anchor := policy.NormalizeGlob
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
	// The named rule sets in force go into the same lists, matched by
	// the same code: [paths]'s rules first, so a path both deny names
	// the policy file's rule.
	s.denyFrom = make([]*setRule, len(s.deny))
	s.writeDenyFrom = make([]*setRule, len(s.writeDeny))
	for _, set := range p.RuleSets() {
		for _, r := range set.Deny {
			s.deny = append(s.deny, strings.ToLower(anchor(r.Glob)))
			s.denyFrom = append(s.denyFrom, newSetRule(set.Name, r))
		}
		for _, r := range set.WriteDeny {
			s.writeDeny = append(s.writeDeny, strings.ToLower(anchor(r.Glob)))
			s.writeDenyFrom = append(s.writeDenyFrom, newSetRule(set.Name, r))
		}
	}
	for _, r := range p.Paths.DenyRegex {
		s.denyRe = append(s.denyRe, regexp.MustCompile("(?i)"+r))
		s.denyReEnd = append(s.denyReEnd, hasEndAssertion(r))
	}
	for _, g := range s.deny {
		s.denyMatch = append(s.denyMatch, newGlobMatcher(g))
	}
	for _, g := range s.writeDeny {
		s.writeDenyMatch = append(s.writeDenyMatch, newGlobMatcher(g))
	}
	for _, r := range p.Paths.AllowRegex {
		s.allowRe = append(s.allowRe, regexp.MustCompile(r))
	}
	s.hasPatterns = len(s.deny)+len(s.allow)+len(s.denyRe)+len(s.allowRe) > 0
	s.jn = &journalState{}
	if err := s.nestRoots(p); err != nil {
		s.Close()
		return nil, err
	}
	s.findState()
	if err := s.findJournal(); err != nil {
		s.Close()
		return nil, err
	}
	if p.Source != "" {
		s.Protect("the active policy file", p.Source, p.Link)
	}
	if s.jn.base != "" {
		s.Protect("fsbox's journal", s.jn.base)
	}
	if p.Audit.Log != "" {
		s.Protect("fsbox's audit log", p.Audit.Log)
	}
	return s, nil
}

// openRootAt opens the root configured as dir: an object root over
// objs[dir] when there is one, else the directory.
func openRootAt(dir string, writable bool, objs map[string]ObjectStore, cfg policy.Store) (*root, error) {
	if policy.IsObjectURL(dir) {
		obj := objs[dir]
		if obj == nil {
			var err error
			if obj, err = openObjectStore(cfg, dir); err != nil {
				return nil, err
			}
		}
		st := newObjectRoot(dir, counted(obj))
		return &root{dir: dir, alias: dir, url: true, st: st, writable: writable}, nil
	}
	if obj := objs[filepath.Clean(dir)]; obj != nil {
		name := filepath.Clean(dir)
		return &root{dir: name, alias: name, st: newObjectRoot(name, obj), writable: writable}, nil
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fserr.Errorf(fserr.CodeConfig, dir, "root %s does not exist or cannot be resolved: %v", dir, unwrapPathErr(err))
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.IsDir() {
		return nil, fserr.Errorf(fserr.CodeConfig, dir, "root %s is not a directory", dir)
	}
	st, err := openPosixStore(real)
	if err != nil {
		return nil, fserr.Errorf(fserr.CodeConfig, dir, "cannot open root %s: %v", dir, unwrapPathErr(err))
	}
	return &root{dir: real, alias: filepath.Clean(dir), st: st, r: st.r, writable: writable,
		special: real == "/" || specialFS(real)}, nil
}

// posixRoots are the roots on a file system among rts.
func posixRoots(rts []*root) []*root {
	var out []*root
	for _, rt := range rts {
		if rt.st.kind() == kindPosix {
			out = append(out, rt)
		}
	}
	return out
}

// Close releases the roots.
func (s *Sandbox) Close() error {
	if s.view {
		return nil
	}
	s.closeJournals()
	for _, r := range s.roots {
		r.closeLock()
		r.state.close()
		r.st.close()
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
		denyMatch: s.denyMatch, writeDenyMatch: s.writeDenyMatch, denyFrom: s.denyFrom, writeDenyFrom: s.writeDenyFrom, denyReEnd: s.denyReEnd, denyRe: s.denyRe, allowRe: s.allowRe,
		home: s.home, hasPatterns: s.hasPatterns, landlock: s.landlock, writes: s.writes, view: true, within: s.within, anchors: s.anchors,
		jn: s.jn, own: s.own, state: s.state, objs: s.objs,
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

// Policy returns the policy the sandbox enforces.
func (s *Sandbox) Policy() *policy.Policy { return s.policy }

// Workdir returns the canonical workdir in force (under fsbox mcp DIR...,
// the first directory served).
func (s *Sandbox) Workdir() string { return s.work.dir }

// ReadRoots returns the canonical read roots in force, in configuration
// order (under fsbox mcp DIR..., the directories served read-only).
func (s *Sandbox) ReadRoots() []string {
	out := []string{}
	_, _, readRoots := s.rootLists()
	for _, d := range readRoots {
		for _, r := range s.roots {
			if r.alias == cleanRoot(d) && !r.writable {
				out = append(out, r.dir)
				break
			}
		}
	}
	return out
}

// Limits returns the policy's limits.
func (s *Sandbox) Limits() policy.Limits { return s.policy.Limits }
