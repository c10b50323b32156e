//go:build unix

package ops

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// tree writes files (content "x\n" unless given) below dir; a name ending
// in "/" is a directory, "a -> b" a symlink.
func tree(t testing.TB, dir string, spec map[string]string) {
	t.Helper()
	for name, content := range spec {
		p := filepath.Join(dir, name)
		switch {
		case strings.HasSuffix(name, "/"):
			os.MkdirAll(p, 0o755)
		case strings.HasPrefix(content, "-> "):
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.Symlink(strings.TrimPrefix(content, "-> "), p); err != nil {
				t.Fatal(err)
			}
		default:
			os.MkdirAll(filepath.Dir(p), 0o755)
			if content == "" {
				content = "x\n"
			}
			os.WriteFile(p, []byte(content), 0o644)
		}
	}
}

func findPaths(t *testing.T, sb *sandbox.Sandbox, o FindOptions) FindResult {
	t.Helper()
	if o.MaxDepth == 0 {
		o.MaxDepth = -1
	}
	if o.Dir == "" {
		o.Dir = "."
	}
	r, err := Find(context.Background(), sb, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestFindIgnoreRules(t *testing.T) {
	sb, dir := testSandbox(t)
	tree(t, dir, map[string]string{
		".gitignore":          "*.log\n/build/\n!keep.log\ndocs/*.tmp\n",
		"a.log":               "",
		"keep.log":            "",
		"build/out.go":        "",
		"src/build/x.go":      "", // /build/ is anchored: this one stays
		"src/app.go":          "",
		"src/.ignore":         "gen_*\n",
		"src/gen_a.go":        "",
		"docs/a.tmp":          "",
		"docs/sub/b.tmp":      "", // docs/*.tmp does not cross '/'
		"nested/.gitignore":   "*.go\n!main.go\n",
		"nested/main.go":      "",
		"nested/util.go":      "",
		".hidden/h.go":        "",
		".git/config":         "",
		".git/info/exclude":   "excluded.txt\n",
		"excluded.txt":        "",
		"src/vendor/dep/d.go": "",
	})
	r := findPaths(t, sb, FindOptions{Types: []string{"f"}})
	want := []string{"docs/sub/b.tmp", "keep.log", "nested/main.go", "src/app.go", "src/build/x.go", "src/vendor/dep/d.go"}
	if strings.Join(*r.Paths, " ") != strings.Join(want, " ") {
		t.Errorf("got  %v\nwant %v", *r.Paths, want)
	}
	if r.Skipped.Ignored == 0 || r.Skipped.Hidden == 0 {
		t.Errorf("skips not counted: %+v", r.Skipped)
	}
	all := findPaths(t, sb, FindOptions{Types: []string{"f"}, NoIgnore: true, Hidden: true})
	for _, p := range []string{"a.log", "build/out.go", ".hidden/h.go", "src/.ignore", "excluded.txt"} {
		if !contains(*all.Paths, p) {
			t.Errorf("--no-ignore --hidden: %s missing from %v", p, *all.Paths)
		}
	}
	for _, p := range *all.Paths {
		if strings.HasPrefix(p, ".git/") {
			t.Errorf(".git must never be walked: %s", p)
		}
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func TestFindGlobsDepthTypes(t *testing.T) {
	sb, dir := testSandbox(t)
	tree(t, dir, map[string]string{"a.go": "", "b/c.go": "", "b/d/e.go": "", "b/d/f.txt": "", "l": "-> a.go"})
	cases := []struct {
		o    FindOptions
		want string
	}{
		{FindOptions{Glob: "*.go"}, "a.go b/c.go b/d/e.go"},
		{FindOptions{Glob: "b/*.go"}, "b/c.go"},
		{FindOptions{Glob: "**/*.go", MaxDepth: 2}, "a.go b/c.go"},
		{FindOptions{Types: []string{"d"}}, "b b/d"},
		{FindOptions{Types: []string{"l"}}, "l"},
		{FindOptions{Exclude: []string{"d"}}, "a.go b b/c.go l"},
		{FindOptions{Dir: "b", Glob: "{c,e}.go"}, "b/c.go b/d/e.go"},
	}
	for _, c := range cases {
		r := findPaths(t, sb, c.o)
		if got := strings.Join(*r.Paths, " "); got != c.want {
			t.Errorf("%+v: got %q want %q", c.o, got, c.want)
		}
	}
	if _, err := Find(context.Background(), sb, FindOptions{Dir: ".", Glob: "[", MaxDepth: -1}); fserr.AsError(err).Code != fserr.CodeUsage {
		t.Errorf("invalid glob: %v", err)
	}
}

// TestFindLong: -l describes each entry (a symlink as itself unless -L
// follows it) in Entries, never Paths; an entry that vanishes between the
// listing of its directory and its stat is left out and counted in
// skipped.errors.
func TestFindLong(t *testing.T) {
	sb, dir := testSandbox(t)
	tree(t, dir, map[string]string{"a.txt": "four", "b/c.txt": "seven!\n", "l": "-> a.txt", "gone.txt": "", "z.txt": ""})
	when := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, p := range []string{"a.txt", "b/c.txt", "gone.txt", "z.txt"} {
		os.Chtimes(filepath.Join(dir, p), when, when)
	}
	mt := rfc3339(when)
	cases := []struct {
		o    FindOptions
		want []FindEntry
	}{
		{FindOptions{Types: []string{"f"}, Glob: "{a,c}.txt"}, []FindEntry{{"a.txt", "file", 4, mt}, {"b/c.txt", "file", 7, mt}}},
		{FindOptions{Types: []string{"l"}}, []FindEntry{{"l", "symlink", 5, ""}}},
		{FindOptions{Follow: true, Glob: "l"}, []FindEntry{{"l", "file", 4, mt}}},
		{FindOptions{Sizes: []SizeFilter{{'+', 5}}}, []FindEntry{{"b/c.txt", "file", 7, mt}}},
	}
	for _, c := range cases {
		c.o.Long = true
		r := findPaths(t, sb, c.o)
		if r.Paths != nil || r.Entries == nil {
			t.Fatalf("%+v: paths %v, entries %v: want entries only", c.o, r.Paths, r.Entries)
		}
		got := *r.Entries
		if len(got) != len(c.want) {
			t.Fatalf("%+v: got %+v, want %+v", c.o, got, c.want)
		}
		for i, w := range c.want {
			if w.Mtime == "" {
				w.Mtime = got[i].Mtime // a symlink's own time, not set here
			}
			if got[i] != w {
				t.Errorf("%+v: entry %d is %+v, want %+v", c.o, i, got[i], w)
			}
		}
		if r.Count != int64(len(got)) || r.Skipped.Errors != 0 {
			t.Errorf("%+v: count %d, skipped %+v", c.o, r.Count, r.Skipped)
		}
	}
	if r := findPaths(t, sb, FindOptions{Types: []string{"f"}}); r.Entries != nil || r.Paths == nil {
		t.Errorf("without -l: paths %v, entries %v: want paths only", r.Paths, r.Entries)
	}

	// gone.txt is listed with its directory, then removed before its turn
	// (the sink of an earlier entry removes it): left out, counted.
	var seen []string
	r, err := Find(context.Background(), sb, FindOptions{Dir: ".", MaxDepth: 1, Types: []string{"f"}, Long: true, EntrySink: func(e FindEntry) error {
		seen = append(seen, e.Path)
		if e.Path == "a.txt" {
			return os.Remove(filepath.Join(dir, "gone.txt"))
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(seen, " ") != "a.txt z.txt" || r.Count != 2 || r.Skipped.Errors != 1 {
		t.Errorf("a vanished entry: seen %v, count %d, skipped %+v; want a.txt z.txt, 2, errors 1", seen, r.Count, r.Skipped)
	}
}

func TestFindSymlinksFollowAndLoops(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("OUTSIDE\n"), 0o644)
	sb, dir := testSandbox(t)
	tree(t, dir, map[string]string{"d/f.go": "", "d/up": "-> ..", "out": "-> " + outside, "rel_out": "-> ../" + filepath.Base(outside)})
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := findPaths(t, sb, FindOptions{Follow: true, Types: []string{"f"}})
	for _, p := range *r.Paths {
		if strings.Contains(p, "secret") {
			t.Fatalf("followed a symlink out of the root: %v", *r.Paths)
		}
	}
	if r.Skipped.Loops == 0 || r.Skipped.Denied < 2 {
		t.Errorf("want a loop and two escapes counted: %+v", r.Skipped)
	}
	g, err := Grep(context.Background(), sb, GrepOptions{Pattern: "OUTSIDE|x", Follow: true, Hidden: true, NoIgnore: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range *g.Matches {
		if m.Text == "OUTSIDE" {
			t.Fatal("grep -L read outside the root")
		}
	}
	if g.Skipped.Special != 1 {
		t.Errorf("the FIFO must be skipped, never opened: %+v", g.Skipped)
	}
}

func TestGrepNeverShowsDenied(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"ok.txt": "token\n", "secrets/k.txt": "token\n", ".env": "token\n", "link": "-> secrets"})
	p := policy.DefaultPolicy(dir)
	p.Paths.Deny = []string{"secrets/**", "**/.env"}
	sb, err := sandbox.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	g, err := Grep(context.Background(), sb, GrepOptions{Pattern: "token", Hidden: true, Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(*g.Matches) != 1 || (*g.Matches)[0].Path != "ok.txt" {
		t.Errorf("got %+v", *g.Matches)
	}
	if g.Skipped.Denied < 2 {
		t.Errorf("denied not counted: %+v", g.Skipped)
	}
	if _, err := Grep(context.Background(), sb, GrepOptions{Pattern: "token", Paths: []string{"link/k.txt"}}); fserr.AsError(err).Code != fserr.CodeDenied {
		t.Errorf("a named file through a symlink into a denied dir: %v", err)
	}
}

// TestGrepAgainstGNU compares fsbox grep with GNU grep -r on a generated
// tree (no ignore files, no hidden names, so both search the same files).
func TestGrepAgainstGNU(t *testing.T) {
	gnu, err := exec.LookPath("grep")
	if err != nil {
		t.Skip("no grep(1) on this machine")
	}
	sb, dir := testSandbox(t)
	files := map[string]string{}
	words := []string{"alpha", "Beta", "gamma", "delta_1", "EPSILON", "zeta", "the end", "x=42", "a.b", "tab\there"}
	for i := 0; i < 40; i++ {
		var b strings.Builder
		for j := 0; j < (i*7)%23; j++ {
			b.WriteString(words[(i*j+j)%len(words)])
			b.WriteString(" ")
			b.WriteString(words[(i+j*3)%len(words)])
			if j%5 == 4 {
				b.WriteString("\r")
			}
			b.WriteString("\n")
		}
		files[filepath.Join("d"+string(rune('a'+i%4)), "f"+string(rune('a'+i))+".txt")] = b.String() + "last line\n"
	}
	tree(t, dir, files)
	for _, c := range []struct {
		args []string
		o    GrepOptions
	}{
		{[]string{"-rn", "alpha"}, GrepOptions{Pattern: "alpha"}},
		{[]string{"-rni", "beta"}, GrepOptions{Pattern: "beta", IgnoreCase: true}},
		{[]string{"-rnF", "a.b"}, GrepOptions{Pattern: "a.b", Fixed: true}},
		{[]string{"-rnw", "end"}, GrepOptions{Pattern: "end", Word: true}},
		{[]string{"-rnv", "a"}, GrepOptions{Pattern: "a", Invert: true}},
		{[]string{"-rnE", "delta_[0-9]"}, GrepOptions{Pattern: "delta_[0-9]"}},
		// A "\r\n" line matches as if it ended in "\n" (rg --crlf); GNU grep
		// needs the CR spelled out for the same lines.
		{[]string{"-rnE", "zeta\r?$"}, GrepOptions{Pattern: "zeta$"}},
		{[]string{"-rnE", "^x"}, GrepOptions{Pattern: "^x"}},
	} {
		cmd := exec.Command(gnu, append(c.args, ".")...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		out, _ := cmd.Output()
		var want []string
		for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
			if l != "" {
				want = append(want, strings.TrimPrefix(l, "./"))
			}
		}
		c.o.Paths = []string{"."}
		g, err := Grep(context.Background(), sb, c.o)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range *g.Matches {
			got = append(got, m.Path+":"+strconv.FormatInt(m.Line, 10)+":"+string(m.Raw))
		}
		sort.Strings(want)
		sort.Strings(got)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("grep %v:\ngot  %d lines\nwant %d lines\nfirst got %q\nfirst want %q", c.args, len(got), len(want), first(got), first(want))
		}
	}
}

func first(l []string) string {
	if len(l) == 0 {
		return ""
	}
	return l[0]
}
