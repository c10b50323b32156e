package ignore

import "testing"

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
