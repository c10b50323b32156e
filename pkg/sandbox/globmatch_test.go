package sandbox

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/fsbox/fsbox/pkg/policy"
)

// ruleSetGlobs are the globs of every built-in rule set, as the sandbox
// holds them.
func ruleSetGlobs() []string {
	var gs []string
	for _, name := range policy.RuleSetNames() {
		set, _ := policy.BuiltinRuleSet(name)
		for _, r := range append(append([]policy.SetRule{}, set.Deny...), set.WriteDeny...) {
			gs = append(gs, strings.ToLower(policy.NormalizeGlob(r.Glob)))
		}
	}
	return gs
}

// matcherGlobs: the rule sets' globs and other shapes, fast and not.
func matcherGlobs() []string {
	return append(ruleSetGlobs(),
		"a/*/b", "**/a/**/b", "{x,y}", "**/{x,y}", "[ab]", "**/[ab]", "?x", "**/?x", "**", "*", "**/*", "**/**",
		"a", "a/b", "a/**", "a/b/**", "**/a", "**/a/b", "**/a/b/**", "**/.git", ".git/**", "**/a*", "**/*a",
		"**/*.md", "**/x.md", "**/.env.*", "**/*.*", "**/a*/**", "**/*.md/**", "*/a", "a*", "*.md", "**/*a*",
		"**/a.b+c", "**/a(b)", "**/^a$", "**/a|b", "**/a\\*", "**/a[", "**/{a", "**/.", "**/..", "..", "../a",
		"**/.ssh/**", "**/.aws/credentials", "**/id_rsa*", "**/-", "**/a b", "**/é", "**/.config/gcloud/**",
		"**/\xff", "**/\ufffd", "**/a\ufffd", "**/*\xe9", "**/\xc3*", "**/*é", "**/é*", "\ufffd/**",
	)
}

// pathNames draw paths from the globs' literals, dot names, extensions,
// near misses and glob syntax written as a name.
var pathNames = []string{
	"a", "b", "x", "y", "c", "ab", "ba", "x.md", ".md", "md", "a.md", ".git", "git", ".gitx", "x.git",
	".env", ".env.", ".env.local", ".env.example", "env", ".pem", "k.pem", "k.pem.bak", "pem", ".key", "a.key",
	"id_rsa", "id_rsa.pub", "id_rs", "xid_rsa", "id_ed25519", "id_ecdsa_sk", ".ssh", "ssh", ".aws", "credentials",
	".config", "gcloud", ".azure", ".docker", "config.json", ".npmrc", ".pypirc", ".netrc", ".git-credentials",
	".claude", ".codex", ".cursor", ".gemini", ".agents", ".windsurf", "a.b+c", "a(b)", "^a$", "a|b", "a*", "*",
	"**", "?", "{x,y}", "[ab]", ".", "..", "-", "a b", "é", "A", "xa", "a.b", "..a", ".x.md",
	"\xff", "\xfe", "\ufffd", "a\xff", "\xc3", "\xc3\xa9", "x\xe9", "\xe2\x82", "\xe2\x82é", "éé", `a\b`, `\`,
}

func randomPath(rng *rand.Rand) string {
	var p []string
	n := 1 + rng.IntN(3)
	if rng.IntN(4) == 0 {
		n += rng.IntN(8) // deep
	}
	for ; n > 0; n-- {
		p = append(p, pathNames[rng.IntN(len(pathNames))])
	}
	s := strings.Join(p, "/")
	if rng.IntN(16) == 0 { // malformed: the matcher must still agree
		s = []string{"/" + s, s + "/", strings.Replace(s, "/", "//", 1), ""}[rng.IntN(4)]
	}
	return s
}

func checkMatcher(t testing.TB, g, p string) {
	want := globOrBelow(g, treeGlob(g), p)
	if got := newGlobMatcher(g).match(p); got != want {
		t.Fatalf("glob %q path %q: matcher says %v, doublestar %v", g, p, got, want)
	}
}

// TestGlobMatcherIsDoublestar: the compiled matcher gives doublestar's
// answer (the glob or its tree form) on every glob and path.
func TestGlobMatcherIsDoublestar(t *testing.T) {
	globs := matcherGlobs()
	fast := 0
	for _, g := range ruleSetGlobs() {
		if newGlobMatcher(g).fast {
			fast++
		}
	}
	if fast != len(ruleSetGlobs()) {
		t.Errorf("only %d of the %d rule-set globs take the fast path", fast, len(ruleSetGlobs()))
	}
	for _, g := range []string{"a/*/b", "**/a/**/b", "{x,y}", "[ab]", "?x", "**", "*", "**/*", "**/a\\*", "**/a*/**"} {
		if newGlobMatcher(g).fast {
			t.Errorf("%q takes the fast path", g)
		}
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for _, g := range globs {
		for _, p := range pathNames {
			checkMatcher(t, g, p)
		}
		for i := 0; i < 2000; i++ {
			checkMatcher(t, g, randomPath(rng))
		}
	}
}

// TestSetRuleUnlessPrefilter: with exceptions, a setRule skips the walk
// up the ancestors when the glob matches none; it answers as the walk.
func TestSetRuleUnlessPrefilter(t *testing.T) {
	r := newSetRule("secrets", policy.SetRule{Glob: "**/.env.*", Unless: []string{"*.example", "*.sample", "*.template"}})
	walk := func(g, lower string) bool {
		for p := lower; ; {
			if ok, _ := doublestar.Match(g, p); ok && !r.excepted(p[strings.LastIndexByte(p, '/')+1:]) {
				return true
			}
			end := strings.LastIndexByte(p, '/')
			if end <= 0 {
				return false
			}
			p = p[:end]
		}
	}
	rng := rand.New(rand.NewPCG(3, 5))
	for _, g := range []string{"**/.env.*", "**/.env", "**/*.md", "a/*/b", "**/x.md/**"} {
		m := newGlobMatcher(g)
		for i := 0; i < 3000; i++ {
			p := randomPath(rng)
			if got, want := r.match(m, p), walk(g, p); got != want {
				t.Fatalf("glob %q path %q: setRule says %v, the walk %v", g, p, got, want)
			}
		}
	}
}

func FuzzGlobMatcher(f *testing.F) {
	for _, g := range matcherGlobs() {
		f.Add(g, "a/"+g)
		f.Add(g, g)
	}
	f.Add("**/.env.*", ".env.local/x")
	f.Add("**/*.pem", "a/.pem")
	f.Add("**/.aws/credentials", ".aws/credentials/x")
	f.Fuzz(func(t *testing.T, g, p string) {
		if !doublestar.ValidatePattern(g) {
			return
		}
		checkMatcher(t, g, p)
	})
}

// BenchmarkDenyGlobs: one path against every rule set's glob, as
// doublestar (globOrBelow) and as compiled matchers.
func BenchmarkDenyGlobs(b *testing.B) {
	globs := ruleSetGlobs()
	paths := []string{"src/internal/sandbox/check.go", "readme.md", "web/node_modules/left-pad/lib/index.js"}
	b.Run("doublestar", func(b *testing.B) {
		trees := make([]string, len(globs))
		for i, g := range globs {
			trees[i] = treeGlob(g)
		}
		for i := 0; i < b.N; i++ {
			p := paths[i%len(paths)]
			for j, g := range globs {
				if globOrBelow(g, trees[j], p) {
					b.Fatal(g, p)
				}
			}
		}
	})
	b.Run("matcher", func(b *testing.B) {
		ms := make([]*globMatcher, len(globs))
		for i, g := range globs {
			ms[i] = newGlobMatcher(g)
		}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			p := paths[i%len(paths)]
			for _, m := range ms {
				if m.match(p) {
					b.Fatal(m.glob, p)
				}
			}
		}
	})
}
