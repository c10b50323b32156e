// Package ignore matches paths against gitignore-style rules (.gitignore,
// .ignore, .git/info/exclude) the way git and ripgrep read them: comments,
// escapes, negation with '!', anchoring by a leading or inner '/',
// directory-only patterns with a trailing '/', and '**'. Globs are matched
// with doublestar; the last matching rule of the deepest file decides.
//
// Whatever an ignore file holds, matching a path costs little: rules that
// are a literal name, a literal extension or a literal path are looked up
// in maps (as ripgrep's globset does), and the rules that need a glob
// match are capped (MaxGlobs along a path) — the rest are dropped and
// counted, never silently.
package ignore

import (
	"bytes"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// MaxGlobs is how many rules that need a glob match apply along one path
// (over every ignore file from the root down): past it a file's further
// glob rules are dropped and counted. Rules indexed by name, extension or
// path are never dropped.
const MaxGlobs = 256

// MaxBytes is how much of one ignore file is read; only whole lines of it
// become rules, and the lines past it are counted as dropped.
const MaxBytes = 1 << 20

type rule struct {
	glob    string // doublestar pattern relative to the file's directory
	negate  bool
	dirOnly bool
	// prefix and suffix are literal text every match starts and ends
	// with, and inner the longest literal run it holds: quick tests
	// before the glob match.
	prefix, suffix, inner string
}

// Kind is what sort of ignore file a File is; it sets the precedence.
type Kind uint8

const (
	// Gitignore is a .gitignore (the zero Kind).
	Gitignore Kind = iota
	// Exclude is a repository's .git/info/exclude.
	Exclude
	// Dotignore is a .ignore file: it beats .gitignore and exclude at
	// every level, as in ripgrep and fd.
	Dotignore
)

// File is the parsed rules of one ignore file, relative to its directory.
type File struct {
	Kind  Kind
	rules []rule // every rule, in file order: the index decides who wins
	// The rules that can be looked up: by base name ("**/name"), by the
	// extension of a literal suffix ("**/*.ext", checked with HasSuffix),
	// and by the whole relative path (a literal anchored pattern).
	byName, byExt, byPath map[string][]int32
	globs                 []int32 // the others, in file order
	// Dropped counts rules left out: past MaxBytes, or past MaxGlobs.
	Dropped int
}

// Parse reads gitignore syntax. Invalid patterns are dropped, as git does.
// Only whole lines within MaxBytes become rules: past it, the lines of
// data are counted in Dropped (a line cut short there is no rule). A
// caller that read only MaxBytes+1 bytes of a longer file counts the
// unread rest as one more.
func Parse(data []byte) *File {
	f := &File{}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 BOM is no part of the first rule (git, rg)
	if len(data) > MaxBytes {
		cut := bytes.LastIndexByte(data[:MaxBytes], '\n') + 1
		f.Dropped = bytes.Count(data[cut:], []byte("\n"))
		if data[len(data)-1] != '\n' {
			f.Dropped++
		}
		data = data[:cut]
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		s := strings.TrimSuffix(string(line), "\r")
		if s == "" || s[0] == '#' {
			continue
		}
		if s = trimTrailingSpaces(s); s == "" {
			continue // a line of spaces (it crashed the parser before)
		}
		var r rule
		if s[0] == '!' {
			r.negate = true
			s = s[1:]
		} else if strings.HasPrefix(s, `\!`) || strings.HasPrefix(s, `\#`) {
			s = s[1:]
		}
		if strings.HasSuffix(s, "/") {
			r.dirOnly = true
			s = strings.TrimRight(s, "/")
		}
		if s == "" {
			continue
		}
		anchored := strings.Contains(s, "/")
		s = strings.TrimPrefix(s, "/")
		if !anchored && !strings.HasPrefix(s, "**") {
			s = "**/" + s
		}
		if len(s) > 3 && strings.HasSuffix(s, "/**") {
			// "x/**" is what lies inside x, not x itself (git, rg, fd);
			// doublestar's "x/**" would match x too.
			s += "/*"
		}
		if !doublestar.ValidatePattern(s) {
			continue
		}
		r.glob = s
		f.add(r)
	}
	return f
}

// add files r under the index it can use.
func (f *File) add(r rule) {
	i := int32(len(f.rules))
	put := func(m *map[string][]int32, k string) {
		if *m == nil {
			*m = map[string][]int32{}
		}
		(*m)[k] = append((*m)[k], i)
	}
	name, unanchored := strings.CutPrefix(r.glob, "**/")
	switch {
	case unanchored && !hasMeta(name) && !strings.Contains(name, "/"):
		put(&f.byName, name)
	case unanchored && strings.HasPrefix(name, "*") && !hasMeta(name[1:]) && !strings.Contains(name, "/") && strings.Contains(name, "."):
		r.suffix = name[1:]
		put(&f.byExt, path.Ext(name))
	case !hasMeta(r.glob):
		put(&f.byPath, r.glob)
	default:
		// Literal text around the metacharacters; the '/' beside a '**'
		// is optional ("foo/**" matches "foo", "**/b" matches "b").
		meta := strings.IndexAny(r.glob, `*?[]{}\`) // the set hasMeta tests: a lone ] or } counts
		r.prefix = r.glob[:meta]
		if strings.HasPrefix(r.glob[meta:], "**") {
			r.prefix = strings.TrimSuffix(r.prefix, "/")
		}
		last := strings.LastIndexAny(r.glob, `*?[]{}\`)
		r.suffix = r.glob[last+1:]
		if last > 0 && r.glob[last-1:last+1] == "**" {
			r.suffix = strings.TrimPrefix(r.suffix, "/")
		}
		r.inner = longestLiteral(r.glob)
		f.globs = append(f.globs, i)
	}
	f.rules = append(f.rules, r)
}

// longestLiteral is the longest run of literal text in a glob, outside
// classes and braces, without the '/' at its ends (a '/' beside '**' is
// optional): every match holds it.
func longestLiteral(g string) string {
	best, start, depth := "", 0, 0
	flush := func(end int) {
		if run := strings.Trim(g[start:end], "/"); depth == 0 && len(run) > len(best) {
			best = run
		}
	}
	for i := 0; i < len(g); i++ {
		switch g[i] {
		case '*', '?', '\\', '[', ']', '{', '}':
			flush(i)
			switch g[i] {
			case '[', '{':
				depth++
			case ']', '}':
				depth = max(depth-1, 0)
			case '\\':
				i++ // the escaped byte is no run's
			}
			start = i + 1
		}
	}
	flush(len(g))
	return best
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[]{}\`) }

// trimTrailingSpaces drops unescaped trailing spaces.
func trimTrailingSpaces(s string) string {
	for strings.HasSuffix(s, " ") && !strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-1]
	}
	return s
}

// Match reports whether rel (relative to the file's directory, '/'
// separated) is ignored (1), re-included (-1), or not mentioned (0): the
// last rule in the file that matches decides.
func (f *File) Match(rel string, isDir bool) int {
	return f.match(rel, isDir, len(f.globs))
}

// match is Match using only the first globs of f's glob rules.
func (f *File) match(rel string, isDir bool, globs int) int {
	best := int32(-1)
	ok := func(i int32) bool {
		r := &f.rules[i]
		return i > best && (!r.dirOnly || isDir)
	}
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	for _, i := range f.byName[base] {
		if ok(i) {
			best = i
		}
	}
	if ext := path.Ext(base); ext != "" {
		for _, i := range f.byExt[ext] {
			if ok(i) && strings.HasSuffix(base, f.rules[i].suffix) {
				best = i
			}
		}
	}
	for _, i := range f.byPath[rel] {
		if ok(i) {
			best = i
		}
	}
	for k := globs - 1; k >= 0; k-- { // the last match wins: from the end
		i := f.globs[k]
		if i < best {
			break
		}
		r := &f.rules[i]
		if !ok(i) || !strings.HasPrefix(rel, r.prefix) || !strings.HasSuffix(rel, r.suffix) || !strings.Contains(rel, r.inner) {
			continue
		}
		if m, _ := doublestar.Match(r.glob, rel); m {
			best = i
			break
		}
	}
	switch {
	case best < 0:
		return 0
	case f.rules[best].negate:
		return -1
	}
	return 1
}

// Stack is the ignore files in force for one directory: each with the
// directory it lives in, relative to the walk's root, outermost first.
type Stack struct {
	parent *Stack
	dir    string // "" for the root
	repo   bool   // dir holds a .git: .gitignore and exclude rules from above stop here
	files  []*File
	globs  []int // how many of each file's glob rules apply (MaxGlobs)
	total  int   // glob rules in force here and above
	// outside: no directory here or above is a repository's top, and the
	// walk started outside any repository (Outside): .gitignore and
	// exclude rules do not apply, as rg and fd apply them only in a git
	// repository. The zero Stack applies them everywhere (rg's
	// --no-require-git).
	outside bool
}

// Outside is the stack a walk starts with when its start lies in no git
// repository (no .git in it or above it): .gitignore and exclude rules
// apply only at and below a directory pushed as a repository's top
// (PushDir with repo), while .ignore files apply everywhere.
func Outside() *Stack { return &Stack{outside: true} }

// GitApplies reports whether .gitignore and exclude rules apply in the
// directory s is the stack of (or in one pushed on it as a repository's
// top, which always applies them): a walk need not read them otherwise.
func (s *Stack) GitApplies() bool { return s == nil || !s.outside }

// Push returns a stack with the files of dir (relative to the root) on top.
func (s *Stack) Push(dir string, files ...*File) *Stack {
	st, _ := s.PushCounted(dir, files...)
	return st
}

// PushCounted is Push that also says how many of the files' rules were
// dropped (MaxBytes, MaxGlobs).
func (s *Stack) PushCounted(dir string, files ...*File) (*Stack, int) {
	return s.PushDir(dir, false, files...)
}

// PushDir is PushCounted for a directory that may be a repository's top
// (it holds .git): the .gitignore and exclude files of the directories
// above it then no longer apply below it, as git, rg and fd have it.
func (s *Stack) PushDir(dir string, repo bool, files ...*File) (*Stack, int) {
	top := &Stack{parent: s, dir: dir, repo: repo}
	if s != nil {
		top.total, top.outside = s.total, s.outside && !repo
	}
	dropped := 0
	for _, f := range files {
		if f == nil {
			continue
		}
		dropped += f.Dropped
		if len(f.rules) == 0 {
			continue
		}
		keep := min(len(f.globs), max(MaxGlobs-top.total, 0))
		dropped += len(f.globs) - keep
		top.total += keep
		top.files = append(top.files, f)
		top.globs = append(top.globs, keep)
	}
	if len(top.files) == 0 && !repo {
		return s, dropped
	}
	return top, dropped
}

// Ignored reports whether rel (relative to the root) is ignored.
func (s *Stack) Ignored(rel string, isDir bool) bool { return s.Match(rel, isDir) == 1 }

// Match reports whether rel (relative to the root) is ignored (1),
// whitelisted by a '!' rule (-1), or not mentioned (0), with ripgrep's
// precedence: .ignore files first, then .gitignore files, then exclude;
// within one kind the deepest file with a matching rule decides, and the
// last matching rule within a file. .gitignore and exclude files above a
// nested repository's top (a directory holding .git) do not reach into it,
// and outside a repository (Outside) they do not apply at all.
func (s *Stack) Match(rel string, isDir bool) int {
	for _, kind := range [...]Kind{Dotignore, Gitignore, Exclude} {
		if kind != Dotignore && s != nil && s.outside {
			break // outside a repository only .ignore files apply
		}
		for st := s; st != nil; st = st.parent {
			sub := rel
			if st.dir != "" {
				if !strings.HasPrefix(rel, st.dir+"/") {
					continue
				}
				sub = rel[len(st.dir)+1:]
			}
			for i := len(st.files) - 1; i >= 0; i-- {
				if st.files[i].Kind != kind {
					continue
				}
				if m := st.files[i].match(sub, isDir, st.globs[i]); m != 0 {
					return m
				}
			}
			if st.repo && kind != Dotignore {
				break // the repository's top: git's rules from above stop
			}
		}
	}
	return 0
}
