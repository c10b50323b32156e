package ops

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/textio"
)

// refGrep is what grep must find in data: for each selected line, its
// number, its byte length and the column of the first match (0 with -v).
func refGrep(data []byte, re *regexp.Regexp, invert bool) []string {
	var out []string
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	for i, l := range lines {
		loc := re.FindIndex(l)
		if (loc != nil) == invert {
			continue
		}
		col := 0
		if loc != nil {
			col = loc[0] + 1
		}
		out = append(out, fmt.Sprintf("%d:%d:%d", i+1, len(l), col))
	}
	return out
}

// TestGrepNoLineSkipped searches lines far longer than any buffer grep
// keeps, in every way it reads a file: a long line through a mapping (the
// read path), passed as a stream's (a literal), past the mapping's bound
// (geometry huge), and through mapped chunks whose windows grow to reach
// a line's end. Each selected line is found, with its number, whole
// length and column, and the text form gets a file's line whole. (Lines
// past 16 MiB, which d92f94c skipped, are in grep_longline.txtar: their
// paths are these, at other sizes; this test keeps to sizes the race
// detector searches quickly.)
func TestGrepNoLineSkipped(t *testing.T) {
	const long = 2<<20 + 1000 // past keptBuf (mapped, never copied) and past the small geometry's huge
	x := func(n int) string { return strings.Repeat("x", n) }
	data := []byte("first needle\n" + x(long) + "needle" + x(100) + "\nmiddle\n" + x(long+7) + "\n" +
		"né" + x(long) + "needle\nlast line needle")
	sb, dir := testSandbox(t)
	must(t, os.WriteFile(filepath.Join(dir, "f.txt"), data, 0o644))
	tiny := mapGeometry{min: 1 << 20, chunk: 1 << 20, reach: 64 << 10, piece: 256 << 10, huge: 2 << 20}
	for _, tc := range []struct {
		pattern string
		fixed   bool
		invert  bool
		ref     string
	}{
		{pattern: "needle", fixed: true, ref: "needle"},
		{pattern: "ne+dle$", ref: "ne+dle$"},
		{pattern: "^x+$", ref: "^x+$"},
		{pattern: "needle", fixed: true, invert: true, ref: "needle"},
		{pattern: "é", ref: "é"},
	} {
		want := refGrep(data, regexp.MustCompile(tc.ref), tc.invert)
		for _, geom := range []*mapGeometry{nil, &tiny} {
			name := fmt.Sprintf("%s invert=%v chunks=%v", tc.pattern, tc.invert, geom != nil)
			o := GrepOptions{Pattern: tc.pattern, Fixed: tc.fixed, Invert: tc.invert, Paths: []string{"f.txt"}, geom: geom}
			g, err := Grep(context.Background(), sb, o)
			if err != nil && !strings.Contains(err.Error(), "no match") {
				t.Fatalf("%s: %v", name, err)
			}
			var got []string
			for _, m := range *g.Matches {
				n := len(m.Text)
				if m.TextTruncated {
					n = m.TextBytes
				}
				got = append(got, fmt.Sprintf("%d:%d:%d", m.Line, n, m.Column))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) || g.Count != int64(len(want)) {
				t.Errorf("%s:\ngot  %v (count %d)\nwant %v", name, got, g.Count, want)
			}
			o.Count = true
			if g, _ := Grep(context.Background(), sb, o); g.Count != int64(len(want)) {
				t.Errorf("%s -c: %d, want %d", name, g.Count, len(want))
			}
			// The text form's sink gets each line whole, from the mapping.
			o.Count, o.Exact = false, true
			var raws []int
			o.Sink = func(fr *FileResult) error {
				for _, m := range fr.Matches {
					raws = append(raws, len(m.Raw))
				}
				return nil
			}
			if _, err := Grep(context.Background(), sb, o); err != nil && !strings.Contains(err.Error(), "no match") {
				t.Fatal(err)
			}
			for i, w := range want {
				var line, n, col int
				fmt.Sscanf(w, "%d:%d:%d", &line, &n, &col)
				if i >= len(raws) || raws[i] != n {
					t.Errorf("%s: the text form's line %d has %v bytes, want %d", name, line, raws, n)
					break
				}
			}
		}
	}
	// Context lines around a long line.
	g, err := Grep(context.Background(), sb, GrepOptions{Pattern: "middle", Paths: []string{"f.txt"}, Before: 1, After: 1})
	if err != nil || len(*g.Matches) != 1 || !(*g.Matches)[0].ContextTruncated || len((*g.Matches)[0].Before) != 1 || len((*g.Matches)[0].After) != 1 {
		t.Errorf("context around long lines: %+v %v", g.Matches, err)
	}
}

// TestGrepStreamLongLine: on a stream, a line over textio.MaxLine is
// searched as it passes, in bounded memory: a match past the part kept is
// found (literal and regexp, a rune split between reads joined), counted
// and given cut, with its whole length, its column and a note.
func TestGrepStreamLongLine(t *testing.T) {
	head := strings.Repeat("é", textio.MaxLine/2) // two bytes a rune: reads end mid-rune
	line := head + "xyz" + strings.Repeat("a", 3<<20) + "neeedle" + strings.Repeat("b", 1000)
	data := "before\n" + line + "\nafter needle\n"
	stdin := func(n int) *sandbox.Sandbox {
		sb, _ := testSandbox(t)
		sb.SetStdin(&chunkyReader{data: []byte(data), n: n})
		return sb
	}
	for _, tc := range []struct {
		pattern string
		fixed   bool
		col     int
	}{
		{"neeedle", true, len(head) + 3 + 3<<20 + 1},
		{"éxyz", false, len(head) - 1},
		{`b+$`, false, len(line) - 1000 + 1},
	} {
		g, err := Grep(context.Background(), stdin(1<<20+1), GrepOptions{Pattern: tc.pattern, Fixed: tc.fixed, Paths: []string{sandbox.StdinPath}})
		if err != nil {
			t.Fatalf("%s: %v", tc.pattern, err)
		}
		ms := *g.Matches
		if len(ms) == 0 || ms[0].Line != 2 || !ms[0].TextTruncated || ms[0].TextBytes != len(line) || ms[0].Column != tc.col {
			t.Errorf("%s: %+v", tc.pattern, ms)
		}
		if len(g.notes) != 0 {
			t.Errorf("%s: JSON says the cut itself, yet notes %q", tc.pattern, g.notes)
		}
	}
	// The text form prints the kept part whole and says so.
	var raw int
	o := GrepOptions{Pattern: "neeedle", Paths: []string{sandbox.StdinPath}, Exact: true, Sink: func(fr *FileResult) error {
		for _, m := range fr.Matches {
			raw = len(m.Raw)
		}
		return nil
	}}
	g, err := Grep(context.Background(), stdin(1<<20), o)
	if err != nil || len(g.notes) != 1 || !strings.Contains(g.notes[0], "line 2") || raw < textio.MaxLine-3 || raw > textio.MaxLine {
		t.Errorf("text form: %d bytes kept, notes %q, %v", raw, g.notes, err)
	}
	g, err = Grep(context.Background(), stdin(1<<20), GrepOptions{Pattern: "needle", Fixed: true, Count: true, Paths: []string{sandbox.StdinPath}})
	if err != nil || g.Count != 1 {
		t.Errorf("-c: %d %v", g.Count, err)
	}
	g, err = Grep(context.Background(), stdin(1<<20), GrepOptions{Pattern: "neeedle", Invert: true, Paths: []string{sandbox.StdinPath}})
	if err != nil || g.Count != 2 {
		t.Errorf("-v: %d %v", g.Count, err)
	}
}

// chunkyReader gives data n bytes a read, as a pipe may.
type chunkyReader struct {
	data []byte
	n    int
}

func (r *chunkyReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.data)
	r.data = r.data[k:]
	return k, nil
}

// TestGrepNamedBinary: a binary file named explicitly is searched; its
// matches say where (line) but not what; a walked one is skipped.
func TestGrepNamedBinary(t *testing.T) {
	sb, dir := testSandbox(t)
	must(t, os.WriteFile(filepath.Join(dir, "b.bin"), []byte("needle one\x00\nnone\nneedle two needle\n"), 0o644))
	g, err := Grep(context.Background(), sb, GrepOptions{Pattern: "needle", OnlyMatching: true, Paths: []string{"b.bin"}})
	if err != nil || g.Count != 2 || len(*g.Matches) != 2 || !(*g.Matches)[1].Binary || (*g.Matches)[1].Line != 3 || (*g.Matches)[1].Text != "" {
		t.Errorf("named: %+v %v", g.Matches, err)
	}
	if len(g.notes) != 1 || g.notes[0] != "b.bin: binary file matches" {
		t.Errorf("notes: %q", g.notes)
	}
	b, _ := g.MarshalJSON()
	if !strings.Contains(string(b), `"matches":[{"path":"b.bin","line":1,"binary":true},{"path":"b.bin","line":3,"binary":true}]`) {
		t.Errorf("JSON: %s", b)
	}
	g, err = Grep(context.Background(), sb, GrepOptions{Pattern: "needle", Paths: []string{"."}})
	if err != nil || g.Count != 0 || g.Skipped.Binary != 1 {
		t.Errorf("walked: %+v %v", g, err)
	}
}

// TestGrepStreamsNamedFile: a named file's matches reach the sink while
// it is still being read, a batch at a time, so memory does not grow with
// them (SPEC §2, complete by default). The input holds back its end until
// the sink has seen a batch: on b2a5813 grep held every match of a file
// until its end, and this test timed out.
func TestGrepStreamsNamedFile(t *testing.T) {
	sb, _ := testSandbox(t)
	pr, pw := io.Pipe()
	sb.SetStdin(pr)
	seen := make(chan struct{})
	go func() {
		for i := range flushAt + 100 {
			fmt.Fprintf(pw, "needle %d\n", i)
		}
		select {
		case <-seen:
		case <-time.After(20 * time.Second):
		}
		fmt.Fprintf(pw, "no\nneedle last\n")
		pw.Close()
	}()
	var lines []int64
	var once sync.Once
	o := GrepOptions{Pattern: "needle", Paths: []string{sandbox.StdinPath}, Sink: func(fr *FileResult) error {
		for _, m := range fr.Matches {
			lines = append(lines, m.Line)
		}
		if len(lines) >= flushAt {
			once.Do(func() { close(seen) })
		}
		return nil
	}}
	start := time.Now()
	g, err := Grep(context.Background(), sb, o)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 15*time.Second {
		t.Fatalf("the matches waited for the end of the input")
	}
	if g.Count != flushAt+101 || g.FilesMatched != 1 || g.FilesSearched != 1 || int64(len(lines)) != g.Count || lines[len(lines)-1] != flushAt+102 {
		t.Errorf("count %d, files %d/%d, %d lines, last %d", g.Count, g.FilesMatched, g.FilesSearched, len(lines), lines[len(lines)-1])
	}
	for i := 1; i < len(lines); i++ {
		if lines[i] <= lines[i-1] {
			t.Fatalf("line %d after %d", lines[i], lines[i-1])
		}
	}
}

// TestGrepMatchWindow: a matched line cut for JSON keeps the window around
// its first match (text_offset says where it starts), on a UTF-8
// boundary, half the room before the match; a match longer than the cut
// starts the window. It holds in every way a line is read: a short file,
// a long line passed as a stream (the window read back from the file), a
// huge one, mapped chunks, and standard input. Before, the text was the
// line's first max_line_bytes, without the match.
func TestGrepMatchWindow(t *testing.T) {
	const cut = 1000
	x := func(n int) string { return strings.Repeat("x", n) }
	e := func(n int) string { return strings.Repeat("é", n) }
	lines := map[string]string{
		"far.txt":    x(200_001) + "MATCH" + x(5000) + "\n",
		"utf8.txt":   e(100_000) + "MATCH" + e(3000) + "\n",
		"long.txt":   x(50) + "MATCH" + x(3000) + "MATCH\n",
		"stream.txt": x(3<<20) + "MATCH" + x(100) + "\n",
		"huge.txt":   e(2<<20) + "MATCH" + x(100) + "\n", // past small.huge
		"near.txt":   x(10) + "MATCH" + x(5000) + "\n",
	}
	dir := t.TempDir()
	for n, d := range lines {
		must(t, os.WriteFile(filepath.Join(dir, n), []byte(d), 0o644))
	}
	p := policy.DefaultPolicy(dir)
	p.Limits.MaxLineBytes = cut
	sb, err := sandbox.New(p, "")
	must(t, err)
	defer sb.Close()
	small := mapGeometry{min: 1 << 20, chunk: 1 << 20, reach: 64 << 10, piece: 256 << 10, huge: 2 << 20}
	for name, data := range lines {
		body := strings.TrimSuffix(data, "\n")
		for _, tc := range []struct {
			pattern string
			fixed   bool
			geom    *mapGeometry
		}{{"MATCH", true, nil}, {"MA[T]CH", false, nil}, {"MATCH", true, &small}, {"M.TCH", false, &small}} {
			g, err := Grep(context.Background(), sb, GrepOptions{Pattern: tc.pattern, Fixed: tc.fixed, Paths: []string{name}, geom: tc.geom})
			if err != nil || len(*g.Matches) != 1 {
				t.Fatalf("%s %s: %v %v", name, tc.pattern, g.Matches, err)
			}
			m := (*g.Matches)[0]
			first := strings.Index(body, "MATCH")
			switch {
			case !m.TextTruncated || m.TextBytes != len(body) || len(m.Text) > cut:
				t.Errorf("%s %s: truncated %v, %d of %d bytes", name, tc.pattern, m.TextTruncated, len(m.Text), m.TextBytes)
			case m.Column != first+1:
				t.Errorf("%s %s: column %d, want %d", name, tc.pattern, m.Column, first+1)
			case body[m.TextOffset:m.TextOffset+len(m.Text)] != m.Text || !utf8.ValidString(m.Text):
				t.Errorf("%s %s: the text is not the line's bytes at %d", name, tc.pattern, m.TextOffset)
			case !strings.Contains(m.Text, "MATCH"):
				t.Errorf("%s %s: the window at %d misses the match at %d", name, tc.pattern, m.TextOffset, first)
			case m.TextOffset > max(0, first-(cut-5)/2) || m.TextOffset < first-(cut-5)/2-3:
				t.Errorf("%s %s: window at %d, want about %d", name, tc.pattern, m.TextOffset, first-(cut-5)/2)
			}
		}
	}
	// Standard input: the window comes from the part kept.
	sb2, _ := testSandbox(t)
	sb2.SetStdin(strings.NewReader(lines["far.txt"]))
	g, err := Grep(context.Background(), sb2, GrepOptions{Pattern: "MATCH", Paths: []string{sandbox.StdinPath}})
	if err != nil || (*g.Matches)[0].TextOffset == 0 {
		t.Errorf("stdin: %+v %v", g.Matches, err)
	}
}

// TestGrepJSONNoHTMLEscapes: grep's JSON (its own MarshalJSON, with or
// without binary matches) writes <, > and & as they are, as every fsbox
// JSON does, through an encoder that escapes none; on 60ea58c the
// collected result gave \u003c.
func TestGrepJSONNoHTMLEscapes(t *testing.T) {
	sb, dir := testSandbox(t)
	must(t, os.WriteFile(filepath.Join(dir, "t.txt"), []byte("a <b>&c\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "b.bin"), []byte("<b>\x00\n"), 0o644))
	for _, paths := range [][]string{{"t.txt"}, {"t.txt", "b.bin"}} {
		g, err := Grep(context.Background(), sb, GrepOptions{Pattern: "<b>", Paths: paths})
		must(t, err)
		var b strings.Builder
		e := json.NewEncoder(&b) // as the faces encode: no HTML escapes of their own
		e.SetEscapeHTML(false)
		must(t, e.Encode(g))
		if !strings.Contains(b.String(), `{"pattern":"<b>","matches":[{"path":"t.txt","line":1,"column":3,"text":"a <b>&c"}`) {
			t.Errorf("%v: %s", paths, b.String())
		}
	}
}
