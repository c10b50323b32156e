// Package ignore matches paths against gitignore-style rules (.gitignore,
// .ignore, .git/info/exclude) the way git and ripgrep read them: comments,
// escapes, negation with '!', anchoring by a leading or inner '/',
// directory-only patterns with a trailing '/', and '**'. Globs are matched
// with doublestar; the last matching rule of the deepest file decides.
package ignore

import (
	"bytes"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

type rule struct {
	glob    string // doublestar pattern relative to the file's directory
	negate  bool
	dirOnly bool
}

// File is the parsed rules of one ignore file, relative to its directory.
type File struct {
	rules []rule
}

// Parse reads gitignore syntax. Invalid patterns are dropped, as git does.
func Parse(data []byte) *File {
	f := &File{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		s := strings.TrimSuffix(string(line), "\r")
		if s == "" || s[0] == '#' {
			continue
		}
		s = trimTrailingSpaces(s)
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
		if !doublestar.ValidatePattern(s) {
			continue
		}
		r.glob = s
		f.rules = append(f.rules, r)
	}
	return f
}

// trimTrailingSpaces drops unescaped trailing spaces.
func trimTrailingSpaces(s string) string {
	for strings.HasSuffix(s, " ") && !strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-1]
	}
	return s
}

// Match reports whether rel (relative to the file's directory, '/'
// separated) is ignored (1), re-included (-1), or not mentioned (0).
func (f *File) Match(rel string, isDir bool) int {
	for i := len(f.rules) - 1; i >= 0; i-- {
		r := f.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		if ok, _ := doublestar.Match(r.glob, rel); ok {
			if r.negate {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Stack is the ignore files in force for one directory: each with the
// directory it lives in, relative to the walk's root, outermost first.
type Stack struct {
	parent *Stack
	dir    string // "" for the root
	files  []*File
}

// Push returns a stack with the files of dir (relative to the root) on top.
func (s *Stack) Push(dir string, files ...*File) *Stack {
	var kept []*File
	for _, f := range files {
		if f != nil && len(f.rules) > 0 {
			kept = append(kept, f)
		}
	}
	if len(kept) == 0 {
		return s
	}
	return &Stack{parent: s, dir: dir, files: kept}
}

// Ignored reports whether rel (relative to the root) is ignored: the
// deepest ignore file with a matching rule decides, and within one
// directory the later file (.ignore after .gitignore) wins.
func (s *Stack) Ignored(rel string, isDir bool) bool {
	for st := s; st != nil; st = st.parent {
		sub := rel
		if st.dir != "" {
			if !strings.HasPrefix(rel, st.dir+"/") {
				continue
			}
			sub = rel[len(st.dir)+1:]
		}
		for i := len(st.files) - 1; i >= 0; i-- {
			switch st.files[i].Match(sub, isDir) {
			case 1:
				return true
			case -1:
				return false
			}
		}
	}
	return false
}
