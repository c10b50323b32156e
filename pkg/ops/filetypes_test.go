//go:build unix

package ops

import (
	"bufio"
	"context"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/internal/testbin"
	"github.com/fsbox/fsbox/pkg/fserr"
)

// TestFileTypeGlobs: every glob of the table is valid, and a name matches
// a type exactly when path.Match says one of its globs matches (the
// lookups by name and suffix change nothing).
func TestFileTypeGlobs(t *testing.T) {
	names := []string{"a.c", "a.h", "a.H", "a.C", "a.cc", "x.c.in", "a.cpp", "a.hpp.in", "Makefile", "makefile", "GNUmakefile", "x.mk",
		"a.go", "a.py", "a.pyc", "a.rs", "a.js", "a.ts", "a.tsx", "README", "README.md", "x.README", "a.md", "CMakeLists.txt", "a.txt",
		"a.xml.dist", "a.dist", "Dockerfile", "x.Dockerfile.y", ".bashrc", "bashrc", "a.sh", "LICENSE", "LICENSE-MIT", "GPL-2.0", "COPYING",
		"a.1", "a.3p", "gpl-2", "gpl.txt", "x-LICENSE", "x.license", "a.S", "a.s", "Kconfig", "", "c", ".c", "a.min.js", "Cargo.lock", "x.lock", "a.d", "a"}
	for _, ft := range fileTypes {
		typ, globs := ft.Name, ft.Globs
		f, err := newTypeFilter([]string{typ}, nil)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		for _, g := range globs {
			if _, err := path.Match(goGlob(g), ""); err != nil {
				t.Errorf("%s: glob %q: %v", typ, g, err)
			}
		}
		for _, n := range names {
			want := slices.ContainsFunc(globs, func(g string) bool { ok, _ := path.Match(goGlob(g), n); return ok })
			if got := f.keep(n); got != want {
				t.Errorf("-t %s keeps %q: %v, want %v", typ, n, got, want)
			}
		}
	}
}

// TestFileTypesSorted: the table is sorted by name, each name once, as
// the lookup by name (a binary search) needs.
func TestFileTypesSorted(t *testing.T) {
	for i := 1; i < len(fileTypes); i++ {
		if a, b := fileTypes[i-1].Name, fileTypes[i].Name; a >= b {
			t.Errorf("%q before %q", a, b)
		}
	}
	for _, ft := range fileTypes {
		if globs, ok := fileTypeGlobs(ft.Name); !ok || !slices.Equal(globs, ft.Globs) {
			t.Errorf("fileTypeGlobs(%q) = %q, %v", ft.Name, globs, ok)
		}
	}
	for _, n := range []string{"", "Go", "zz", "a", "gop"} {
		if _, ok := fileTypeGlobs(n); ok {
			t.Errorf("fileTypeGlobs(%q) found", n)
		}
	}
}

// TestFileTypesAsRg: each type here has rg's default globs under the same
// name (checked against the rg on this machine, when there is one).
func TestFileTypesAsRg(t *testing.T) {
	out, err := exec.Command("rg", "--type-list").Output()
	if err != nil {
		t.Skipf("no rg here: %v", err)
	}
	rg := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		name, globs, _ := strings.Cut(sc.Text(), ": ")
		rg[name] = globs
	}
	for _, typ := range TypeList().Types {
		have, ok := rg[typ.Name]
		if !ok {
			t.Errorf("rg has no type %q", typ.Name)
			continue
		}
		globs := slices.Clone(typ.Globs)
		slices.Sort(globs)
		if got := strings.Join(globs, ", "); got != have {
			t.Errorf("%s: %s, rg: %s", typ.Name, got, have)
		}
	}
	if n := len(fileTypes); n < 40 {
		t.Errorf("only %d types", n)
	}
}

// TestTypeFilter: -t keeps a file of any type named, -T leaves out one of
// any type named (it wins over -t), and an unknown name is usage with the
// nearest name.
func TestTypeFilter(t *testing.T) {
	for _, c := range []struct {
		want, not []string
		keep      string // the names kept of the list below
	}{
		{nil, nil, "a.c a.h a.go Makefile a.txt"},
		{[]string{"c"}, nil, "a.c a.h"},
		{[]string{"c", "go"}, nil, "a.c a.h a.go"},
		{[]string{"c"}, []string{"h"}, "a.c"},
		{nil, []string{"c", "txt"}, "a.go Makefile"},
		{[]string{"make"}, nil, "Makefile"},
	} {
		f, err := newTypeFilter(c.want, c.not)
		if err != nil {
			t.Fatal(err)
		}
		var kept []string
		for _, n := range []string{"a.c", "a.h", "a.go", "Makefile", "a.txt"} {
			if f.keep(n) {
				kept = append(kept, n)
			}
		}
		if got := strings.Join(kept, " "); got != c.keep {
			t.Errorf("-t %v -T %v: kept %q, want %q", c.want, c.not, got, c.keep)
		}
	}
	for _, c := range []struct {
		want, not []string
		msg       string
	}{
		{[]string{"russt"}, nil, `type "russt" is not a file type; did you mean rust? (--type-list lists the file types)`},
		{nil, []string{"markdwn"}, `type-not "markdwn" is not a file type; did you mean markdown?`},
		{[]string{"q"}, nil, `type "q" is not a file type (--type-list`},
		{[]string{"zzzzzzzz"}, nil, `type "zzzzzzzz" is not a file type (--type-list`},
	} {
		_, err := newTypeFilter(c.want, c.not)
		if e := fserr.AsError(err); err == nil || e.Code != fserr.CodeUsage || !strings.HasPrefix(e.Msg, c.msg) {
			t.Errorf("-t %v -T %v: %v, want usage: %s", c.want, c.not, err, c.msg)
		}
	}
}

// TestFindTypes: find's -t takes fd's kinds (f, d, l) and rg's type
// names (files by name); -T leaves either out.
func TestFindTypes(t *testing.T) {
	sb, dir := testSandbox(t)
	tree(t, dir, map[string]string{
		"a.c": "", "b.h": "", "c.go": "", "d.c/": "", "d.c/e.txt": "", "link.c": "-> a.c", "Makefile": "",
	})
	for _, c := range []struct {
		want, not []string
		paths     string
	}{
		{[]string{"f"}, nil, "Makefile a.c b.h c.go d.c/e.txt"},
		{[]string{"d"}, nil, "d.c"},
		{[]string{"c"}, nil, "a.c b.h link.c"},
		{[]string{"c", "f"}, nil, "a.c b.h"},
		{[]string{"c", "go", "l"}, nil, "link.c"},
		{[]string{"go", "make"}, nil, "Makefile c.go"},
		{nil, []string{"c"}, "Makefile c.go d.c d.c/e.txt"},
		{nil, []string{"d", "l"}, "Makefile a.c b.h c.go d.c/e.txt"},
		{[]string{"c"}, []string{"h"}, "a.c link.c"},
	} {
		r := findPaths(t, sb, FindOptions{Types: c.want, TypesNot: c.not})
		if got := strings.Join(*r.Paths, " "); got != c.paths {
			t.Errorf("-t %v -T %v: %q, want %q", c.want, c.not, got, c.paths)
		}
	}
	_, err := Find(context.Background(), sb, FindOptions{Dir: ".", MaxDepth: -1, Types: []string{"dri"}})
	if e := fserr.AsError(err); err == nil || e.Code != fserr.CodeUsage || !strings.Contains(e.Msg, `"dri" is not f, d, l or a file type; did you mean`) {
		t.Errorf("-t dri: %v", err)
	}
}

// TestGrepTypes: -t and -T select walked files by type name; a file named
// on the command line is searched whatever its type (rg); what they leave
// out is counted in skipped.globbed.
func TestGrepTypes(t *testing.T) {
	sb, dir := testSandbox(t)
	tree(t, dir, map[string]string{"a.c": "x\n", "b.h": "x\n", "c.go": "x\n", "d.txt": "x\n"})
	for _, c := range []struct {
		paths     []string
		want, not []string
		files     string
		globbed   int64
	}{
		{nil, []string{"c"}, nil, "a.c b.h", 2},
		{nil, []string{"c"}, []string{"h"}, "a.c", 3},
		{nil, nil, []string{"go", "txt"}, "a.c b.h", 2},
		{[]string{".", "d.txt"}, []string{"go"}, nil, "c.go d.txt", 3},
	} {
		r, err := Grep(context.Background(), sb, GrepOptions{Pattern: "x", Paths: c.paths, FilesWithMatches: true, Types: c.want, TypesNot: c.not})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(*r.Paths, " "); got != c.files || r.Skipped.Globbed != c.globbed {
			t.Errorf("%v -t %v -T %v: %q, globbed %d; want %q, %d", c.paths, c.want, c.not, got, r.Skipped.Globbed, c.files, c.globbed)
		}
	}
	if _, err := Grep(context.Background(), sb, GrepOptions{Pattern: "x", Types: []string{"cc"}}); fserr.AsError(err).Code != fserr.CodeUsage {
		t.Errorf("-t cc: %v, want usage", err)
	}
}

// TestIgnoredNote: when ignore rules leave out everything a walk meets
// (a .gitignore of "/*" applied with --no-require-git), find and grep say
// so in a note for the text form; outside a repository that .gitignore
// does not apply, and there is no note.
func TestIgnoredNote(t *testing.T) {
	sb, dir := testSandbox(t)
	tree(t, dir, map[string]string{".gitignore": "/*\n", "Kconfig": "PM_RESUME\n", "init/Kconfig": "PM_RESUME\n"})
	if testbin.RepoAbove(dir) {
		t.Skipf("a directory above %s holds .git", dir)
	}
	f := findPaths(t, sb, FindOptions{Glob: "Kconfig"})
	g, err := Grep(context.Background(), sb, GrepOptions{Pattern: "PM_RESUME", FilesWithMatches: true})
	if err != nil || len(*f.Paths) != 2 || len(f.Outcome().Notes) != 0 || len(*g.Paths) != 2 || len(g.Outcome().Notes) != 0 {
		t.Errorf("outside a repository: find %v %q, grep %v %q, %v", *f.Paths, f.Outcome().Notes, *g.Paths, g.Outcome().Notes, err)
	}
	f = findPaths(t, sb, FindOptions{Glob: "Kconfig", NoRequireGit: true})
	g, err = Grep(context.Background(), sb, GrepOptions{Pattern: "PM_RESUME", FilesWithMatches: true, NoRequireGit: true})
	wantF := "ignore rules left out all 2 entries met in . (and 1 hidden); --no-ignore lists them"
	wantG := "ignore rules left out all 2 entries met in . (and 1 hidden); --no-ignore searches them"
	if err != nil || len(*f.Paths) != 0 || strings.Join(f.Outcome().Notes, "|") != wantF || len(*g.Paths) != 0 || strings.Join(g.Outcome().Notes, "|") != wantG {
		t.Errorf("--no-require-git: find %v %q, grep %v %q, %v", *f.Paths, f.Outcome().Notes, *g.Paths, g.Outcome().Notes, err)
	}
}
