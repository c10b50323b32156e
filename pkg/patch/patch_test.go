package patch

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// fileView is a parsed File as the tests compare it: its fields and its
// hunks.
type fileView struct {
	Op               Op
	Path, MoveTo     string
	Hunks            []Hunk
	Content          []byte
	Line             int
	OldMode, NewMode string
}

func views(fs []File) []fileView {
	var vs []fileView
	for i := range fs {
		f := &fs[i]
		vs = append(vs, fileView{Op: f.Op, Path: f.Path, MoveTo: f.MoveTo, Hunks: f.Hunks(), Content: f.Content, Line: f.Line, OldMode: f.OldMode, NewMode: f.NewMode})
	}
	return vs
}

// lines joins its arguments with "\n" and adds a final newline.
func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func TestParseEnvelope(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []fileView
	}{
		{"add", lines("*** Begin Patch", "*** Add File: a/x.txt", "+one", "+", "+three", "*** End Patch"),
			[]fileView{{Op: Add, Path: "a/x.txt", Content: []byte("one\n\nthree\n"), Line: 2}}},
		{"add empty", lines("*** Begin Patch", "*** Add File: e", "*** End Patch"),
			[]fileView{{Op: Add, Path: "e", Content: []byte{}, Line: 2}}},
		{"delete", lines("", "  ", "*** Begin Patch", "*** Delete File: gone.go", "*** End Patch", "", ""),
			[]fileView{{Op: Delete, Path: "gone.go", Line: 4}}},
		{"update one hunk no header", lines("*** Begin Patch", "*** Update File: m.go", " a", "-b", "+B", " c", "*** End Patch"),
			[]fileView{{Op: Update, Path: "m.go", Line: 2, Hunks: []Hunk{{Old: []string{"a", "b", "c"}, New: []string{"a", "B", "c"}, Line: 3}}}}},
		{"update anchors eof two hunks", lines("*** Begin Patch", "*** Update File: m.go",
			"@@ class A", "@@   def f():", "-    x = 1", "+    x = 2",
			"@@", " tail", "+end", "*** End of File", "*** End Patch"),
			[]fileView{{Op: Update, Path: "m.go", Line: 2, Hunks: []Hunk{
				{Anchors: []string{"class A", "def f():"}, Old: []string{"    x = 1"}, New: []string{"    x = 2"}, Line: 3},
				{Old: []string{"tail"}, New: []string{"tail", "end"}, EOF: true, Line: 7},
			}}}},
		{"move only", lines("*** Begin Patch", "*** Update File: old", "*** Move to: new/place", "*** End Patch"),
			[]fileView{{Op: Update, Path: "old", MoveTo: "new/place", Line: 2}}},
		{"move with hunk and bare empty context", lines("*** Begin Patch", "*** Update File: old", "*** Move to: new", "@@", " a", "", "-b", "", "*** End Patch"),
			[]fileView{{Op: Update, Path: "old", MoveTo: "new", Line: 2, Hunks: []Hunk{{Old: []string{"a", "", "b"}, New: []string{"a", ""}, Line: 4}}}}},
		{"several files", lines("*** Begin Patch", "*** Add File: n", "+x", "*** Delete File: d", "*** Update File: u", "@@", "-p", "+q", "*** End Patch"),
			[]fileView{
				{Op: Add, Path: "n", Content: []byte("x\n"), Line: 2},
				{Op: Delete, Path: "d", Line: 4},
				{Op: Update, Path: "u", Line: 5, Hunks: []Hunk{{Old: []string{"p"}, New: []string{"q"}, Line: 6}}},
			}},
		{"crlf patch", strings.ReplaceAll(lines("*** Begin Patch", "*** Update File: u", "@@ f", "-p", "+q", "*** End Patch"), "\n", "\r\n"),
			[]fileView{{Op: Update, Path: "u", Line: 2, Hunks: []Hunk{{Anchors: []string{"f"}, Old: []string{"p"}, New: []string{"q"}, CRLF: true, Line: 3}}}}},
		{"unified header inside envelope", lines("*** Begin Patch", "*** Update File: u", "@@ -4,1 +4,1 @@", "-p", "+q", "*** End Patch"),
			[]fileView{{Op: Update, Path: "u", Line: 2, Hunks: []Hunk{{OldStart: 4, HasRange: true, Old: []string{"p"}, New: []string{"q"}, Line: 3}}}}},
		{"no final newline", "*** Begin Patch\n*** Delete File: d\n*** End Patch",
			[]fileView{{Op: Delete, Path: "d", Line: 2}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := views(got); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseUnified(t *testing.T) {
	gitDiff := lines(
		"commit 1234",
		"Author: someone",
		"",
		"    Subject line",
		"",
		"diff --git a/src/main.go b/src/main.go",
		"index 83db48f..bf269f4 100644",
		"--- a/src/main.go",
		"+++ b/src/main.go",
		"@@ -1,3 +1,3 @@ package main",
		" a",
		"-b",
		"+B",
		" c",
		"@@ -10,2 +10,3 @@ func f() {",
		" x",
		" y",
		"+z",
		"diff --git a/old name.txt b/new name.txt",
		"similarity index 90%",
		"rename from old name.txt",
		"rename to new name.txt",
		"index 1111111..2222222 100644",
		"--- a/old name.txt",
		"+++ b/new name.txt",
		"@@ -1 +1 @@",
		"-v1",
		"+v2",
		"diff --git a/r1 b/r2",
		"similarity index 100%",
		"rename from r1",
		"rename to r2",
		"diff --git a/added b/added",
		"new file mode 100755",
		"index 0000000..e69de29",
		"--- /dev/null",
		"+++ b/added",
		"@@ -0,0 +1,2 @@",
		"+first",
		"+last",
		"\\ No newline at end of file",
		"diff --git a/empty b/empty",
		"new file mode 100644",
		"index 0000000..e69de29",
		"diff --git a/removed b/removed",
		"deleted file mode 100644",
		"index e69de29..0000000",
		"--- a/removed",
		"+++ /dev/null",
		"@@ -1,2 +0,0 @@",
		"-p",
		"-q",
		"diff --git a/noeol b/noeol",
		"index 1..2 100644",
		"--- a/noeol",
		"+++ b/noeol",
		"@@ -1,2 +1,2 @@",
		" keep",
		"-old",
		"\\ No newline at end of file",
		"+new",
		"diff --git a/sh b/sh",
		"old mode 100644",
		"new mode 100755",
		"-- ",
		"2.43.0",
	)
	got, err := Parse([]byte(gitDiff))
	if err != nil {
		t.Fatal(err)
	}
	want := []fileView{
		{Op: Update, Path: "src/main.go", Line: 6, Hunks: []Hunk{
			{OldStart: 1, HasRange: true, Heading: "package main", Old: []string{"a", "b", "c"}, New: []string{"a", "B", "c"}, Line: 10},
			{OldStart: 10, HasRange: true, Heading: "func f() {", Old: []string{"x", "y"}, New: []string{"x", "y", "z"}, Line: 15},
		}},
		{Op: Update, Path: "old name.txt", MoveTo: "new name.txt", Line: 19, Hunks: []Hunk{
			{OldStart: 1, HasRange: true, Old: []string{"v1"}, New: []string{"v2"}, Line: 26},
		}},
		{Op: Update, Path: "r1", MoveTo: "r2", Line: 29},
		{Op: Add, Path: "added", Content: []byte("first\nlast"), Line: 33, NewMode: "100755"},
		{Op: Add, Path: "empty", Content: []byte{}, Line: 42, NewMode: "100644"},
		{Op: Delete, Path: "removed", Line: 45, OldMode: "100644"},
		{Op: Update, Path: "noeol", Line: 53, Hunks: []Hunk{
			{OldStart: 1, HasRange: true, Old: []string{"keep", "old"}, New: []string{"keep", "new"}, OldNoEOL: true, Line: 57},
		}},
		{Op: Update, Path: "sh", Line: 62, OldMode: "100644", NewMode: "100755"},
	}
	if got := views(got); !reflect.DeepEqual(got, want) {
		for i := range max(len(got), len(want)) {
			var g, w any
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("file %d:\ngot  %+v\nwant %+v", i, g, w)
			}
		}
	}
}

func TestParseUnifiedForms(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []fileView
	}{
		{"diff -u without git headers", lines(
			"diff -u x.c.orig x.c",
			"--- x.c.orig\t2024-01-01 10:00:00.000000000 +0000",
			"+++ x.c\t2024-01-02 10:00:00.000000000 +0000",
			"@@ -2,2 +2,2 @@",
			" k",
			"-o",
			"+n",
			"Only in dir: other",
			"--- dir/y\t2024-01-01",
			"+++ dir/y\t2024-01-02",
			"@@ -5,0 +6 @@",
			"+ins",
		), []fileView{
			{Op: Update, Path: "x.c", Line: 2, Hunks: []Hunk{{OldStart: 2, HasRange: true, Old: []string{"k", "o"}, New: []string{"k", "n"}, Line: 4}}},
			{Op: Update, Path: "dir/y", Line: 9, Hunks: []Hunk{{OldStart: 5, HasRange: true, New: []string{"ins"}, Line: 11}}},
		}},
		{"a/ b/ stripped only when both carry them", lines(
			"--- a/p",
			"+++ c/p",
			"@@ -1 +1 @@",
			"-1",
			"+2",
		), []fileView{{Op: Update, Path: "c/p", Line: 1, Hunks: []Hunk{{OldStart: 1, HasRange: true, Old: []string{"1"}, New: []string{"2"}, Line: 3}}}}},
		{"plain new file keeps b/ without git", lines(
			"--- /dev/null",
			"+++ b/new",
			"@@ -0,0 +1 @@",
			"+x",
		), []fileView{{Op: Add, Path: "b/new", Content: []byte("x\n"), Line: 1}}},
		{"no-newline on both sides via context", lines(
			"--- a/f",
			"+++ b/f",
			"@@ -1,2 +1,2 @@",
			"-x",
			"+y",
			" z",
			"\\ No newline at end of file",
		), []fileView{{Op: Update, Path: "f", Line: 1, Hunks: []Hunk{{OldStart: 1, HasRange: true, Old: []string{"x", "z"}, New: []string{"y", "z"}, OldNoEOL: true, NewNoEOL: true, Line: 3}}}}},
		{"quoted names, empty context line, crlf", strings.ReplaceAll(lines(
			`diff --git "a/sp\303\244ce" "b/sp\303\244ce"`,
			`--- "a/sp\303\244ce"`,
			`+++ "b/sp\303\244ce"`,
			"@@ -1,3 +1,2 @@",
			" a",
			"",
			"-c",
		), "\n", "\r\n"), []fileView{{Op: Update, Path: "späce", Line: 1, Hunks: []Hunk{{OldStart: 1, HasRange: true, Old: []string{"a", "", "c"}, New: []string{"a", ""}, CRLF: true, Line: 4}}}}},
		{"removed line looking like a header", lines(
			"--- a/f",
			"+++ b/f",
			"@@ -1,2 +1,1 @@",
			"--- x",
			" y",
		), []fileView{{Op: Update, Path: "f", Line: 1, Hunks: []Hunk{{OldStart: 1, HasRange: true, Old: []string{"-- x", "y"}, New: []string{"y"}, Line: 3}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := views(got); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	env := func(ls ...string) string {
		return lines(append(append([]string{"*** Begin Patch"}, ls...), "*** End Patch")...)
	}
	tests := []struct {
		name string
		in   string
		line int
		msg  string // substring of Error()
	}{
		{"empty", "", 0, "empty patch"},
		{"blank", "\n  \n", 0, "empty patch"},
		{"empty envelope", env(), 2, "empty patch"},
		{"prose only", "hello\nworld\n", 0, "no patch found"},
		{"prose before envelope", lines("Here is the patch:", "*** Begin Patch", "*** Delete File: x", "*** End Patch"), 2, "must start with it"},
		{"missing end", lines("*** Begin Patch", "*** Delete File: x"), 2, `missing "*** End Patch"`},
		{"text after end", env("*** Delete File: x") + "trailing\n", 4, `text after "*** End Patch"`},
		{"unknown op", env("*** Delete File: a", "", "", "", "*** Frobnicate File: x"), 6, `line 6: unknown operation "*** Frobnicate File: x"`},
		{"not an op", env("hello"), 2, "expected a file operation"},
		{"bad hunk line", env("*** Update File: a", "@@", "x"), 4, "line 4: hunk line must start with ' ', '+' or '-'"},
		{"add with hunk", env("*** Add File: a", "@@", "+x"), 3, "only '+' lines"},
		{"add with bare line", env("*** Add File: a", "+x", "y"), 4, "must start with '+'"},
		{"update without hunks", env("*** Update File: a"), 2, "has no hunks"},
		{"delete with content", env("*** Delete File: a", "-x"), 3, "takes no content"},
		{"path empty", env("*** Add File:   "), 2, "path empty"},
		{"move path empty", env("*** Update File: a", "*** Move to: "), 3, "path empty"},
		{"same path twice", env("*** Delete File: a", "*** Add File: a", "+x"), 3, "the same path twice"},
		{"move onto other path", env("*** Delete File: a", "*** Update File: b", "*** Move to: a"), 3, "the same path twice"},
		{"header without lines", env("*** Update File: a", "@@ f"), 3, "no lines after it"},
		{"context only", env("*** Update File: a", "@@", " x"), 3, "no '+' or '-' lines"},
		{"misplaced move", env("*** Update File: a", "@@", "-x", "*** Move to: b"), 5, "must directly follow"},
		{"misplaced eof", env("*** Update File: a", "*** End of File"), 3, "must come right after"},
		{"unified short old", lines("--- a/f", "+++ b/f", "@@ -1,3 +1,3 @@", " a", "-b", "+c"), 3, "line 3: unified hunk says 3 old lines but has 2"},
		{"unified short new", lines("--- a/f", "+++ b/f", "@@ -1,1 +1,2 @@", "-b", "+c", "x"), 3, "says 2 new lines but has 1"},
		{"unified long", lines("--- a/f", "+++ b/f", "@@ -1 +1 @@", "-b", "+c", "+d"), 3, "says 1 new lines but has more"},
		{"unified bad header", lines("--- a/f", "+++ b/f", "@@ -x +1 @@", "-b"), 3, "bad unified hunk header"},
		{"unified no hunks", lines("--- a/f", "+++ b/f", "text"), 1, "with no"},
		{"unified same path twice", lines("--- a/f", "+++ b/f", "@@ -1 +1 @@", "-b", "+c", "--- a/f", "+++ b/f", "@@ -3 +3 @@", "-b", "+c"), 6, "the same path twice"},
		{"unified new file with old lines", lines("--- /dev/null", "+++ b/f", "@@ -1 +1 @@", "-b", "+c"), 3, "has old lines"},
		{"unified deleted file with new lines", lines("--- a/f", "+++ /dev/null", "@@ -1 +1 @@", "-b", "+c"), 3, "has new lines"},
		{"binary", lines("diff --git a/x b/x", "index 1..2 100644", "Binary files a/x and b/x differ"), 3, "binary"},
		{"copy", lines("diff --git a/x b/y", "similarity index 100%", "copy from x", "copy to y"), 3, "copies"},
		{"git without change", lines("diff --git a/x b/x", "index 1..2 100644"), 1, "has no hunks"},
		{"unified path empty", lines("--- \t", "+++ \t", "@@ -1 +1 @@", "-b", "+c"), 1, "path empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files, err := Parse([]byte(tc.in))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %+v, %v; want a *ParseError", files, err)
			}
			if pe.Line != tc.line || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("got line %d %q, want line %d and %q", pe.Line, err, tc.line, tc.msg)
			}
		})
	}
}

func mustParse(t *testing.T, s string) []File {
	t.Helper()
	fs, err := Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestApply(t *testing.T) {
	// envHunks parses an envelope Update of one file and returns its hunks.
	envHunks := func(t *testing.T, ls ...string) []Hunk {
		t.Helper()
		all := append([]string{"*** Begin Patch", "*** Update File: f"}, ls...)
		return mustParse(t, lines(append(all, "*** End Patch")...))[0].Hunks()
	}
	uniHunks := func(t *testing.T, ls ...string) []Hunk {
		t.Helper()
		return mustParse(t, lines(append([]string{"--- a/f", "+++ b/f"}, ls...)...))[0].Hunks()
	}
	tests := []struct {
		name    string
		content string
		hunks   func(t *testing.T) []Hunk
		want    string
		matched []string
	}{
		{"replace middle", "a\nb\nc\n", func(t *testing.T) []Hunk { return envHunks(t, " a", "-b", "+B", " c") }, "a\nB\nc\n", []string{"exact"}},
		{"delete only", "a\nb\nc\n", func(t *testing.T) []Hunk { return envHunks(t, "-b") }, "a\nc\n", []string{"exact"}},
		{"start of file", "a\nb\n", func(t *testing.T) []Hunk { return envHunks(t, "+0", " a") }, "0\na\nb\n", []string{"exact"}},
		{"end of file eof", "x\na\nx\n", func(t *testing.T) []Hunk { return envHunks(t, " x", "+y", "*** End of File") }, "x\na\nx\ny\n", []string{"exact"}},
		{"pure insert appends", "a\n", func(t *testing.T) []Hunk { return envHunks(t, "+b", "+c") }, "a\nb\nc\n", []string{"exact"}},
		{"pure insert after anchor", "f\ng\nh\n", func(t *testing.T) []Hunk { return envHunks(t, "@@ g", "+new") }, "f\ng\nnew\nh\n", []string{"exact"}},
		{"insert into empty file", "", func(t *testing.T) []Hunk { return envHunks(t, "+a", "+b") }, "a\nb\n", []string{"exact"}},
		{"multiple hunks", "1\n2\n3\n4\n5\n6\n", func(t *testing.T) []Hunk {
			return envHunks(t, "@@", "-2", "+two", "@@", " 5", "-6", "+six")
		}, "1\ntwo\n3\n4\n5\nsix\n", []string{"exact", "exact"}},
		{"keep missing final newline", "a\nb", func(t *testing.T) []Hunk { return envHunks(t, "-a", "+A") }, "A\nb", []string{"exact"}},
		{"keep missing final newline at end", "a\nb", func(t *testing.T) []Hunk { return envHunks(t, " b", "+c") }, "a\nb\nc", []string{"exact"}},
		{"delete last line keeps no-newline state", "a\nb", func(t *testing.T) []Hunk { return envHunks(t, " a", "-b") }, "a", []string{"exact"}},
		{"crlf file stays crlf", "a\r\nb\r\nc\r\n", func(t *testing.T) []Hunk { return envHunks(t, " a", "-b", "+B", "+C", " c") }, "a\r\nB\r\nC\r\nc\r\n", []string{"eol"}},
		{"crlf patch on crlf file is exact", "a\r\nb\r\n", func(t *testing.T) []Hunk {
			return mustParse(t, strings.ReplaceAll(lines("*** Begin Patch", "*** Update File: f", " a", "-b", "+c", "*** End Patch"), "\n", "\r\n"))[0].Hunks()
		}, "a\r\nc\r\n", []string{"exact"}},
		{"mostly lf file", "a\r\nb\nc\n", func(t *testing.T) []Hunk { return envHunks(t, " a", "+x") }, "a\r\nx\nb\nc\n", []string{"eol"}},
		{"bom kept", "\xef\xbb\xbfa\nb\n", func(t *testing.T) []Hunk { return envHunks(t, "-a", "+A") }, "\xef\xbb\xbfA\nb\n", []string{"exact"}},
		{"unified bom as text of line 1", "\xef\xbb\xbfa\nb\n", func(t *testing.T) []Hunk {
			return uniHunks(t, "@@ -1,2 +1,2 @@", "-\xef\xbb\xbfa", "+\xef\xbb\xbfA", " b")
		}, "\xef\xbb\xbfA\nb\n", []string{"exact"}},
		{"unified bom dropped", "\xef\xbb\xbfa\nb\n", func(t *testing.T) []Hunk {
			return uniHunks(t, "@@ -1 +1 @@", "-\xef\xbb\xbfa", "+a")
		}, "a\nb\n", []string{"exact"}},
		{"unified bom kept by a later hunk", "\xef\xbb\xbfa\nb\nc\n", func(t *testing.T) []Hunk {
			return uniHunks(t, "@@ -3 +3 @@", "-c", "+C")
		}, "\xef\xbb\xbfa\nb\nC\n", []string{"exact"}},
		{"trailing whitespace", "a  \nb\t\nc\n", func(t *testing.T) []Hunk { return envHunks(t, " a", "-b", "+B", " c") }, "a  \nB\nc\n", []string{"trailing_whitespace"}},
		{"exact beats tolerant", "a \nb\na\nb\n", func(t *testing.T) []Hunk { return envHunks(t, " a", "-b", "+X") }, "a \nb\na\nX\n", []string{"exact"}},
		{"rename only has no hunks", "x\n", func(t *testing.T) []Hunk { return nil }, "x\n", []string{}},
		{"nested anchors decide", "class A\n  def f\n    x\nclass B\n  def f\n    x\n", func(t *testing.T) []Hunk {
			return envHunks(t, "@@ class B", "@@ def f", "-    x", "+    y")
		}, "class A\n  def f\n    x\nclass B\n  def f\n    y\n", []string{"exact"}},
		{"anchor then first match", "k\nx\nk\nx\n", func(t *testing.T) []Hunk { return envHunks(t, "@@ k", "-x", "+y") }, "k\ny\nk\nx\n", []string{"exact"}},
		{"unified old start decides", "x\nm\nx\nm\nx\n", func(t *testing.T) []Hunk { return uniHunks(t, "@@ -3,1 +3,1 @@", "-x", "+X") }, "x\nm\nX\nm\nx\n", []string{"exact"}},
		{"unified offset", "n\nn\na\nb\n", func(t *testing.T) []Hunk { return uniHunks(t, "@@ -1,2 +1,2 @@", " a", "-b", "+c") }, "n\nn\na\nc\n", []string{"exact"}},
		{"unified insert at start -0,0", "a\n", func(t *testing.T) []Hunk { return uniHunks(t, "@@ -0,0 +1 @@", "+z") }, "z\na\n", []string{"exact"}},
		{"unified insert after line", "a\nb\nc\n", func(t *testing.T) []Hunk { return uniHunks(t, "@@ -2,0 +3 @@", "+z") }, "a\nb\nz\nc\n", []string{"exact"}},
		{"unified remove newline", "a\nb\n", func(t *testing.T) []Hunk {
			return uniHunks(t, "@@ -2 +2 @@", "-b", "+b", "\\ No newline at end of file")
		}, "a\nb", []string{"exact"}},
		{"unified add newline", "a\nb", func(t *testing.T) []Hunk {
			return uniHunks(t, "@@ -2 +2 @@", "-b", "\\ No newline at end of file", "+b")
		}, "a\nb\n", []string{"exact"}},
		{"unified delete last no-eol line", "a\nb", func(t *testing.T) []Hunk {
			return uniHunks(t, "@@ -1,2 +1 @@", " a", "-b", "\\ No newline at end of file")
		}, "a\n", []string{"exact"}},
		{"unified both no-eol", "a\nb", func(t *testing.T) []Hunk {
			return uniHunks(t, "@@ -1,2 +1,2 @@", "-a", "+A", " b", "\\ No newline at end of file")
		}, "A\nb", []string{"exact"}},
		{"context keeps its whitespace and ending", "a \r\nb\nc\n", func(t *testing.T) []Hunk { return envHunks(t, " a", "-b", "+B") }, "a \r\nB\nc\n", []string{"eol"}},
		{"levels per hunk", "a\nb \nc\r\nd\n", func(t *testing.T) []Hunk {
			return envHunks(t, "@@", "-a", "+A", "@@", "-b", "+B", "@@", "-c", "+C")
		}, "A\nB\nC\nd\n", []string{"exact", "trailing_whitespace", "eol"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Apply([]byte(tc.content), tc.hunks(t))
			if err != nil {
				t.Fatal(err)
			}
			if string(r.Content) != tc.want {
				t.Errorf("got %q, want %q", r.Content, tc.want)
			}
			if !reflect.DeepEqual(r.Matched, tc.matched) || r.Replacements != len(tc.matched) {
				t.Errorf("matched %v (%d), want %v", r.Matched, r.Replacements, tc.matched)
			}
		})
	}
}

func TestApplyAddContentRoundTrip(t *testing.T) {
	// An envelope Add's content applied as a single insertion hunk to an
	// empty file gives the same bytes.
	fs := mustParse(t, lines("*** Begin Patch", "*** Add File: n", "+a", "+b", "*** End Patch"))
	r, err := Apply(nil, []Hunk{{New: []string{"a", "b"}}})
	if err != nil || string(r.Content) != string(fs[0].Content) {
		t.Fatalf("%q %v vs %q", r.Content, err, fs[0].Content)
	}
}

func TestParseUnifiedCRLF(t *testing.T) {
	// A new CRLF file keeps its endings; a line marked "\ No newline"
	// has none, so it does not make a CRLF hunk LF.
	fs := mustParse(t, "--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+a\r\n+b\n\\ No newline at end of file\n")
	if got := string(fs[0].Content); got != "a\r\nb" {
		t.Errorf("added content %q, want %q", got, "a\r\nb")
	}
	fs = mustParse(t, "--- a/f\n+++ b/f\n@@ -1 +1,2 @@\n-a\n\\ No newline at end of file\n+b\r\n+a\n\\ No newline at end of file\n")
	if !fs[0].Hunks()[0].CRLF {
		t.Errorf("hunk CRLF false, want true")
	}
	r, err := Apply([]byte("a"), fs[0].Hunks())
	if err != nil || string(r.Content) != "b\r\na" {
		t.Errorf("applied %q %v, want %q", r.Content, err, "b\r\na")
	}
}

func TestApplyErrors(t *testing.T) {
	t.Run("ambiguous", func(t *testing.T) {
		_, err := Apply([]byte("x\ny\nx\ny\nx\n"), []Hunk{{Old: []string{"x"}, New: []string{"z"}}})
		var ae *AmbiguousError
		if !errors.As(err, &ae) || ae.Hunk != 0 || !reflect.DeepEqual(ae.Lines, []int{1, 3, 5}) {
			t.Fatalf("got %v", err)
		}
		if !strings.Contains(err.Error(), "lines 1, 3, 5") {
			t.Errorf("message %q", err)
		}
	})
	t.Run("ambiguous second hunk after the first", func(t *testing.T) {
		_, err := Apply([]byte("a\nx\nx\nx\n"), []Hunk{{Old: []string{"a"}, New: []string{"b"}}, {Old: []string{"x"}, New: []string{"z"}}})
		var ae *AmbiguousError
		if !errors.As(err, &ae) || ae.Hunk != 1 || !reflect.DeepEqual(ae.Lines, []int{2, 3, 4}) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("not found with closest", func(t *testing.T) {
		content := "func f() {\n\tif x {  \n\t\treturn\r\n\t}\n}\n"
		_, err := Apply([]byte(content), []Hunk{{Old: []string{"if x {", "    return", "}"}, New: []string{"x"}, Line: 9}})
		var nf *NotFoundError
		if !errors.As(err, &nf) || nf.Hunk != 0 {
			t.Fatalf("got %v", err)
		}
		want := "2| →if x {··\n3| →→return␍\n4| →}"
		if nf.Closest != want {
			t.Errorf("closest %q, want %q", nf.Closest, want)
		}
		if !strings.Contains(nf.Msg, "hunk 1 (patch line 9)") {
			t.Errorf("msg %q", nf.Msg)
		}
	})
	t.Run("no leading whitespace tolerance", func(t *testing.T) {
		_, err := Apply([]byte("  a\n"), []Hunk{{Old: []string{"a"}, New: []string{"b"}}})
		var nf *NotFoundError
		if !errors.As(err, &nf) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("eof must end at last line", func(t *testing.T) {
		_, err := Apply([]byte("a\nb\n"), []Hunk{{Old: []string{"a"}, New: []string{"c"}, EOF: true}})
		var nf *NotFoundError
		if !errors.As(err, &nf) || !strings.Contains(nf.Msg, "at the end of the file") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("anchor not found", func(t *testing.T) {
		_, err := Apply([]byte("a\nb\n"), []Hunk{{Anchors: []string{"zz"}, Old: []string{"a"}, New: []string{"c"}}})
		var nf *NotFoundError
		if !errors.As(err, &nf) || !strings.Contains(nf.Msg, `anchor "zz"`) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("hunks out of order", func(t *testing.T) {
		_, err := Apply([]byte("a\nb\n"), []Hunk{{Old: []string{"b"}, New: []string{"B"}}, {Old: []string{"a"}, New: []string{"A"}}})
		var nf *NotFoundError
		if !errors.As(err, &nf) || nf.Hunk != 1 || nf.Closest != "1| a" {
			t.Fatalf("got %#v", err)
		}
	})
}

func TestVisible(t *testing.T) {
	if got := Visible("\ta b \t\r"); got != "→a b·→␍" {
		t.Errorf("got %q", got)
	}
}

// TestParseLarge guards against superlinear parsing: inputs of 200k lines
// in shapes that stress each loop must parse (or fail) quickly.
func TestParseLarge(t *testing.T) {
	const n = 200000
	var env, uni, prose strings.Builder
	env.WriteString("*** Begin Patch\n*** Update File: f\n")
	uni.WriteString("--- a/f\n+++ b/f\n@@ -1," + itoa(n) + " +1," + itoa(n) + " @@\n")
	for range n {
		env.WriteString("@@ x\n")
		uni.WriteString(" x\n")
		prose.WriteString("--- \n")
	}
	env.WriteString("-y\n*** End Patch\n")
	for _, in := range []string{env.String(), uni.String(), prose.String()} {
		_, _ = Parse([]byte(in))
	}
	fs, err := Parse([]byte(env.String()))
	if err != nil || len(fs[0].Hunks()[0].Anchors) != n {
		t.Fatal(err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// A hostile file of equal lines against a long hunk is bounded work: the
// call ends (LimitError or NotFoundError), never in lines × hunk lines.
func TestApplyBoundedWork(t *testing.T) {
	content := []byte(strings.Repeat("x\n", 200000))
	old := make([]string, 5000)
	for i := range old {
		old[i] = "x"
	}
	old[len(old)-1] = "y"
	_, err := Apply(content, []Hunk{{Old: old, New: []string{"z"}}})
	var le *LimitError
	var nf *NotFoundError
	if !errors.As(err, &le) && !errors.As(err, &nf) {
		t.Fatalf("Apply: %v, want a LimitError or NotFoundError", err)
	}
}
