//go:build unix

package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/policy"
)

// noRepoAbove skips a test whose temporary directories lie inside a git
// repository (a .git in /tmp or above): there .gitignore applies
// everywhere, as rg has it, and a tree cannot be outside a repository.
func noRepoAbove(t *testing.T, dir string) {
	t.Helper()
	if gitAbove(dir) {
		t.Skipf("a directory above %s holds .git: no tree here lies outside a repository", dir)
	}
}

// TestIgnoreOnlyInRepo: .gitignore and .git/info/exclude apply only
// inside a git repository (a .git directory or file in the walk's root,
// in a directory of the walk from there down, or above the root), as rg
// and fd have it; .ignore applies everywhere; NoRequireGit applies
// .gitignore outside one too.
func TestIgnoreOnlyInRepo(t *testing.T) {
	files := map[string]string{
		".gitignore":       "*.log\n",
		".ignore":          "*.tmp\n",
		"a.log":            "",
		"a.tmp":            "",
		"a.txt":            "",
		"sub/b.log":        "",
		"sub/b.tmp":        "",
		"sub/b.txt":        "",
		"sub/.gitignore":   "b.txt\n",
		"other/c.log":      "",
		"other/.gitignore": "c.*\n",
	}
	for _, tc := range []struct {
		name   string
		git    []string // .git directories (or files, ending in "!") to make, relative to the tree's parent
		root   string   // the root, relative to the tree's parent
		start  string
		noReq  bool
		want   string // the files reported, sorted
		ruled  int64  // entries an ignore file's rule left out
		report bool   // AllIgnored
	}{
		{name: "no repository", root: "t", start: ".",
			want: "a.log a.txt other/c.log sub/b.log sub/b.txt", ruled: 2},
		{name: "no-require-git", root: "t", start: ".", noReq: true,
			want: "a.txt", ruled: 6},
		{name: ".git in the root", git: []string{"t/.git"}, root: "t", start: ".",
			want: "a.txt", ruled: 6},
		{name: ".git file (a worktree)", git: []string{"t/.git!"}, root: "t", start: ".",
			want: "a.txt", ruled: 6},
		{name: ".git above the root", git: []string{".git"}, root: "t", start: ".",
			want: "a.txt", ruled: 6},
		{name: "start below the root", git: []string{"t/.git"}, root: "t", start: "sub",
			want: "", ruled: 3, report: true},
		{name: "start below the root, no repository", root: "t", start: "sub",
			want: "sub/b.log sub/b.txt", ruled: 1},
		// sub is a repository's top: its .gitignore applies in it, the
		// root's (outside any repository) applies nowhere.
		{name: "nested repository", git: []string{"t/sub/.git"}, root: "t", start: ".",
			want: "a.log a.txt other/c.log sub/b.log", ruled: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			must(t, err)
			noRepoAbove(t, base)
			for name, body := range files {
				mustWrite(t, filepath.Join(base, "t", name), body)
			}
			for _, g := range tc.git {
				if dot, ok := strings.CutSuffix(g, "!"); ok {
					mustWrite(t, filepath.Join(base, dot), "gitdir: /elsewhere\n")
					continue
				}
				must(t, os.MkdirAll(filepath.Join(base, g), 0o755))
			}
			s, err := New(policy.DefaultPolicy(filepath.Join(base, tc.root)), "")
			must(t, err)
			defer s.Close()
			var got []string
			sk, err := walkFiles(s, tc.start, WalkOptions{MaxDepth: -1, NoRequireGit: tc.noReq}, &got)
			must(t, err)
			if strings.Join(got, " ") != tc.want || sk.byRules != tc.ruled || sk.AllIgnored() != tc.report {
				t.Errorf("files %q, by rules %d, all ignored %v; want %q, %d, %v", got, sk.byRules, sk.AllIgnored(), tc.want, tc.ruled, tc.report)
			}
		})
	}
}

// walkFiles walks start and appends the files it reports (no
// directories) to got.
func walkFiles(s *Sandbox, start string, o WalkOptions, got *[]string) (WalkSkipped, error) {
	paths, sk, err := walkPaths(s, start, o)
	for _, p := range paths {
		if fi, err := os.Stat(filepath.Join(s.Workdir(), p)); err == nil && !fi.IsDir() {
			*got = append(*got, p)
		}
	}
	slices.Sort(*got)
	return sk, err
}

// TestExcludeOnlyBesideGitDir: .git/info/exclude is read where .git is a
// directory, and its rules apply there as a .gitignore's would.
func TestExcludeOnlyBesideGitDir(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	noRepoAbove(t, dir)
	mustWrite(t, filepath.Join(dir, ".git", "info", "exclude"), "x.txt\n")
	mustWrite(t, filepath.Join(dir, "x.txt"), "")
	mustWrite(t, filepath.Join(dir, "y.txt"), "")
	s, err := New(policy.DefaultPolicy(dir), "")
	must(t, err)
	defer s.Close()
	var got []string
	if _, err := walkFiles(s, ".", WalkOptions{MaxDepth: -1}, &got); err != nil || strings.Join(got, " ") != "y.txt" {
		t.Errorf("got %q, %v; want y.txt alone", got, err)
	}
}

// TestAllIgnoredKernelTop: a tree outside a repository whose .gitignore
// is "/*" (Debian's kernel source) is listed whole; with NoRequireGit the
// rule leaves out every entry, and the walk says so (AllIgnored), so the
// text form can tell why nothing came out.
func TestAllIgnoredKernelTop(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	noRepoAbove(t, dir)
	mustWrite(t, filepath.Join(dir, ".gitignore"), "/*\n!/debian/\n")
	mustWrite(t, filepath.Join(dir, "init", "Kconfig"), "")
	mustWrite(t, filepath.Join(dir, "Kconfig"), "")
	s, err := New(policy.DefaultPolicy(dir), "")
	must(t, err)
	defer s.Close()
	var got []string
	sk, err := walkFiles(s, ".", WalkOptions{MaxDepth: -1}, &got)
	if err != nil || strings.Join(got, " ") != "Kconfig init/Kconfig" || sk.AllIgnored() {
		t.Errorf("outside a repository: %q, all ignored %v, %v", got, sk.AllIgnored(), err)
	}
	got = nil
	sk, err = walkFiles(s, ".", WalkOptions{MaxDepth: -1, NoRequireGit: true}, &got)
	if err != nil || len(got) != 0 || !sk.AllIgnored() || sk.Ignored != 2 || sk.Hidden != 1 {
		t.Errorf("no-require-git: %q, %+v, %v", got, sk, err)
	}
	got = nil
	sk, err = walkFiles(s, ".", WalkOptions{MaxDepth: -1, NoRequireGit: true, NoIgnore: true}, &got)
	if err != nil || len(got) != 2 || sk.AllIgnored() {
		t.Errorf("no-ignore: %q, %+v, %v", got, sk, err)
	}
}

// TestGitDirAloneIsNoRule: .git left out (with hidden names shown) is
// counted as ignored, but it is no ignore file's rule: an otherwise empty
// repository is not "left out by ignore rules".
func TestGitDirAloneIsNoRule(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	must(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755))
	s, err := New(policy.DefaultPolicy(dir), "")
	must(t, err)
	defer s.Close()
	_, sk, err := walkPaths(s, ".", WalkOptions{MaxDepth: -1, Hidden: true})
	if err != nil || sk.Ignored != 1 || sk.AllIgnored() {
		t.Errorf("%+v, %v", sk, err)
	}
}
