package ops

import (
	"math/rand"
	"strings"
	"testing"
)

// TestMatcherAgainstRegexp checks the prefiltered line finder against a
// plain per-line regexp over random text, for literal, regex, -i and -w
// patterns.
func TestMatcherAgainstRegexp(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	alphabet := []string{"a", "b", "A", "B", "_", " ", "ab", "Ab", "aB", "k", "K", "\u212a", "ſ", "s", "é", "\n", "\n", "x1"}
	patterns := []struct {
		p                 string
		fixed, fold, word bool
	}{
		{"ab", true, false, false}, {"ab", true, true, false}, {"a_b", false, false, false},
		{"ab+", false, false, false}, {"(?:ab|ba)", false, false, false}, {"b a", false, true, false},
		{"ks", true, true, false}, {"s", false, true, false}, {"ab", false, false, true},
		{"x1", true, false, true}, {"^a", false, false, false}, {"b$", false, false, false},
		{"a.b", false, true, false}, {"[ab]{3}", false, false, false}, {"é", false, true, false},
		{"ab[^b]", false, false, false}, {"a_?b", false, false, false}, {"aB+$", false, false, false},
		// Literal-prefixed with a byte-class tail (checked without the regexp).
		{"ab[ _]{2}", false, false, false}, {"ab[a-z]+", false, false, false}, {"a_[ab]*", false, false, false},
		{"Ab[b ]?", false, false, false}, {"ab_[0-9A]b", false, false, false}, {"(ab)[ _]", false, false, false},
		{"ab[\x00-\x7f]", false, false, false}, {"ab.", false, false, false}, {"ab[a-zé]", false, false, false},
		{"(?i)ab[ _]", false, false, false}, {"ab\nb", false, false, false},
	}
	for iter := 0; iter < 300; iter++ {
		var sb strings.Builder
		for n := rng.Intn(80); n > 0; n-- {
			sb.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		text := sb.String()
		for _, pc := range patterns {
			m, err := newMatcher(pc.p, pc.fixed, pc.fold, pc.word, false)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := matcherLines(m, text), regexpLines(m, text); got != want {
				t.Fatalf("pattern %+v on %q:\ngot  %q\nwant %q", pc, text, got, want)
			}
		}
	}
}

// matcherLines lists the lines m.next finds in text, NUL-separated.
func matcherLines(m *matcher, text string) string {
	var got []string
	buf := []byte(text)
	for pos := 0; ; {
		s, e := m.next(buf, pos)
		if s < 0 {
			break
		}
		got = append(got, string(trimEOL(buf[s:e])))
		pos = e
	}
	return strings.Join(got, "\x00")
}

// regexpLines lists the lines of text that m's regexp matches on its own,
// each without its "\n" or "\r\n" (so $ matches before a CRLF, as the
// README says): the definition m.next must agree with.
func regexpLines(m *matcher, text string) string {
	var want []string
	for _, line := range strings.SplitAfter(text, "\n") {
		body := string(trimEOL([]byte(line)))
		if line == "" {
			continue
		}
		if m.re.MatchString(body) {
			want = append(want, body)
		}
	}
	return strings.Join(want, "\x00")
}

// FuzzMatcher: whatever the pattern and flags, the prefiltered finder
// (pair scan, literal tails, anchored checks) agrees with the regexp.
func FuzzMatcher(f *testing.F) {
	f.Add(`latency_ms=[0-9]{3}`, "a latency_ms=12\nlatency_ms=123 b\n", false, false, false)
	f.Add(`fmt\.Errorf\("[a-z]+`, "fmt.Errorf(\"%s\")\nfmt.Errorf(\"bad\")\n", false, false, false)
	f.Add(`zztop_needle`, "ZZTOP_NEEDLE\nzztop_needle\n", true, true, false)
	f.Add(`ab[ _]{2}`, "ab  \nab_\n", false, false, true)
	f.Fuzz(func(t *testing.T, pattern, text string, fixed, fold, word bool) {
		if len(pattern) > 64 || len(text) > 2048 {
			return
		}
		m, err := newMatcher(pattern, fixed, fold, word, false)
		if err != nil {
			return
		}
		if got, want := matcherLines(m, text), regexpLines(m, text); got != want {
			t.Fatalf("pattern %q (fixed %v fold %v word %v) on %q:\ngot  %q\nwant %q", pattern, fixed, fold, word, text, got, want)
		}
	})
}

func TestAnchoredPrefix(t *testing.T) {
	m, err := newMatcher(`latency_ms=[0-9]{3}\b`, false, false, false, false)
	if err != nil || m.anchored == nil {
		t.Fatalf("want an anchored check for a literal-prefix pattern (err %v)", err)
	}
	buf := []byte("latency_ms=12 x latency_ms=345\nlatency_ms=1234\nlatency_ms=999\n")
	var got []string
	for pos := 0; ; {
		s, e := m.next(buf, pos)
		if s < 0 {
			break
		}
		got = append(got, string(buf[s:e]))
		pos = e
	}
	if strings.Join(got, "") != "latency_ms=12 x latency_ms=345\nlatency_ms=999\n" {
		t.Errorf("got %q", got)
	}
}

// TestLiteralTail checks which patterns are matched without the regexp
// after their literal: the benchmark's two must be, and patterns whose tail
// could match a multi-byte rune, fold case or vary in width must not.
func TestLiteralTail(t *testing.T) {
	for _, c := range []struct {
		p      string
		tailed bool
		width  int
	}{
		{`latency_ms=[0-9]{3}`, true, 3}, {`fmt\.Errorf\("[a-z]+`, true, 1}, {`abc[xy]?`, true, 0},
		{`abc[0-9]*`, true, 0}, {`abc_[ _]d`, true, 2}, {`abc[x]{2,}`, true, 2}, {`ab(?:[x]{2})[y]`, true, 3},
		{`abc.`, false, 0}, {`abc[^x]`, false, 0}, {`(?i)abc[x]`, false, 0}, {`abc(?i:x)`, false, 0},
		{`abc[x]+y`, false, 0}, {`abc[x]{1,2}y`, false, 0}, {`abc(x|y)`, false, 0}, {`abc$`, false, 0}, {`abc[x]{1,3}`, false, 0},
		{`abc[é]`, false, 0}, {`abc\b`, false, 0},
	} {
		m, err := newMatcher(c.p, false, false, false, false)
		if err != nil {
			t.Fatal(err)
		}
		if m.tailed != c.tailed || len(m.tail) != c.width {
			t.Errorf("%s: tailed %v width %d, want %v %d", c.p, m.tailed, len(m.tail), c.tailed, c.width)
		}
	}
}
