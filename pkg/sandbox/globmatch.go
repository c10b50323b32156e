package sandbox

import (
	"strings"
	"unicode/utf8"
)

// globMatcher is a deny or write_deny glob (lower-cased, as NormalizeGlob
// leaves it) compiled once, when the sandbox builds its rule lists. match
// gives exactly globOrBelow(glob, treeGlob(glob), p): the glob matches p
// or an ancestor of p. The shapes the rule sets use are matched on p's
// components without doublestar:
//
//	**/LIT, **/LIT/**   LIT's components appear in a row in p
//	LIT, LIT/**         ... starting at p's first component
//	**/PRE*             a component of p starts with PRE
//	**/*SUF             a component of p ends with SUF
//
// where LIT, PRE and SUF hold no glob syntax (PRE and SUF no "/") and
// are valid UTF-8 without U+FFFD: doublestar compares runes, and takes
// every invalid byte for U+FFFD, so "\xff" matches "\xfe" there. (Bytes
// of a valid literal compare as its runes do: it starts with no
// continuation byte, so wherever it lies in p it starts a rune.) A
// component may start with "." (doublestar's * matches it) and "*" may be
// empty, so ".pem" ends with ".pem". Any other glob, and any path with an
// empty component (a leading, trailing or doubled "/": not expected from
// the callers, but not relied on), goes to doublestar.
type globMatcher struct {
	glob, tree string
	fast       bool   // one of the shapes above
	lit        string // LIT, PRE or SUF
	// start, end: lit must start, end a component of p; anchored: at
	// p's start.
	start, end, anchored bool
}

func newGlobMatcher(g string) *globMatcher {
	m := &globMatcher{glob: g, tree: treeGlob(g)}
	body, floating := strings.CutPrefix(g, "**/")
	body, tree := strings.CutSuffix(body, "/**")
	switch {
	case plainGlob(body, true):
		m.fast, m.lit, m.start, m.end, m.anchored = true, body, true, true, !floating
	case !floating || tree || len(body) < 2:
	case body[len(body)-1] == '*' && plainGlob(body[:len(body)-1], false):
		m.fast, m.lit, m.start = true, body[:len(body)-1], true
	case body[0] == '*' && plainGlob(body[1:], false):
		m.fast, m.lit, m.end = true, body[1:], true
	}
	return m
}

// plainGlob: s is a non-empty literal to doublestar (no *, ?, [, ], {, },
// \), valid UTF-8 without U+FFFD, with no empty component; with slash,
// it may hold several.
func plainGlob(s string, slash bool) bool {
	if s == "" || strings.ContainsAny(s, `*?[]{}\`+string(utf8.RuneError)) || !utf8.ValidString(s) {
		return false
	}
	if !slash {
		return !strings.Contains(s, "/")
	}
	return s[0] != '/' && s[len(s)-1] != '/' && !strings.Contains(s, "//")
}

// match reports whether the glob matches p or an ancestor of p.
func (m *globMatcher) match(p string) bool {
	if !m.fast || p == "" || p[0] == '/' || p[len(p)-1] == '/' || strings.Contains(p, "//") {
		return globOrBelow(m.glob, m.tree, p)
	}
	if m.anchored {
		n := len(m.lit)
		return strings.HasPrefix(p, m.lit) && (len(p) == n || p[n] == '/')
	}
	for off := 0; ; {
		i := strings.Index(p[off:], m.lit)
		if i < 0 {
			return false
		}
		i += off
		j := i + len(m.lit)
		if (!m.start || i == 0 || p[i-1] == '/') && (!m.end || j == len(p) || p[j] == '/') {
			return true
		}
		off = i + 1
	}
}
