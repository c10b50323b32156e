package ops

import (
	"math/rand"
	"regexp/syntax"
	"strconv"
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
		// Several literals: alternations, their -i forms with the Kelvin
		// sign and the long s, literals joined across a factored prefix.
		{"ab|ba", false, false, false}, {"ab|ks", false, true, false}, {"ab|x1|é", false, true, false},
		{"a(?:b|_)b", false, false, false}, {"x1|b a", false, false, true}, {"(ab|k)s+", false, true, false},
		{"[ab]k|ſa", false, false, false}, {"ab|\nb", false, false, false}, {"(?:ab|Ab)[ _]", false, false, false},
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
	var st scanState
	for pos := 0; ; {
		s, e := m.next(buf, pos, &st)
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

// FuzzMatcher: whatever the patterns and flags, the prefiltered finder
// (the literals every match contains, one or several, their -i case
// variants, pair scan, literal tails, anchored checks) finds exactly the
// lines the regexp finds. second, when not empty, is a second pattern
// (grep -e A -e B); line is -x.
func FuzzMatcher(f *testing.F) {
	f.Add(`latency_ms=[0-9]{3}`, "", "a latency_ms=12\nlatency_ms=123 b\n", false, false, false, false)
	f.Add(`fmt\.Errorf\("[a-z]+`, "", "fmt.Errorf(\"%s\")\nfmt.Errorf(\"bad\")\n", false, false, false, false)
	f.Add(`zztop_needle`, "", "ZZTOP_NEEDLE\nzztop_needle\n", true, true, false, false)
	f.Add(`ab[ _]{2}`, "", "ab  \nab_\n", false, false, true, false)
	f.Add(`TODO|FIXME`, "", "// TODO: x\n// fixme\nFIXME\n", false, false, false, false)
	f.Add(`PM_RESUME`, "", "pm_resume\nPM_REſUME\nPM_RE\n", false, true, false, false)
	f.Add(`ERR_SYS|LINK_REQ_RST`, `\w+_EVT`, "link_req_rst\nLINK_REQ_RST\nCFG_BME_EVT\n", false, true, true, false)
	f.Add(`é|ab`, "k", "É\nAB\n\u212a\n", true, true, false, true)
	f.Fuzz(func(t *testing.T, pattern, second, text string, fixed, fold, word, line bool) {
		if len(pattern) > 64 || len(second) > 64 || len(text) > 2048 {
			return
		}
		patterns := []string{pattern}
		if second != "" {
			patterns = append(patterns, second)
		}
		m, err := newMatcherOf(patterns, fixed, fold, word, line)
		if err != nil {
			return
		}
		if got, want := matcherLines(m, text), regexpLines(m, text); got != want {
			t.Fatalf("patterns %q (fixed %v fold %v word %v line %v) on %q:\ngot  %q\nwant %q", patterns, fixed, fold, word, line, text, got, want)
		}
		for _, l := range strings.Split(text, "\n") {
			if got, want := m.matchLine([]byte(l)), m.re.MatchString(l); got != want {
				t.Fatalf("patterns %q (fixed %v fold %v word %v line %v): matchLine(%q) = %v, want %v", patterns, fixed, fold, word, line, l, got, want)
			}
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
	var st scanState
	for pos := 0; ; {
		s, e := m.next(buf, pos, &st)
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
		{`abc[0-9]*`, true, 0}, {`abc[x]{2,}`, true, 2}, {`ab_[ _]+`, true, 1},
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

// TestRequiredSet checks the literals a pattern's matches must contain one
// of, and when finding one is a match (exact).
func TestRequiredSet(t *testing.T) {
	for _, c := range []struct {
		p     string
		want  string // needles, "|"-separated, a folded one prefixed "i:"
		exact bool
	}{
		{`TODO|FIXME`, "TODO|FIXME", true},
		{`(?i)PM_RESUME`, `i:PM_RESUME|i:PM_RE\u017fUME`, true},
		{`(?i)ERR_SYS|PME_TURN_OFF`, `i:ERR_SYS|i:ERR_SY\u017f|i:ERR_\u017fYS|i:ERR_\u017fY\u017f|i:PME_TURN_OFF`, true},
		{`(?i)ERR_SYS|PME_TURN_OFF|LINK_REQ_RST|CFG_BME_EVT`, `i:ERR_SYS|i:ERR_SY\u017f|i:ERR_\u017fYS|i:ERR_\u017fY\u017f|i:PME_TURN_OFF|i:LINK_REQ_RST|i:LINK_REQ_R\u017fT|i:LIN\u212a_REQ_RST|i:LIN\u212a_REQ_R\u017fT|i:CFG_BME_EVT`, true},
		{`(?i)ERR_SYS|PME_TURN_OFF|LINK_REQ_RST|CFG_BME_EVT|ZSZS|QSQS`, `i:ERR_|i:PME_TURN_OFF|i:_REQ_R|i:CFG_BME_EVT|i:ZSZS|i:ZSZ\u017f|i:Z\u017fZS|i:Z\u017fZ\u017f|i:QSQS|i:QSQ\u017f|i:Q\u017fQS|i:Q\u017fQ\u017f`, false}, // past maxScans: a folded literal's run of 3 or more,
		{`[A-Z]+_RESUME`, "_RESUME", false},
		{`(?:^|\W)([A-Z]+_RESUME)(?:$|\W)`, "_RESUME", false},
		{`ERR_(?:SYS|IO)\b`, "ERR_SYS|ERR_IO", false},
		{`abc_[ _]d`, "abc_ d|abc__d", true},
		{`\wAh`, "Ah", false},
		{`\w{5}\s+\w{5}`, `\t|\n|\f|\r| `, false}, // a set too common to scan for (useSet)
		{`[A-Z]{20}`, "", false},
		{`\p{Greek}`, "", false},
		{`foo|\w+`, "", false},
		{`(?i)é`, `\u00c9|\u00e9`, true},
		{`ab\nc|d`, `ab\nc|d`, false}, // a needle across a line break is only a candidate
		{`(?i)foo(?-i)Bar`, "Bar", false},
	} {
		re, err := syntax.Parse(c.p, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		set := requiredSet(re.Simplify())
		var got []string
		for _, n := range set.needles {
			s := strconv.QuoteToASCII(string(n.lit))
			s = s[1 : len(s)-1]
			if n.fold {
				s = "i:" + s
			}
			got = append(got, s)
		}
		if strings.Join(got, "|") != c.want || set.exact != c.exact {
			t.Errorf("%s: got %q exact %v, want %q exact %v", c.p, strings.Join(got, "|"), set.exact, c.want, c.exact)
		}
	}
}

// FuzzLineDFA: the lazy DFA decides every line as the regexp does, for any
// pattern (Unicode classes, \b, anchors, -i) and any bytes, invalid UTF-8
// and "\r\n" included.
func FuzzLineDFA(f *testing.F) {
	f.Add(`\w{5}\s+\w{5}`, "hello world\nhéllo wörld\nab cd\n")
	f.Add(`\p{Greek}`, "abc\nαβγ\n\xff\n")
	f.Add(`^a\b|b$|\Bc`, "a b\r\nab\nb\r\nxc\n c\n")
	f.Add(`(?i)k[^a]ſ`, "\u212a\u00e9S\nkaS\n")
	f.Add(`[A-Z]{3}(?:x|$)`, "ABC\r\nABx\nABCx\n")
	f.Fuzz(func(t *testing.T, pattern, text string) {
		if len(pattern) > 64 || len(text) > 2048 {
			return
		}
		m, err := newMatcher(pattern, false, false, false, false)
		if err != nil || m.dfa == nil {
			return
		}
		var got []string
		buf := []byte(text)
		for pos := 0; ; {
			s, e := m.dfa.next(buf, pos)
			if s < 0 {
				break
			}
			got = append(got, string(trimEOL(buf[s:e])))
			pos = e
		}
		if got, want := strings.Join(got, "\x00"), regexpLines(m, text); got != want {
			t.Fatalf("pattern %q on %q:\ngot  %q\nwant %q", pattern, text, got, want)
		}
	})
}
