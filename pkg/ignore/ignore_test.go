package ignore

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// Cases follow git's documented gitignore semantics, which ripgrep
// implements; each names the rule it pins.
func TestGitignoreSemantics(t *testing.T) {
	cases := []struct {
		rules string
		path  string
		dir   bool
		want  bool
	}{
		{"*.log", "a.log", false, true},                     // unanchored: any depth
		{"*.log", "x/y/a.log", false, true},                 // unanchored: any depth
		{"/a.log", "a.log", false, true},                    // leading slash anchors
		{"/a.log", "x/a.log", false, false},                 // ... to the file's dir
		{"doc/*.txt", "doc/a.txt", false, true},             // inner slash anchors
		{"doc/*.txt", "x/doc/a.txt", false, false},          // ... so no other depth
		{"doc/*.txt", "doc/sub/a.txt", false, false},        // '*' does not cross '/'
		{"doc/**/*.txt", "doc/sub/deep/a.txt", false, true}, // '**' does
		{"build/", "build", true, true},                     // dir-only matches a dir
		{"build/", "build", false, false},                   // ... not a file
		{"build/", "x/build", true, true},                   // unanchored dir-only
		{"*.log\n!keep.log", "keep.log", false, false},      // negation re-includes
		{"*.log\n!keep.log", "other.log", false, true},
		{"!keep.log\n*.log", "keep.log", false, true}, // last match wins
		{"# comment\n\\#hash", "#hash", false, true},  // escaped hash
		{"# comment", "# comment", false, false},      // comment line
		{"\\!bang", "!bang", false, true},             // escaped bang
		{"trail   ", "trail", false, true},            // trailing spaces trimmed
		{"a[bc]d", "abd", false, true},                // classes
		{"a?c", "a/c", false, false},                  // '?' does not match '/'
		{"**/foo", "foo", false, true},                // leading '**/'
		{"foo/**", "foo/x/y", false, true},            // trailing '/**'
		{"\r\n*.tmp\r\n", "a.tmp", false, true},       // CRLF ignore files
	}
	for _, c := range cases {
		got := (&Stack{}).Push("", Parse([]byte(c.rules))).Ignored(c.path, c.dir)
		if got != c.want {
			t.Errorf("rules %q path %q dir=%v: got %v want %v", c.rules, c.path, c.dir, got, c.want)
		}
	}
}

func TestNestedPrecedence(t *testing.T) {
	root := (&Stack{}).Push("", Parse([]byte("*.gen\n")))
	sub := root.Push("sub", Parse([]byte("!keep.gen\n")))
	if !sub.Ignored("x.gen", false) || !sub.Ignored("sub/x.gen", false) {
		t.Error("outer rule must apply below")
	}
	if sub.Ignored("sub/keep.gen", false) {
		t.Error("a deeper file's negation must win")
	}
	if !sub.Ignored("keep.gen", false) {
		t.Error("a deeper file applies only below its directory")
	}
	// .ignore (pushed after .gitignore in the same dir) wins.
	both := (&Stack{}).Push("", Parse([]byte("*.md\n")), Parse([]byte("!README.md\n")))
	if both.Ignored("README.md", false) || !both.Ignored("x.md", false) {
		t.Error(".ignore must override .gitignore in the same directory")
	}
}

// refMatch is the plain matcher the index must agree with: every rule in
// order, the last match wins.
func refMatch(f *File, rel string, isDir bool) int {
	res := 0
	for _, r := range f.rules {
		if r.dirOnly && !isDir {
			continue
		}
		if ok, _ := doublestar.Match(r.glob, rel); ok {
			res = 1
			if r.negate {
				res = -1
			}
		}
	}
	return res
}

var (
	ruleParts = []string{"a", "b.txt", "*.log", "*.tar.gz", "x*.go", "doc/", "/doc", "src/**/x*.go", "**/b.txt", "foo/**",
		"**/foo", "a/**/b", "!b.txt", "!*.log", "[ab].txt", "a?c", "\\#h", "\\!n", "*", "d/*.txt", "/a/b", "a.log/", "{a,b}.md", ".hidden", "*.md "}
	pathParts = []string{"a", "b.txt", "x.log", "y.tar.gz", "x1.go", "doc", "src", "foo", "b", "a.md", "#h", "!n", "abc", "a.log", ".hidden", "d"}
)

// TestIndexAgreesWithPlainMatch compares the indexed matcher with the
// plain one over random rule files and paths.
func TestIndexAgreesWithPlainMatch(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for iter := 0; iter < 3000; iter++ {
		var rules []string
		for n := 1 + rng.Intn(8); n > 0; n-- {
			rules = append(rules, ruleParts[rng.Intn(len(ruleParts))])
		}
		f := Parse([]byte(strings.Join(rules, "\n")))
		for k := 0; k < 10; k++ {
			var parts []string
			for n := 1 + rng.Intn(4); n > 0; n-- {
				parts = append(parts, pathParts[rng.Intn(len(pathParts))])
			}
			rel, isDir := strings.Join(parts, "/"), rng.Intn(2) == 0
			if got, want := f.Match(rel, isDir), refMatch(f, rel, isDir); got != want {
				t.Fatalf("rules %q, path %q (dir %v): indexed %d, plain %d", rules, rel, isDir, got, want)
			}
		}
	}
}

// FuzzIgnoreIndex is TestIndexAgreesWithPlainMatch for any rules and path.
func FuzzIgnoreIndex(f *testing.F) {
	f.Add([]byte("*.log\n!keep.log\nfoo/**\n**/b\n"), "foo", true)
	f.Add([]byte("src/**/x*.go\n/a/b\n"), "src/x1.go", false)
	f.Fuzz(func(t *testing.T, rules []byte, rel string, isDir bool) {
		if rel == "" || strings.HasPrefix(rel, "/") || strings.HasSuffix(rel, "/") || strings.Contains(rel, "//") {
			return // walks never ask about such paths
		}
		if !utf8.Valid(rules) || !utf8.ValidString(rel) {
			return // doublestar takes any two invalid bytes as equal runes; the index compares bytes, as git does
		}
		p := Parse(rules)
		if got, want := p.Match(rel, isDir), refMatch(p, rel, isDir); got != want {
			t.Fatalf("rules %q, path %q (dir %v): indexed %d, plain %d", rules, rel, isDir, got, want)
		}
	})
}

// TestCaps: a file past MaxBytes keeps only its whole lines (the cut line
// is no rule) and counts the rest; glob rules past MaxGlobs along a path
// are dropped and counted, indexed ones never are.
func TestCaps(t *testing.T) {
	var b strings.Builder
	for b.Len() < MaxBytes-20 {
		b.WriteString("name.txt\n")
	}
	b.WriteString(strings.Repeat("#", MaxBytes-3-b.Len()) + "\n")
	b.WriteString("src/**/x*.go\nlast\n") // "src" lies across MaxBytes
	f := Parse([]byte(b.String()))
	if f.Dropped != 2 || f.Match("src", true) != 0 || f.Match("last", false) != 0 || f.Match("name.txt", false) != 1 {
		t.Errorf("past MaxBytes: dropped %d, src %d, last %d", f.Dropped, f.Match("src", true), f.Match("last", false))
	}
	var g strings.Builder
	for i := 0; i < MaxGlobs+10; i++ {
		fmt.Fprintf(&g, "g%d_*/x\nlit%d\n", i, i)
	}
	gf := Parse([]byte(g.String()))
	st, dropped := (&Stack{}).PushCounted("", gf)
	lastLit, lastKept, firstDropped := fmt.Sprintf("lit%d", MaxGlobs+9), fmt.Sprintf("g%d_a/x", MaxGlobs-1), fmt.Sprintf("g%d_a/x", MaxGlobs)
	if dropped != 10 || !st.Ignored(lastLit, false) || !st.Ignored(lastKept, false) || st.Ignored(firstDropped, false) {
		t.Errorf("past MaxGlobs: dropped %d; %s %v, %s %v, %s %v", dropped, lastLit, st.Ignored(lastLit, false),
			lastKept, st.Ignored(lastKept, false), firstDropped, st.Ignored(firstDropped, false))
	}
	sub, dropped := st.PushCounted("sub", Parse([]byte("s*/x\nplain\n")))
	if dropped != 1 || !sub.Ignored("sub/plain", false) || sub.Ignored("sub/s1/x", false) {
		t.Errorf("a deeper file past the path's MaxGlobs: dropped %d", dropped)
	}
}

// BenchmarkBigIgnoreFile matches 2,000 paths against a 1 MiB ignore file
// of ~78k rules of every kind.
func BenchmarkBigIgnoreFile(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	var g strings.Builder
	for n := 0; g.Len() < MaxBytes-100; n++ {
		switch r := rng.Float64(); {
		case r < 0.4:
			fmt.Fprintf(&g, "name%d.txt\n", n)
		case r < 0.6:
			fmt.Fprintf(&g, "*.ext%d\n", n)
		case r < 0.8:
			fmt.Fprintf(&g, "dir%d/\n", n)
		default:
			fmt.Fprintf(&g, "src/**/x%d*.go\n", n)
		}
	}
	st, _ := (&Stack{}).PushCounted("", Parse([]byte(g.String())))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := 0; k < 2000; k++ {
			st.Ignored(fmt.Sprintf("src/f%d.go", k), false)
		}
	}
}

// TestAgreeWithGitAndRipgrep: the cases of issue 14 where fsbox read
// ignore files differently from git, rg and fd.
func TestAgreeWithGitAndRipgrep(t *testing.T) {
	kind := func(k Kind, data string) *File { f := Parse([]byte(data)); f.Kind = k; return f }
	cases := []struct {
		name  string
		stack *Stack
		rel   string
		isDir bool
		want  int
	}{
		{"x/** is inside x", (*Stack)(nil).Push("", kind(Gitignore, "f/**\n")), "f", false, 0},
		{"x/** ignores x/y", (*Stack)(nil).Push("", kind(Gitignore, "f/**\n")), "f/y", false, 1},
		{"x/** then !x/keep", (*Stack)(nil).Push("", kind(Gitignore, "vendor/**\n!vendor/manifest\n")), "vendor/manifest", false, -1},
		{"BOM", (*Stack)(nil).Push("", kind(Gitignore, "\xef\xbb\xbfsecret\n")), "secret", false, 1},
		{".ignore beats a deeper .gitignore", (*Stack)(nil).Push("", kind(Dotignore, "!foo\n")).Push("inner", kind(Gitignore, "foo\n")), "inner/foo", false, -1},
		{"a deeper .gitignore beats a shallower one", (*Stack)(nil).Push("", kind(Gitignore, "!foo\n")).Push("inner", kind(Gitignore, "foo\n")), "inner/foo", false, 1},
		{"nested repository", func() *Stack {
			st := (*Stack)(nil).Push("", kind(Gitignore, "sherlock\n"))
			st, _ = st.PushDir("foo", true)
			return st
		}(), "foo/bar/sherlock", false, 0},
		{".ignore reaches into a nested repository", func() *Stack {
			st := (*Stack)(nil).Push("", kind(Dotignore, "sherlock\n"))
			st, _ = st.PushDir("foo", true)
			return st
		}(), "foo/bar/sherlock", false, 1},
		{"the repository's own .gitignore", func() *Stack {
			st, _ := (*Stack)(nil).PushDir("foo", true, kind(Gitignore, "sherlock\n"))
			return st
		}(), "foo/sherlock", false, 1},
		// Outside a repository (rg and fd require git for .gitignore):
		// .gitignore and exclude rules do not apply, .ignore does; from a
		// repository's top down they apply again.
		{"outside: .gitignore", Outside().Push("", kind(Gitignore, "sherlock\n")), "sherlock", false, 0},
		{"outside: exclude", Outside().Push("", kind(Exclude, "sherlock\n")), "sherlock", false, 0},
		{"outside: .ignore", Outside().Push("", kind(Dotignore, "sherlock\n")), "sherlock", false, 1},
		{"outside: a '!' of .gitignore whitelists nothing", Outside().Push("", kind(Dotignore, "sherlock\n")).Push("in", kind(Gitignore, "!sherlock\n")), "in/sherlock", false, 1},
		{"outside, then a repository's top", func() *Stack {
			st, _ := Outside().PushDir("foo", true, kind(Gitignore, "sherlock\n"))
			return st
		}(), "foo/sherlock", false, 1},
		{"outside: a nested repository's rules stay in it", func() *Stack {
			st := Outside().Push("", kind(Gitignore, "sherlock\n"))
			st, _ = st.PushDir("foo", true)
			return st
		}(), "foo/sherlock", false, 0},
	}
	for _, c := range cases {
		if got := c.stack.Match(c.rel, c.isDir); got != c.want {
			t.Errorf("%s: Match(%q) = %d, want %d", c.name, c.rel, got, c.want)
		}
	}
	if Outside().GitApplies() || !(*Stack)(nil).GitApplies() || !(&Stack{}).GitApplies() {
		t.Error("GitApplies: false only on a stack outside a repository")
	}
	if st, _ := Outside().PushDir("foo", true); !st.GitApplies() {
		t.Error("GitApplies: a repository's top applies .gitignore")
	}
}
