package ops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/textio"
)

// longLineSandbox is a workdir whose policy cuts JSON lines at cut bytes.
func longLineSandbox(t *testing.T, cut int64, files map[string]string) *sandbox.Sandbox {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	p := policy.DefaultPolicy(dir)
	p.Limits.MaxLineBytes = cut
	p.Limits.MaxReadBytes = 64 << 20
	sb, err := sandbox.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

// TestLongLinesCutInJSON: JSON text stops at max_line_bytes, on a UTF-8
// boundary, and says so; the text form (Exact) gets every byte.
func TestLongLinesCutInJSON(t *testing.T) {
	long := "needle " + strings.Repeat("é", 20) // 7 + 40 bytes
	sb := longLineSandbox(t, 10, map[string]string{"f.txt": "short\n" + long + "\nafter\n", "t.tsv": "a\t" + long + "\n"})

	g, err := Grep(context.Background(), sb, GrepOptions{Pattern: "needle", Paths: []string{"f.txt"}, Before: 1, After: 1})
	if err != nil {
		t.Fatal(err)
	}
	m := (*g.Matches)[0]
	if !m.TextTruncated || m.TextBytes != len(long) || m.Text != "needle é" {
		t.Errorf("grep: text %q truncated %v bytes %d raw %d", m.Text, m.TextTruncated, m.TextBytes, len(m.Raw))
	}
	if m.ContextTruncated || strings.Join(m.Before, ",") != "short" || strings.Join(m.After, ",") != "after" {
		t.Errorf("grep context: %q %q %v", m.Before, m.After, m.ContextTruncated)
	}
	g, _ = Grep(context.Background(), sb, GrepOptions{Pattern: "after", Paths: []string{"f.txt"}, Before: 1})
	if m := (*g.Matches)[0]; !m.ContextTruncated || m.Before[0] != "needle é" {
		t.Errorf("grep: a cut context line: %q %v", m.Before, m.ContextTruncated)
	}
	g, _ = Grep(context.Background(), sb, GrepOptions{Pattern: "needle", Paths: []string{"f.txt"}, Exact: true})
	if m := (*g.Matches)[0]; m.TextTruncated || m.Text != long {
		t.Errorf("grep, exact: %q", m.Text)
	}

	s, err := Slice(context.Background(), sb, SliceOptions{Path: "f.txt"})
	if err != nil || strings.Join(s.Lines, "|") != "short|needle é|after" || !s.TextTruncated || s.CutLines != 1 {
		t.Errorf("slice: %q %+v %v", s.Lines, s.Truncation, err)
	}
	var whole []string
	_, err = Slice(context.Background(), sb, SliceOptions{Path: "f.txt", Exact: true, Sink: func(l []byte) error { whole = append(whole, string(l)); return nil }})
	if err != nil || whole[1] != long+"\n" {
		t.Errorf("slice, exact: %q %v", whole, err)
	}

	so, err := Sort(context.Background(), sb, SortOptions{Path: "f.txt"})
	if err != nil || strings.Join(so.Lines, "|") != "after|needle é|short" || so.CutLines != 1 {
		t.Errorf("sort: %q %+v %v", so.Lines, so.Truncation, err)
	}

	c, err := Cut(context.Background(), sb, CutOptions{Path: "t.tsv", Fields: "1,2"})
	if err != nil || len(c.Rows) != 1 || c.Rows[0][0] != "a" || c.Rows[0][1] != "needle é" || c.CutLines != 1 {
		t.Errorf("cut: %q %+v %v", c.Rows, c.Truncation, err)
	}
	for _, n := range []int{0, 1, 5, 6, 7, 8, 9} {
		got := cutText([]byte(long), n)
		if !utf8.Valid(got) || len(got) > n || len(got) < n-1 {
			t.Errorf("cutText(%d) = %q", n, got)
		}
	}
}

// TestLongLinesNeverHeldWhole: a line over textio.MaxLine is searched by
// grep (through a mapping), cut short in slice's JSON, and too_large
// where it would have to be printed or split whole; a run of NULs is
// binary before any buffer grows for it.
func TestLongLinesNeverHeldWhole(t *testing.T) {
	huge := strings.Repeat("x", textio.MaxLine+10)
	sb := longLineSandbox(t, 64, map[string]string{
		"a.txt":     "needle\n",
		"huge.txt":  "needle\n" + huge + "\nneedle\n",
		"z.txt":     "needle\n",
		"nul.bin":   strings.Repeat("\x00", textio.MaxLine+10),
		"quote.csv": "a,\"" + huge + "\n",
	})
	g, err := Grep(context.Background(), sb, GrepOptions{Pattern: "needle", Paths: []string{"."}, Globs: []string{"*.txt"}})
	if err != nil || g.Count != 4 {
		t.Errorf("grep tree: count %d, skipped %+v, %v", g.Count, g.Skipped, err)
	}
	g, _ = Grep(context.Background(), sb, GrepOptions{Pattern: "needle", Paths: []string{"huge.txt"}, Exact: true})
	if g.Count != 2 || (*g.Matches)[1].Line != 3 {
		t.Errorf("grep huge.txt: %+v", g)
	}
	g, _ = Grep(context.Background(), sb, GrepOptions{Pattern: "x", Paths: []string{"nul.bin"}})
	if g.Count != 0 || g.FilesSearched != 1 {
		t.Errorf("grep nul.bin: %+v", g)
	}
	s, err := Slice(context.Background(), sb, SliceOptions{Path: "huge.txt"})
	if err != nil || len(s.Lines) != 3 || len(s.Lines[1]) != 64 || s.CutLines != 1 {
		t.Errorf("slice: %d lines, %+v, %v", len(s.Lines), s.Truncation, err)
	}
	if _, err := Slice(context.Background(), sb, SliceOptions{Path: "huge.txt", Exact: true, Sink: func([]byte) error { return nil }}); fserr.AsError(err).Code != fserr.CodeTooLarge {
		t.Errorf("slice, exact: %v", err)
	}
	if _, err := Cut(context.Background(), sb, CutOptions{Path: "huge.txt", Fields: "1"}); fserr.AsError(err).Code != fserr.CodeTooLarge {
		t.Errorf("cut: %v", err)
	}
	if _, err := Cut(context.Background(), sb, CutOptions{Path: "quote.csv", Fields: "1", CSV: true}); fserr.AsError(err).Code != fserr.CodeTooLarge {
		t.Errorf("cut --csv, an open quote: %v", err)
	}
}

// TestGrepContextRing checks -B against a plain reference for many sizes
// (the ring must give the same lines in the same order), and that -A and
// -B above max_results hold at most max_results lines. On 2b5e9f7 -B kept
// its lines in a slice shifted on every line: -B 100000 over 300,000
// lines took 35 s.
func TestGrepContextRing(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		if i%37 == 5 {
			b.WriteString("needle\n")
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	text := b.String()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	sb := longLineSandbox(t, 1<<16, map[string]string{"f.txt": text})
	for _, before := range []int{1, 2, 3, 7, 36, 37, 38, 100, 500} {
		g, err := Grep(context.Background(), sb, GrepOptions{Pattern: "needle", Paths: []string{"f.txt"}, Before: before})
		if err != nil {
			t.Fatal(err)
		}
		prev := 0 // the line after the previous match: context never reaches back past it
		for _, m := range *g.Matches {
			from := max(prev, int(m.Line)-1-before)
			want := lines[from : m.Line-1]
			if strings.Join(m.Before, "|") != strings.Join(want, "|") {
				t.Errorf("-B %d, match at %d: before %q, want %q", before, m.Line, m.Before, want)
			}
			prev = int(m.Line)
		}
	}
	p := policy.DefaultPolicy(t.TempDir())
	p.Limits.MaxResults = 3
	must(t, os.WriteFile(filepath.Join(p.Workdir, "f.txt"), []byte(text), 0o644))
	small, err := sandbox.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	g, err := Grep(context.Background(), small, GrepOptions{Pattern: "needle", Paths: []string{"f.txt"}, Before: 1000, After: 1000, MaxCount: ptr(int64(1))})
	if err != nil || len((*g.Matches)[0].Before) != 3 || len((*g.Matches)[0].After) != 3 {
		t.Errorf("-A/-B 1000 under max_results 3: %+v, %v", g.Matches, err)
	}
}
