package sandbox

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/fsbox/fsbox/pkg/policy"
)

// ancestorMatch is the definition checkPatterns implements: the pattern
// matches the path or one of its ancestors (whole components).
func ancestorMatch(match func(string) bool, p string) bool {
	for end := len(p); end > 0; end = strings.LastIndexByte(p[:end], '/') {
		if match(p[:end]) {
			return true
		}
	}
	return false
}

// TestTreeGlobIsAncestorMatch checks the one-match form of the deny globs
// (treeGlob) against matching every ancestor, over random globs and paths.
func TestTreeGlobIsAncestorMatch(t *testing.T) {
	parts := []string{"a", "b", "*", "**", "x.md", "*.md", "{a,b}", "[ab]", "a*", "?", ".git", "**"}
	names := []string{"a", "b", "x.md", ".git", "ab", "c"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		var g []string
		for n := 1 + rng.IntN(4); n > 0; n-- {
			g = append(g, parts[rng.IntN(len(parts))])
		}
		glob := strings.Join(g, "/")
		if !doublestar.ValidatePattern(glob) {
			continue
		}
		var p []string
		for n := 1 + rng.IntN(5); n > 0; n-- {
			p = append(p, names[rng.IntN(len(names))])
		}
		path := strings.Join(p, "/")
		want := ancestorMatch(func(q string) bool { ok, _ := doublestar.Match(glob, q); return ok }, path)
		got := globOrBelow(glob, treeGlob(glob), path)
		if got != want {
			t.Fatalf("glob %q path %q: tree form %q says %v, ancestor match says %v", glob, path, treeGlob(glob), got, want)
		}
	}
}

// TestRegexAncestors: a regex without end assertions matches an ancestor
// only if it matches the whole path; one with them is tried per ancestor.
func TestRegexAncestors(t *testing.T) {
	exprs := []string{`(^|/)\.ssh$`, `^vault/`, `secret`, `\.pem$`, `^a/b`, `b\b`, `(?m)x$`, `\.ssh\z`, `[0-9]+`}
	paths := []string{".ssh/id_rsa", "home/.ssh/k", "vault/x", "a/vault/x", "my.secret/x", "k.pem/y", "a/b/c", "ab/c", "b/c", "x/y", "a1/b"}
	for _, e := range exprs {
		re := regexp.MustCompile("(?i)" + e)
		for _, p := range paths {
			want := ancestorMatch(re.MatchString, p)
			got := re.MatchString(p)
			if !hasEndAssertion(e) && got != want {
				t.Errorf("%q on %q: full match %v, ancestor match %v, but no end assertion was found", e, p, got, want)
			}
			s := &Sandbox{denyRe: []*regexp.Regexp{re}, denyReEnd: []bool{hasEndAssertion(e)}, hasPatterns: true, policy: &policy.Policy{}}
			if denied := s.checkPatterns(&root{}, p, true, AccessRead, p) != nil; denied != want {
				t.Errorf("checkPatterns(%q) with deny_regex %q: denied %v, want %v", p, e, denied, want)
			}
		}
	}
}
