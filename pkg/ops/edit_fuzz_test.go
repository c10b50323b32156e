package ops

import (
	"bytes"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/fsbox/fsbox/pkg/fserr"
)

// editOnce resolves and applies edits to data as Edit does.
func editOnce(data []byte, specs []EditSpec) ([]byte, int, *editSet, error) {
	set, err := resolveEdits(data, specs, "f")
	if err != nil {
		return nil, 0, nil, err
	}
	out, n, err := applyAll(data, set, "f", 1<<40, "max_write_bytes")
	return out, n, set, err
}

// FuzzApplyEdit: an edit changes exactly the replaced occurrence: the
// bytes before and after it are the original ones.
func FuzzApplyEdit(f *testing.F) {
	f.Add([]byte("a\r\nb\r\nc"), "a\nb", "x")
	f.Add([]byte("\xef\xbb\xbfhello"), "hello", "bye")
	f.Add([]byte("caf\xe9\n"), "caf", "CAF")
	f.Fuzz(func(t *testing.T, data []byte, old, new string) {
		if old == "" {
			return
		}
		out, n, _, err := editOnce(data, []EditSpec{{Old: old, New: new}})
		if err != nil {
			return
		}
		if n != 1 {
			t.Fatalf("without All, %d replacements", n)
		}
		// Find which spelling matched (as written, or with CRLF).
		o, nw := []byte(old), []byte(new)
		if !bytes.Contains(data, o) {
			o, nw = toCRLF(o), toCRLF(nw)
		}
		i := bytes.Index(data, o)
		if i < 0 {
			t.Fatalf("applied an edit whose text is absent")
		}
		want := append(append(append([]byte{}, data[:i]...), nw...), data[i+len(o):]...)
		if !bytes.Equal(out, want) {
			t.Fatalf("bytes outside the edit changed:\n in %q\nout %q\nwant %q", data, out, want)
		}
	})
}

// refSpans is every replacement of eds as go-udiff byte edits, found the
// plain way and sorted.
func refSpans(data []byte, eds []*resolved) []udiff.Edit {
	var out []udiff.Edit
	for _, e := range eds {
		for pos := 0; ; {
			i := bytes.Index(data[pos:], e.old)
			if i < 0 {
				break
			}
			out = append(out, udiff.Edit{Start: pos + i, End: pos + i + len(e.old), New: string(e.new)})
			pos += i + len(e.old)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// TestRenderDiffMatchesUdiff: the one-pass diff equals go-udiff's diff of
// the whole file for the same byte edits, for single edits, --all and
// several edits at once; and the edited text is the edits applied to the
// original.
func TestRenderDiffMatchesUdiff(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	olds := []string{"a\n", "b", "line 1", "c\nline", "tail", "\n", "line 2 ", "x"}
	news := []string{"", "X", "Y\nZ\n", "W\n"}
	for iter := 0; iter < 2000; iter++ {
		var b bytes.Buffer
		n := 1 + rng.Intn(30)
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "line %d %c\n", i, 'a'+rng.Intn(3))
		}
		if rng.Intn(3) == 0 {
			b.WriteString("tail")
		}
		data := b.Bytes()
		var specs []EditSpec
		for k := 1 + rng.Intn(3); k > 0; k-- {
			specs = append(specs, EditSpec{Old: olds[rng.Intn(len(olds))], New: news[rng.Intn(len(news))], All: rng.Intn(2) == 0})
		}
		out, _, set, err := editOnce(data, specs)
		if err != nil {
			continue
		}
		ref := refSpans(data, set.eds)
		want, _ := udiff.ToUnified("a/f", "b/f", string(data), ref, udiff.DefaultContextLines)
		trimLines = false
		got := renderDiff("a/f", "b/f", data, out, set)
		trimLines = true
		if got != want {
			t.Fatalf("edits %+v on %q:\ngot\n%s\nwant\n%s", specs, data, got, want)
		}
		checkTrimmedDiff(t, data, out, renderDiff("a/f", "b/f", data, out, set))
		applied, err := udiff.Apply(string(data), ref)
		if err != nil || applied != string(out) {
			t.Fatalf("edits %+v on %q: got %q, want %q (%v)", specs, data, out, applied, err)
		}
	}
}

// TestEditsMatchTheOriginal: each edit of several is matched against the
// original text (never against another's output), overlapping edits are
// usage naming both, touching ones are fine, and the messages stay short.
func TestEditsMatchTheOriginal(t *testing.T) {
	data := []byte("one\ntwo\nthree\n")
	for _, c := range []struct {
		name  string
		specs []EditSpec
		want  string // the result, or the error code and a piece of its message
	}{
		{"independent", []EditSpec{{Old: "one", New: "1"}, {Old: "three", New: "3"}}, "1\ntwo\n3\n"},
		{"a new text is not matched again", []EditSpec{{Old: "one", New: "two"}, {Old: "two", New: "2"}}, "two\n2\nthree\n"},
		{"touching", []EditSpec{{Old: "one\n", New: "A"}, {Old: "two", New: "B"}}, "AB\nthree\n"},
		{"swap", []EditSpec{{Old: "one", New: "two"}, {Old: "two", New: "one"}}, "two\none\nthree\n"},
		{"overlap", []EditSpec{{Old: "one\ntwo", New: "x"}, {Old: "two\nthree", New: "y"}}, "usage: edits 1 and 2 overlap at line 2"},
		{"same text twice", []EditSpec{{Old: "two", New: "x"}, {Old: "two", New: "y"}}, "usage: edits 1 and 2 overlap at line 2"},
		{"inside another", []EditSpec{{Old: "o\nth", New: "x"}, {Old: "one\ntwo\nthree", New: "y"}}, "usage: edits 2 and 1 overlap at line 2"},
		{"not found", []EditSpec{{Old: "one", New: "x"}, {Old: "four", New: "y"}}, "text_not_found: edit 2: the old text is not in f"},
		{"ambiguous", []EditSpec{{Old: "t", New: "x"}}, "ambiguous: the old text occurs 2 times in f, at 2:1, 3:1 (line:column):"},
	} {
		out, _, _, err := editOnce(data, c.specs)
		got := string(out)
		if err != nil {
			got = string(fserr.AsError(err).Code) + ": " + fserr.AsError(err).Msg
		}
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	many := bytes.Repeat([]byte("x\n"), 50)
	_, _, _, err := editOnce(many, []EditSpec{{Old: "x", New: "y"}})
	if msg := fserr.AsError(err).Msg; !strings.Contains(msg, "at 1:1, 2:1, 3:1, 4:1, 5:1, 6:1, 7:1, 8:1, 9:1, 10:1 and 40 more (line:column):") {
		t.Errorf("ambiguous with 50 matches: %q", msg)
	}
}

// TestClosestHint: the hint names the best lines (score, then line), and
// on a file past its budget says how far it looked instead of running on.
func TestClosestHint(t *testing.T) {
	data := []byte("alpha beta\nfunc main() {\nfunc mainly() {\nzzz\n")
	if got := closest(data, "func main(x) {"); !strings.Contains(got, `closest: line 2: "func main() {"; line 3: "func mainly() {";`) {
		t.Errorf("hint: %q", got)
	}
	big := bytes.Repeat([]byte(strings.Repeat("q", 400)+"\n"), 2000)
	if got := closest(big, strings.Repeat("r", 200)); !strings.Contains(got, "among the first") {
		t.Errorf("a hint past its budget: %q", got)
	}
}

// indexAll is every occurrence of pat in text as bytes.Index finds them
// from the left, without overlap.
func indexAll(text, pat []byte) []int {
	var out []int
	for pos := 0; ; {
		i := bytes.Index(text[pos:], pat)
		if i < 0 {
			return out
		}
		out = append(out, pos+i)
		pos += i + len(pat)
	}
}

// FuzzMatchMany: the one-pass matcher finds, for each pattern, exactly
// the occurrences a left-to-right bytes.Index scan finds.
func FuzzMatchMany(f *testing.F) {
	f.Add([]byte("aaaa abab aab"), "aa", "ab", "b")
	f.Add([]byte("one\ntwo\nthree"), "o", "two\nth", "one\ntwo\nthree")
	f.Add([]byte("xxxxxx"), "x", "xx", "xxx")
	f.Fuzz(func(t *testing.T, text []byte, a, b, c string) {
		var pats [][]byte
		for _, p := range []string{a, b, c} {
			if p != "" {
				pats = append(pats, []byte(p))
			}
		}
		if len(pats) == 0 {
			return
		}
		counts, spans, ok := matchMany(text, pats, true)
		if !ok {
			return // past the budget: refused, not miscounted
		}
		var want []uint64
		for i, p := range pats {
			at := indexAll(text, p)
			if counts[i] != len(at) {
				t.Fatalf("pattern %q in %q: count %d, want %d", p, text, counts[i], len(at))
			}
			for _, s := range at {
				want = append(want, uint64(s)<<16|uint64(i))
			}
		}
		sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
		// Every occurrence while none overlap; else those up to the first
		// overlap in order of position, which is then the same.
		at := firstOverlap(want, pats)
		if at < 0 {
			if fmt.Sprint(spans) != fmt.Sprint(want) {
				t.Fatalf("patterns %q in %q: spans %v, want %v", pats, text, spans, want)
			}
			return
		}
		if len(spans) <= at || fmt.Sprint(spans[:at+1]) != fmt.Sprint(want[:at+1]) {
			t.Fatalf("patterns %q in %q: spans %v, want a list that starts %v (the first overlap)", pats, text, spans, want[:at+1])
		}
		for _, sp := range spans {
			if !slices.Contains(want, sp) {
				t.Fatalf("patterns %q in %q: span %d:%d is no occurrence", pats, text, sp>>16, sp&0xffff)
			}
		}
	})
}

// firstOverlap is the index in spans (sorted, packed start<<16 |
// pattern) of the first that starts before the one before it ends, or
// -1: where applySpans stops.
func firstOverlap(spans []uint64, pats [][]byte) int {
	for i := 1; i < len(spans); i++ {
		prev := spans[i-1]
		if int(spans[i]>>16) < int(prev>>16)+len(pats[prev&0xffff]) {
			return i
		}
	}
	return -1
}

// checkTrimmedDiff: the diff, applied to data, gives out; no change block
// starts or ends with a line it removes and adds back unchanged; and an
// edit that changes nothing has no hunk.
func checkTrimmedDiff(t *testing.T, data, out []byte, diff string) {
	t.Helper()
	if bytes.Equal(data, out) {
		if diff != "" {
			t.Fatalf("an edit that changes nothing has a diff:\n%s", diff)
		}
		return
	}
	lines := strings.SplitAfter(diff, "\n")
	var got []byte
	pos := 0 // in data
	src := strings.SplitAfter(string(data), "\n")
	if len(src) > 0 && src[len(src)-1] == "" {
		src = src[:len(src)-1]
	}
	var minus, plus []string
	endBlock := func() {
		if len(minus) > 0 && len(plus) > 0 && (minus[0] == plus[0] || minus[len(minus)-1] == plus[len(plus)-1]) {
			t.Fatalf("a change block removes and adds back the same line:\n%s", diff)
		}
		minus, plus = nil, nil
	}
	for i := 2; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "@@") {
			endBlock()
			var a int
			fmt.Sscanf(l, "@@ -%d", &a)
			for ; pos < a-1 && pos < len(src); pos++ {
				got = append(got, src[pos]...)
			}
			continue
		}
		if l == "" {
			continue
		}
		text := l[1:]
		if i+1 < len(lines) && lines[i+1] == "\\ No newline at end of file\n" {
			text = strings.TrimSuffix(text, "\n")
			i++
		}
		switch l[0] {
		case ' ':
			endBlock()
			got = append(got, text...)
			pos++
		case '-':
			minus = append(minus, text)
			pos++
		case '+':
			plus = append(plus, text)
			got = append(got, text...)
		}
	}
	endBlock()
	for ; pos < len(src); pos++ {
		got = append(got, src[pos]...)
	}
	if !bytes.Equal(got, out) {
		t.Fatalf("the diff applied to %q gives %q, want %q:\n%s", data, got, out, diff)
	}
}

// TestDiffShowsOnlyChangedLines: lines a replacement leaves as they were
// are context, and a replacement that changes nothing has no hunk.
func TestDiffShowsOnlyChangedLines(t *testing.T) {
	data := []byte("line1\nline2\nline3\nline4\n")
	for _, c := range []struct {
		old, new, want string
	}{
		{"line2", "line2", ""},
		{"line1\nline2\nline3", "line1\nLINE2\nline3", "@@ -1,4 +1,4 @@\n line1\n-line2\n+LINE2\n line3\n line4\n"},
		{"line2\nline3\n", "line2\nnew\nline3\n", "@@ -1,4 +1,5 @@\n line1\n line2\n+new\n line3\n line4\n"},
	} {
		out, _, set, err := editOnce(data, []EditSpec{{Old: c.old, New: c.new}})
		if err != nil {
			t.Fatal(err)
		}
		got := renderDiff("a/f", "b/f", data, out, set)
		if c.want != "" {
			c.want = "--- a/f\n+++ b/f\n" + c.want
		}
		if got != c.want {
			t.Errorf("%q -> %q:\ngot\n%s\nwant\n%s", c.old, c.new, got, c.want)
		}
	}
}

// TestHintsAnAgentCanActOn: a not-found hint shows indentation and says
// how the old text first differs; an ambiguous one lists line:column once
// per occurrence.
func TestHintsAnAgentCanActOn(t *testing.T) {
	data := []byte("func f() {\n\treturn 1\n}\nx x x\n")
	for _, c := range []struct{ old, want string }{
		{"func f() {\n    return 1\n}", `line 2 of the old text differs from line 2 of the file in its indentation: the file indents with a tab where the old text has 4 spaces`},
		{"func f() {\n\treturn 2\n}", `line 2 of the old text differs from line 2 of the file at column 9: the file has "1" where the old text has "2"`},
		{"func f() {  \n\treturn 1", `in its trailing space: the file has nothing where the old text has 2 spaces`},
		{"\treturn 1   ", `line 2: "\treturn 1"`},
	} {
		_, _, _, err := editOnce(data, []EditSpec{{Old: c.old, New: "y"}})
		if msg := fserr.AsError(err).Msg; !strings.Contains(msg, c.want) {
			t.Errorf("old %q: %s\nwant it to say %s", c.old, msg, c.want)
		}
	}
	_, _, _, err := editOnce(data, []EditSpec{{Old: "x", New: "y"}})
	if msg := fserr.AsError(err).Msg; !strings.Contains(msg, "at 4:1, 4:3, 4:5 (line:column)") {
		t.Errorf("ambiguous on one line: %s", msg)
	}
	if got := visible("\tab  "); got != `"\tab··"` {
		t.Errorf("visible = %s", got)
	}
}
