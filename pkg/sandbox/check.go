package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"syscall"

	"github.com/bmatcuk/doublestar/v4"
)

// Stage 2, check: the rules — deny, allow, write_deny, regexes on every
// ancestor, writable roots, fsbox's own files, kinds, links — and the
// mapping of an operating-system error to the caller's error.

// lexicalChecks are the checks on the spelling of a path, before any
// open: /proc, /sys and /dev, and deny patterns on the path as written.
func (s *Sandbox) lexicalChecks(t *target) error {
	clean := path.Clean(t.rel)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return deny(RuleRoot, t.given, "%s climbs out of its root with '..'", t.given)
	}
	if specialFS(t.rt.abs(clean)) {
		return deny(RuleSpecialFS, t.given, "%s is under /proc, /sys or /dev, which are never readable", t.given)
	}
	if err := s.checkPatterns(t.rt, clean, true, AccessRead, t.given); err != nil {
		return err
	}
	return nil
}

// kindCheck refuses what is neither a regular file nor (when wantDir) a
// directory.
func kindCheck(m fs.FileMode, wantDir bool, given string) error {
	switch {
	case m.IsRegular():
		if wantDir {
			return Errorf(CodeNotADir, given, "%s is not a directory", given)
		}
		return nil
	case m.IsDir():
		if !wantDir {
			return Errorf(CodeNotAFile, given, "%s is a directory, not a file", given)
		}
		return nil
	}
	return deny(RuleSpecialFile, given, "%s is a %s; FIFOs, sockets and devices are never opened", given, kindName(m))
}

// kindCheckAt is kindCheck for a path about to be opened: when the kind
// is wrong, a deny rule on where the path really leads still wins, so
// not_a_file/not_a_dir never tell what lies under a denied directory.
func (s *Sandbox) kindCheckAt(m fs.FileMode, wantDir bool, t *target) error {
	err := kindCheck(m, wantDir, t.given)
	if err != nil && AsError(err).Code != CodeDenied {
		if d := s.deniedAncestor(t.rt, path.Clean(t.rel), t.given); d != nil {
			return d
		}
	}
	return err
}

func kindName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "device"
	}
	return "special file"
}

// checkOpened applies the policy to what an open descriptor really is:
// its type, its filesystem, its real path and its link count.
func (s *Sandbox) checkOpened(f *os.File, t *target, wantDir bool, acc Access) (Info, error) {
	fi, err := f.Stat()
	if err != nil {
		return Info{}, s.mapErr(err, t)
	}
	if err := kindCheck(fi.Mode(), wantDir, t.given); err != nil {
		return Info{}, err
	}
	real, err := fdPath(f, t.rt.abs(path.Clean(t.rel)))
	if err != nil {
		return Info{}, &Error{Code: CodeIO, Path: t.given, Msg: "cannot tell where " + t.given + " leads: " + err.Error(), Err: err}
	}
	if specialFS(real) || onSpecialFS(f) {
		return Info{}, deny(RuleSpecialFS, t.given, "%s leads into /proc, /sys or /dev, which are never readable", t.given)
	}
	s.trail.note(t.given, real, true)
	rel, ok := t.rt.relOf(real)
	if !ok {
		return Info{}, deny(RuleSymlink, t.given, "%s leads out of its root", t.given)
	}
	if err := s.checkPatterns(t.rt, rel, fi.IsDir(), acc, t.given); err != nil {
		return Info{}, err
	}
	if acc == AccessWrite {
		if err := s.checkWrite(t.rt, rel, t.given); err != nil {
			return Info{}, err
		}
	}
	if !fi.IsDir() && s.policy.Paths.DenyHardlinks && nlink(fi) > 1 {
		return Info{}, deny(RuleHardlink, t.given, "%s has %d hard links and deny_hardlinks is on", t.given, nlink(fi))
	}
	return newInfo(path.Base(rel), t.display(), real, fi), nil
}

// mapErr maps an os.Root error, telling a '..' climb from a symlink escape.
// A path that does not exist is still denied when its nearest existing
// ancestor, resolved, lies under a deny rule: a missing name below a
// denied directory (reached through a symlink, say) must look exactly like
// an existing one, or not_found/denied becomes an existence oracle.
func (s *Sandbox) mapErr(err error, t *target) error {
	e := mapOpenErr(err, t.given)
	if e.Code == CodeNotFound {
		if d := s.deniedAncestor(t.rt, path.Clean(t.rel), t.given); d != nil {
			return d
		}
		e.Msg += s.whereLooked(t)
	}
	return e
}

// whereLooked says where a relative path that was not found was looked
// for when the current directory lies outside the workdir: "fsbox grep
// TODO server.go" from elsewhere looks in the workdir, not here.
func (s *Sandbox) whereLooked(t *target) string {
	if filepath.IsAbs(t.given) || strings.HasPrefix(t.given, "~") {
		return ""
	}
	cwd, err := os.Getwd()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(cwd); err != nil || within(real, s.work.dir) {
		return ""
	}
	return fmt.Sprintf(" (looked for %s: a relative path resolves against the workdir %s, and the current directory %s is not under it)",
		t.rt.abs(path.Clean(t.rel)), s.work.dir, cwd)
}

// deniedAncestor resolves the deepest existing ancestor of rel through the
// root and checks its real path plus the rest of rel against the deny
// rules; when the rest starts with a symlink (a dangling one, or one to a
// file where a directory was wanted), its target is followed the same
// way. It returns nil when nothing there is denied (or nothing resolves).
func (s *Sandbox) deniedAncestor(rt *root, rel, given string) *Error {
	return s.deniedBeyond(rt, rel, given, 0)
}

// maxLinkHops bounds the symlinks deniedAncestor follows, as the kernel's
// ELOOP limit does.
const maxLinkHops = 40

func (s *Sandbox) deniedBeyond(rt *root, rel, given string, hops int) *Error {
	if !s.hasPatterns || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil
	}
	dir, rest := path.Dir(rel), path.Base(rel)
	for {
		sub, err := openRoot(rt.r, dir)
		if err == nil {
			rrel, err := realRel(rt, sub, dir, given)
			var target string
			var lerr error
			first, more, _ := strings.Cut(rest, "/")
			if err == nil {
				target, lerr = sub.Readlink(first)
			}
			sub.Close()
			switch {
			case err != nil:
				if e := AsError(err); e.Code == CodeDenied {
					return e
				}
				return nil
			case lerr != nil || hops >= maxLinkHops:
				return s.checkPatterns(rt, path.Join(rrel, rest), true, AccessRead, given)
			case path.IsAbs(target):
				return deny(RuleSymlink, given, "%s leads through an absolute symlink", given)
			}
			return s.deniedBeyond(rt, path.Join(rrel, target, more), given, hops+1)
		}
		if dir == "." {
			return nil
		}
		dir, rest = path.Dir(dir), path.Join(path.Base(dir), rest)
	}
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

// checkFileDesc applies the descriptor checks every opened file gets, for
// reading or writing: a regular file, and one link unless the policy
// allows hard links (an inode shared with a file outside the policy).
func (s *Sandbox) checkFileDesc(fi fs.FileInfo, given string) error {
	if !fi.Mode().IsRegular() {
		return deny(RuleSpecialFile, given, "%s is not a regular file", given)
	}
	if s.policy.Paths.DenyHardlinks && nlink(fi) > 1 {
		return deny(RuleHardlink, given, "%s has %d hard links and deny_hardlinks is on", given, nlink(fi))
	}
	return nil
}

// noFollowErr maps the failure of an open that refuses symlinks.
func noFollowErr(err error, given string) error {
	if errors.Is(err, syscall.ELOOP) {
		return deny(RuleSymlink, given, "%s became a symlink during the call", given)
	}
	return mapOpenErr(err, given)
}

// mkdirAllErr maps a failed MkdirAll of a path's parents: EEXIST (or
// ENOTDIR) means one of them is there but is not a directory.
func mkdirAllErr(err error, given string) *Error {
	if errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTDIR) {
		return Errorf(CodeNotADir, given, "%s: a parent exists and is not a directory", given)
	}
	return mapOpenErr(err, given)
}

func ioErr(p string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeIO, Path: p, Msg: fmt.Sprintf("%s: %v", p, unwrapPathErr(err)), Err: err}
}
