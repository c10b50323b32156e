package ops

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// Known GNU outputs (coreutils 9.1, LC_ALL=C), so the tests bite even on a
// machine without the GNU tools.
func TestSortKnownGNU(t *testing.T) {
	sb, dir := testSandbox(t)
	in := "b 10\na 2\nB 1\n  -3.5 x\nc\n10\n2\n\na 2\nA 2\n-0\n0.0\n1e3\n"
	os.WriteFile(filepath.Join(dir, "in"), []byte(in), 0o644)
	cases := []struct {
		o    SortOptions
		want string
	}{
		{SortOptions{}, "\n  -3.5 x\n-0\n0.0\n10\n1e3\n2\nA 2\nB 1\na 2\na 2\nb 10\nc\n"},
		{SortOptions{Numeric: true}, "  -3.5 x\n\n-0\n0.0\nA 2\nB 1\na 2\na 2\nb 10\nc\n1e3\n2\n10\n"},
		{SortOptions{IgnoreCase: true, Unique: true}, "\n  -3.5 x\n-0\n0.0\n10\n1e3\n2\na 2\nB 1\nb 10\nc\n"},
		{SortOptions{Keys: []string{"2"}, Numeric: true}, "\n  -3.5 x\n-0\n0.0\n10\n1e3\n2\nc\nB 1\nA 2\na 2\na 2\nb 10\n"},
		{SortOptions{Reverse: true, Unique: true}, "c\nb 10\na 2\nB 1\nA 2\n2\n1e3\n10\n0.0\n-0\n  -3.5 x\n\n"},
	}
	for _, c := range cases {
		c.o.Path = "in"
		got := collectSorted(t, func(sink LineSink) error {
			o := c.o
			o.Sink = sink
			_, err := Sort(context.Background(), sb, o)
			return err
		})
		if got != c.want {
			t.Errorf("%+v:\ngot  %q\nwant %q", c.o, got, c.want)
		}
	}
}

func collectSorted(t *testing.T, run func(LineSink) error) string {
	t.Helper()
	var b strings.Builder
	if err := run(func(l []byte) error { b.Write(l); return nil }); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSortAgainstGNU compares random inputs with the machine's sort.
func TestSortAgainstGNU(t *testing.T) {
	gnu, err := exec.LookPath("sort")
	if err != nil {
		t.Skip("no sort(1) on this machine")
	}
	sb, dir := testSandbox(t)
	rng := rand.New(rand.NewSource(7))
	words := []string{"a", "B", "b", "-1", "-1.50", "2", "10", " 3", "\t4", "x y", "x  z", "0.001", "-0", "1e2", "Zed", "zed", ""}
	for iter := 0; iter < 60; iter++ {
		var b bytes.Buffer
		for n := rng.Intn(40); n > 0; n-- {
			b.WriteString(words[rng.Intn(len(words))])
			b.WriteString(" ")
			b.WriteString(words[rng.Intn(len(words))])
			b.WriteString("\n")
		}
		os.WriteFile(filepath.Join(dir, "in"), b.Bytes(), 0o644)
		for _, flags := range [][]string{{}, {"-r"}, {"-n"}, {"-f"}, {"-u"}, {"-nu"}, {"-fu"}, {"-k", "2"}, {"-n", "-k", "2"}, {"-t", " ", "-k", "2"}, {"-ru"}, {"-nr"},
			// Several keys, key options, character positions, -s (issue 14, item 11).
			{"-k", "2,2n", "-k", "1,1r"}, {"-s", "-k", "2,2"}, {"-k", "1.2"}, {"-k", "2b"}, {"-k", "1.2,1.3", "-k", "2"},
			{"-t", " ", "-k", "2,2", "-k", "1"}, {"-k", "1,1f", "-k", "2n"}, {"-r", "-k", "2,2", "-k", "1,1"}, {"-u", "-k", "1,1"},
			{"-s", "-r", "-k", "1,1"}, {"-k", "2,1"}, {"-k", "99999999999999999999"}, {"-n", "-k", "2,2", "-k", "1,1"}} {
			cmd := exec.Command(gnu, append(flags, filepath.Join(dir, "in"))...)
			cmd.Env = append(os.Environ(), "LC_ALL=C")
			want, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			o := SortOptions{Path: "in"}
			for i := 0; i < len(flags); i++ {
				switch flags[i] {
				case "-r":
					o.Reverse = true
				case "-n":
					o.Numeric = true
				case "-f":
					o.IgnoreCase = true
				case "-u":
					o.Unique = true
				case "-nu":
					o.Numeric, o.Unique = true, true
				case "-fu":
					o.IgnoreCase, o.Unique = true, true
				case "-ru":
					o.Reverse, o.Unique = true, true
				case "-nr":
					o.Numeric, o.Reverse = true, true
				case "-k":
					i++
					o.Keys = append(o.Keys, flags[i])
				case "-s":
					o.Stable = true
				case "-t":
					i++
					o.Separator = flags[i]
				}
			}
			got := collectSorted(t, func(sink LineSink) error { o.Sink = sink; _, err := Sort(context.Background(), sb, o); return err })
			if got != string(want) {
				t.Fatalf("sort %v on %q:\ngot  %q\nwant %q", flags, b.String(), got, want)
			}
		}
	}
}

func TestCutKnownGNU(t *testing.T) {
	sb, dir := testSandbox(t)
	os.WriteFile(filepath.Join(dir, "t"), []byte("a\tb\tc\td\nno-delim\nx\ty\nlast\tl2"), 0o644)
	cases := map[string]string{
		"1":   "a\nno-delim\nx\nlast\n",
		"1,3": "a\tc\nno-delim\nx\nlast\n",
		"3,1": "a\tc\nno-delim\nx\nlast\n",
		"2-":  "b\tc\td\nno-delim\ny\nl2\n",
		"-2":  "a\tb\nno-delim\nx\ty\nlast\tl2\n",
		"2-3": "b\tc\nno-delim\ny\nl2\n",
		"5":   "\nno-delim\n\n\n",
	}
	for list, want := range cases {
		var b strings.Builder
		_, err := Cut(context.Background(), sb, CutOptions{Path: "t", Fields: list, Sink: func(f [][]byte, eol []byte) error {
			b.Write(bytes.Join(f, []byte("\t")))
			if len(eol) == 0 {
				eol = []byte("\n")
			}
			b.Write(eol)
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("cut -f %s: got %q want %q", list, b.String(), want)
		}
	}
}

func TestParseFieldList(t *testing.T) {
	for _, bad := range []string{"", "0", "1,0", "a", "3-1", "-", "1,,2", "+1", "1-2-3", "99999999999999999999"} {
		if _, err := ParseFieldList(bad); err == nil {
			t.Errorf("ParseFieldList(%q): want a usage error", bad)
		}
	}
	fl, err := ParseFieldList("2,4-5,7-")
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for i := 1; i <= 9; i++ {
		if fl.Has(i) {
			got = append(got, i)
		}
	}
	if fmt.Sprint(got) != "[2 4 5 7 8 9]" {
		t.Errorf("got %v", got)
	}
}

func FuzzParseFieldList(f *testing.F) {
	for _, s := range []string{"1", "1,3", "2-4", "3-", "-2", "0", "1-", "5-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fl, err := ParseFieldList(s)
		if err != nil {
			return
		}
		// A valid list selects at least one field, never field 0, and
		// its ranges are sorted, disjoint and not adjacent.
		if len(fl.ranges) == 0 || fl.Has(0) || !fl.Has(fl.ranges[0].lo) {
			t.Fatalf("%q parsed to %v", s, fl.ranges)
		}
		for i := 1; i < len(fl.ranges); i++ {
			if fl.ranges[i].lo <= fl.ranges[i-1].hi+1 {
				t.Fatalf("%q: ranges %v overlap or touch", s, fl.ranges)
			}
		}
	})
}

func TestWcMatchesGNU(t *testing.T) {
	sb, dir := testSandbox(t)
	// Expected figures are GNU wc -lwmc in C.UTF-8 (coreutils 9.1).
	cases := []struct {
		in                         string
		lines, words, chars, bytes int64
	}{
		{"héllo wörld\n\x01 a\xc2\xa0b c\xe2\x80\x83d\n  \t x\r\ny", 3, 8, 30, 35},
		{"", 0, 0, 0, 0},
		{"no newline", 0, 2, 10, 10},
		{"a\u3000b\u2007c\n", 1, 3, 6, 10},
		{"\x01\n", 1, 0, 2, 2},
		{"a\xffb\n", 1, 1, 3, 4},
		// generated with GNU wc -lwmc from random mixes of spaces,
		// no-break spaces, controls, invalid bytes and unassigned code points
		{"\x0d\xcd\xb8\x0a\xc2\x85\xef\xbb\xbf\x0d\x20", 1, 1, 7, 11},
		{"\x61\xef\xbb\xbf\xc2\xa0\xcd\xb8\xff\x7f\xef\xbb\xbf\xcd\xb8\xcd\xb8\xef\xbb\xbf\xe3\x80\x80\x0a\xff\x0a\xf0\x9f\x98\x80\xe3\x80\x80\x61\x20\x01", 2, 4, 17, 36},
		{"\x0d\x62\xe2\x80\x87\x61\xc2\xa0\xef\xbb\xbf\xe3\x80\x80\xc3\xa9\xe3\x80\x80\x0d\xe2\x80\x8b\x0a\xc2\x85\x09\x62\x0a\xef\xbb\xbf\x7f\xc2\xa0\xc3\xa9\xe2\x80\x87\xc3\xa9\xf0\x9f\x98\x80\xe3\x80\x80", 2, 9, 24, 49},
		{"\xc2\x85\xcd\xb8\x0d\xc3\xa9\x0d\xff\xe2\x80\xa8\x61\xc2\xa0\x01\xe2\x80\xa8\xcd\xb8\x0d\x0d\x09\x7f\x0d\xc2\xa0", 0, 2, 17, 28},
		{"\x09\x20\xef\xbb\xbf\xef\xbb\xbf\x20\xc2\x85\x20\xc3\xa9\x0a", 1, 2, 9, 15},
		{"", 0, 0, 0, 0},
		{"\xc3\xa9\xc3\xa9\x09\x62\x62\xe3\x80\x80\x0d\xe2\x80\xa8\xcd\xb8", 0, 2, 9, 16},
		{"\xc2\xa0\xf0\x9f\x98\x80\xff\x62\xe2\x80\x87\x61\x20\x09\xcd\xb8\x62\x7f\xc3\xa9\xe2\x80\x87\xc2\xa0\x0a\x62\xe2\x80\xa8\xe2\x80\xa8\xc2\x85\x0a\xe3\x80\x80\xe3\x80\x80\xe2\x80\x8b\xf0\x9f\x98\x80\xe3\x80\x80\xcd\xb8\x09\xf0\x9f\x98\x80", 2, 6, 27, 59},
		{"\xc3\xa9\xff\xe2\x80\x87\xc3\xa9\xc2\xa0\xf0\x9f\x98\x80\xe2\x80\x87\xcd\xb8", 0, 3, 7, 19},
		{"\x61\xc3\xa9\x0d\xe2\x80\xa8\x61\xe3\x80\x80\x0d\x0a\x62\xe2\x80\xa8", 1, 3, 10, 17},
		{"\xc2\x85\xc2\x85\xc2\xa0\xef\xbb\xbf\x61\x0d\x62\x61\xc2\x85\xc2\xa0\xe2\x80\x8b\xe2\x80\x87\x0d\xe2\x80\xa8", 0, 3, 14, 27},
		{"\xc2\x85\x01\xe2\x80\xa8\xc2\x85\xc2\xa0", 0, 0, 5, 10},
		{"\xe3\x80\x80\x09\x61\x0d\x0a\xe2\x80\x87\xf0\x9f\x98\x80\xff\xc2\xa0", 1, 2, 8, 17},
		{"\xe2\x80\xa8\x01\xc3\xa9\x09\x09\xe2\x80\xa8\xe2\x80\xa8", 0, 1, 7, 14},
		{"\xff\xe2\x80\x8b\x01\x20\xe2\x80\xa8\x7f\x0d\xe2\x80\x8b\xc2\xa0\xff\x09\x62\xf0\x9f\x98\x80\x7f\xe2\x80\xa8\x0d\x01\xc2\xa0\xe2\x80\xa8\x20\xc2\x85", 0, 3, 19, 37},
		{"\x0a\xc3\xa9\xe2\x80\x87\xf0\x9f\x98\x80\xc2\xa0\xe2\x80\x8b\xc2\x85\xc3\xa9\xe2\x80\x87\xc3\xa9\x0d\xc3\xa9\x62\xc3\xa9\x0a\x7f\x61\xef\xbb\xbf", 2, 6, 18, 36},
		{"\xf0\x9f\x98\x80\xc3\xa9\xcd\xb8\xff\x62\xe2\x80\x8b\xf0\x9f\x98\x80\xe2\x80\x87\xcd\xb8\xe2\x80\xa8\xff\x20\x0d\xe2\x80\x87\x09\xff\x62\x62\xf0\x9f\x98\x80\x7f\xc3\xa9\x0d\x62\x61\xef\xbb\xbf\x09\x01\xf0\x9f\x98\x80\xe2\x80\x87\xff", 0, 4, 26, 58},
		{"\x61\xf0\x9f\x98\x80\xcd\xb8\xc3\xa9\x62\x09\xe2\x80\xa8\x0a\xc2\xa0\xcd\xb8\xef\xbb\xbf\x62\xc2\x85\xff\x7f\x09\xcd\xb8\x09\x01\xff\xc2\xa0", 1, 2, 19, 35},
		{"\x0a\x61\xef\xbb\xbf\x0d\xe3\x80\x80\x62\xc2\xa0\xff\xc2\xa0\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xc3\xa9\x62\xef\xbb\xbf\xe2\x80\xa8\x61\x62\x0a\x62\x09\x62\x20\xef\xbb\xbf\x62\x20\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xef\xbb\xbf\xe2\x80\xa8", 2, 7, 28, 58},
		{"\xe2\x80\xa8\x20\xc2\x85\xe3\x80\x80\xe3\x80\x80", 0, 0, 5, 12},
		{"\xe2\x80\x87\xc2\x85\xc2\xa0\x7f\xe2\x80\xa8\xc3\xa9\x09\x0a\xcd\xb8\x61\xe3\x80\x80\x20\x0d\x01\x62\xc2\x85\xe2\x80\x8b\xcd\xb8", 1, 3, 18, 32},
		{"\x62\xc3\xa9\x62\xc2\x85\xef\xbb\xbf\xe2\x80\xa8\xc3\xa9\xc3\xa9\xe2\x80\x8b\x61\xff\x7f", 0, 1, 11, 22},
		{"\xc2\xa0\x0d\x20\xc3\xa9\xff\xc3\xa9\x0a\x61\xe2\x80\xa8\xc2\x85\xcd\xb8\xc2\xa0\x09\xe2\x80\x8b\x09\xf0\x9f\x98\x80\xe3\x80\x80", 1, 4, 16, 32},
		{"\x09\xe2\x80\xa8\x0d\xcd\xb8\x09\x0d\x61\xef\xbb\xbf\x0a\xff\xe3\x80\x80\x62\xf0\x9f\x98\x80\x20\x0d\x09\xe3\x80\x80\x01\x61\xe2\x80\xa8\x09", 1, 3, 20, 35},
		{"", 0, 0, 0, 0},
		{"\x09\xef\xbb\xbf\xe2\x80\x87\x0d\xe2\x80\x87\x20\x62\x0d\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xff\x09\xcd\xb8\x09\xcd\xb8\x62\xcd\xb8\xe2\x80\xa8\x0d\x01\x20\xff\x01\xff\xe2\x80\x8b\xe3\x80\x80\xc2\xa0", 0, 5, 24, 49},
		{"\xe3\x80\x80\xc2\x85\xcd\xb8\xc3\xa9\x20\xe3\x80\x80\xf0\x9f\x98\x80\xff\xc3\xa9\x01\xc3\xa9", 0, 2, 10, 23},
		{"\x0d\x0d\xf0\x9f\x98\x80\xef\xbb\xbf\x0a\xe3\x80\x80\x0a\x01\x09\xef\xbb\xbf\xef\xbb\xbf\xf0\x9f\x98\x80\xe2\x80\x8b\x0d\x01\x0a\xc2\xa0\x7f\x0a\x0d\xf0\x9f\x98\x80\xe2\x80\xa8", 4, 3, 22, 44},
		{"\xff\xcd\xb8\xe2\x80\x87\xc3\xa9\x0d\x0d\xc2\xa0\x7f\xe2\x80\x87\x61\xc2\xa0\xef\xbb\xbf\xe3\x80\x80\x7f\x01\x0d\xc2\x85\xff\xe2\x80\xa8\xef\xbb\xbf\x0a\xc3\xa9\xef\xbb\xbf\x7f\xe2\x80\x8b\x0d\xcd\xb8\x61\xef\xbb\xbf", 1, 6, 27, 54},
		{"\x20\xe3\x80\x80\x62\xe2\x80\x8b\xff\xff\x20\x7f\xc2\xa0\xff\x7f\xc2\xa0\x0a\x01\x62\xc2\xa0\x01\x62\xe2\x80\xa8\x01\xc3\xa9\x20\x20", 1, 3, 20, 33},
		{"\x20\xc2\xa0\xe2\x80\x87", 0, 0, 3, 6},
		{"\xc2\x85", 0, 0, 1, 2},
		{"\x0d\xe2\x80\xa8\x61\x61\xe2\x80\xa8\xe2\x80\xa8\xc3\xa9\xe3\x80\x80\xef\xbb\xbf\x20\x7f\x0d\xef\xbb\xbf\xe3\x80\x80", 0, 3, 14, 29},
		{"\xcd\xb8\xe2\x80\xa8\x09\xc2\xa0", 0, 0, 4, 8},
		{"\xc3\xa9\x09", 0, 1, 2, 3},
		{"\xf0\x9f\x98\x80\xc2\xa0\x09\xf0\x9f\x98\x80\xc2\x85\xc2\x85\xe2\x80\x8b\xe2\x80\x87\xc2\xa0\x09\xe2\x80\xa8\x0d\xcd\xb8\xf0\x9f\x98\x80", 0, 3, 14, 34},
		{"\xef\xbb\xbf\xf0\x9f\x98\x80\xc2\x85", 0, 1, 3, 9},
		{"\xe2\x80\x87", 0, 0, 1, 3},
		{"\x0d\x01\x0a\x01\xc2\x85\xe2\x80\x8b\x09\x09\xcd\xb8\x0a\xe2\x80\xa8\xc3\xa9\xcd\xb8\xe2\x80\x87\x01\xe2\x80\x8b\xef\xbb\xbf\xe2\x80\x87\x01\x20\x09", 2, 3, 21, 37},
		{"\x01\xcd\xb8\xcd\xb8\x0d\xe3\x80\x80\xc2\x85\x09\xc2\xa0\xc2\xa0\xe3\x80\x80\x62\x0a\x62\xef\xbb\xbf\xf0\x9f\x98\x80\xc2\xa0\xff\xf0\x9f\x98\x80\xc2\x85\xe2\x80\xa8\xe3\x80\x80\xe2\x80\x8b", 1, 4, 21, 47},
	}
	for _, c := range cases {
		os.WriteFile(filepath.Join(dir, "w"), []byte(c.in), 0o644)
		r, err := Wc(context.Background(), sb, WcOptions{Paths: []string{"w"}})
		if err != nil {
			t.Fatal(err)
		}
		got := r.Files[0]
		if got.Lines != c.lines || got.Words != c.words || got.Chars != c.chars || got.Bytes != c.bytes {
			t.Errorf("%q: got %+v, want l=%d w=%d m=%d c=%d", c.in, got.Counts, c.lines, c.words, c.chars, c.bytes)
		}
	}
}

// TestSortLargeInputs sorts inputs big enough for the paths small ones
// never take: the in-place radix distribution (4096 lines and more), the
// parallel sort and its merges (16384 and more) and the in-place
// permutation of lines. Plain byte order is checked against slices.Sort;
// -n, -r, -u and -f against the machine's sort(1) when it has one.
func TestSortLargeInputs(t *testing.T) {
	dir := t.TempDir()
	p := policy.DefaultPolicy(dir)
	p.Limits.MaxResults = 1 << 20
	sb, err := sandbox.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	rng := rand.New(rand.NewSource(11))
	var b bytes.Buffer
	var lines []string
	for n := 0; n < 70000; n++ {
		var l []byte
		switch rng.Intn(4) {
		case 0: // numbers, many equal
			l = fmt.Appendf(nil, "%d.%d", rng.Intn(300)-150, rng.Intn(10))
		case 1: // short lines from a tiny alphabet: long runs of equal prefixes
			for k := rng.Intn(4); k > 0; k-- {
				l = append(l, "aAb\x01\xff"[rng.Intn(5)])
			}
		default:
			l = fmt.Appendf(nil, "%c%c line %d", 'a'+rng.Intn(3), 'a'+rng.Intn(26), rng.Intn(1000))
		}
		lines = append(lines, string(l))
		b.Write(l)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "big"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(o SortOptions) string {
		o.Path = "big"
		return collectSorted(t, func(sink LineSink) error { o.Sink = sink; _, err := Sort(context.Background(), sb, o); return err })
	}
	want := slices.Clone(lines)
	slices.Sort(want)
	if got := run(SortOptions{}); got != strings.Join(want, "\n")+"\n" {
		t.Errorf("plain sort of %d lines differs from slices.Sort", len(lines))
	}
	gnu, err := exec.LookPath("sort")
	if err != nil {
		t.Skip("no sort(1) on this machine for -n, -r, -u, -f")
	}
	for _, c := range []struct {
		flags []string
		o     SortOptions
	}{
		{[]string{"-n"}, SortOptions{Numeric: true}}, {[]string{"-r"}, SortOptions{Reverse: true}},
		{[]string{"-u"}, SortOptions{Unique: true}}, {[]string{"-f"}, SortOptions{IgnoreCase: true}},
		{[]string{"-n", "-u"}, SortOptions{Numeric: true, Unique: true}},
	} {
		cmd := exec.Command(gnu, append(c.flags, filepath.Join(dir, "big"))...)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		want, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := run(c.o); got != string(want) {
			g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
			i := 0
			for i < len(g) && i < len(w) && g[i] == w[i] {
				i++
			}
			t.Errorf("sort %v of %d lines differs from GNU sort at line %d: %q, want %q (%d vs %d lines)",
				c.flags, len(lines), i+1, g[min(i, len(g)-1)], w[min(i, len(w)-1)], len(g), len(w))
		}
	}
}

// TestRadixSortLines checks the in-place bucket distribution directly,
// over several sizes and alphabets, against slices.SortFunc.
func TestRadixSortLines(t *testing.T) {
	for seed, n := range []int{4096, 10000, 40000} {
		rng := rand.New(rand.NewSource(int64(seed)))
		var lines [][]byte
		for i := 0; i < n; i++ {
			var l []byte
			for k := rng.Intn(7); k > 0; k-- {
				l = append(l, "abcz\x00\xff"[rng.Intn(3+seed)])
			}
			lines = append(lines, fmt.Appendf(l, " %d", rng.Intn(50)))
		}
		want := slices.Clone(lines)
		slices.SortFunc(want, bytesCompare)
		radixSortLines(lines)
		for i := range lines {
			if !bytes.Equal(lines[i], want[i]) {
				t.Fatalf("%d lines: at %d got %q, want %q", n, i, lines[i], want[i])
			}
		}
	}
}
