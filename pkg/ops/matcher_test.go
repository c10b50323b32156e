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
	}
	for iter := 0; iter < 300; iter++ {
		var sb strings.Builder
		for n := rng.Intn(80); n > 0; n-- {
			sb.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		text := sb.String()
		for _, pc := range patterns {
			m, err := newMatcher(pc.p, pc.fixed, pc.fold, pc.word)
			if err != nil {
				t.Fatal(err)
			}
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
			re := m.re
			var want []string
			for _, line := range strings.SplitAfter(text, "\n") {
				body := strings.TrimSuffix(line, "\n")
				if line == "" {
					continue
				}
				if re.MatchString(body) {
					want = append(want, body)
				}
			}
			if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
				t.Fatalf("pattern %+v on %q:\ngot  %q\nwant %q", pc, text, got, want)
			}
		}
	}
}

func TestAnchoredPrefix(t *testing.T) {
	m, err := newMatcher(`latency_ms=[0-9]{3}\b`, false, false, false)
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
