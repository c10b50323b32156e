package ops

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"strings"
)

// matcher finds lines that match a grep pattern in a buffer of whole
// lines. A pattern with a required literal is prefiltered: the literal is
// found with a rare-byte scan and the regexp runs only on candidate lines.
type matcher struct {
	re      *regexp.Regexp
	lit     []byte // a substring every match contains ("" if none)
	fold    bool   // lit is matched ASCII-case-insensitively
	pure    bool   // the pattern is exactly lit: no regexp needed
	rare    int    // index in lit of its rarest byte
	rareAlt byte   // the other case of lit[rare] when fold
}

func newMatcher(pattern string, fixed, ignoreCase, word bool) (*matcher, error) {
	expr := pattern
	if fixed {
		expr = regexp.QuoteMeta(pattern)
	}
	if word {
		expr = `\b(?:` + expr + `)\b`
	}
	if ignoreCase {
		expr = `(?i)` + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, usagef("", "invalid regular expression %q: %v", pattern, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	m := &matcher{re: re}
	if fixed && !word && !strings.Contains(pattern, "\n") {
		m.lit, m.pure = []byte(pattern), true
	} else if ast, err := syntax.Parse(expr, syntax.Perl); err == nil {
		m.lit, m.fold = requiredLiteral(ast.Simplify())
		m.pure = false
	}
	if ignoreCase && m.pure {
		m.fold = true
	}
	// Case folding beyond ASCII (and k, s, which fold to the Kelvin sign and
	// the long s): let the regexp do it.
	if m.fold && (!isASCII(m.lit) || bytes.ContainsAny(bytes.ToLower(m.lit), "ks")) {
		m.lit, m.pure = nil, false
	}
	if len(m.lit) > 0 {
		m.rare = rarestByte(m.lit)
		m.rareAlt = m.lit[m.rare]
		if m.fold {
			m.rareAlt = swapCase(m.lit[m.rare])
		}
	}
	return m, nil
}

// requiredLiteral returns the longest literal every match must contain,
// and whether it is case-folded.
func requiredLiteral(re *syntax.Regexp) ([]byte, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return []byte(string(re.Rune)), re.Flags&syntax.FoldCase != 0
	case syntax.OpCapture:
		return requiredLiteral(re.Sub[0])
	case syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []byte
		var bestFold bool
		for _, sub := range re.Sub {
			if l, f := requiredLiteral(sub); len(l) > len(best) {
				best, bestFold = l, f
			}
		}
		return best, bestFold
	}
	return nil, false
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

func swapCase(c byte) byte {
	switch {
	case 'a' <= c && c <= 'z':
		return c - 32
	case 'A' <= c && c <= 'Z':
		return c + 32
	}
	return c
}

// byteRank orders bytes from rare (low) to common (high) in source code
// and logs: a heuristic like ripgrep's, tuned by hand.
func byteRank(c byte) int {
	switch {
	case c == ' ' || c == 'e' || c == 't' || c == 'a' || c == 'o' || c == 'i' || c == 'n' || c == 's' || c == 'r':
		return 100
	case c == '\t' || c == 'l' || c == 'c' || c == 'd' || c == 'u' || c == 'h' || c == 'm' || c == 'p':
		return 90
	case c >= '0' && c <= '9':
		return 85
	case c >= 'a' && c <= 'f':
		return 80
	case c >= 'a' && c <= 'z':
		return 60
	case c == '_' || c == '.' || c == '(' || c == ')' || c == ',' || c == '"' || c == '=' || c == ':' || c == '/':
		return 50
	case c >= 'A' && c <= 'Z':
		return 40
	}
	return 10
}

func rarestByte(lit []byte) int {
	best := 0
	for i, c := range lit {
		if byteRank(c) < byteRank(lit[best]) {
			best = i
		}
	}
	return best
}

// next returns the start and end of the next line at or after pos that
// matches, or -1. buf holds whole lines.
func (m *matcher) next(buf []byte, pos int) (int, int) {
	for pos < len(buf) {
		var hit int
		if len(m.lit) > 0 {
			hit = m.indexLit(buf, pos)
		} else {
			loc := m.re.FindIndex(buf[pos:])
			if loc == nil {
				return -1, -1
			}
			hit = pos + loc[0]
		}
		if hit < 0 {
			return -1, -1
		}
		start := bytes.LastIndexByte(buf[:hit], '\n') + 1
		end := bytes.IndexByte(buf[hit:], '\n')
		if end < 0 {
			end = len(buf)
		} else {
			end += hit + 1
		}
		if m.pure || m.re.Match(trimEOL(buf[start:end])) {
			return start, end
		}
		pos = end
	}
	return -1, -1
}

// indexLit finds the literal at or after pos by scanning for its rarest
// byte and checking around it.
func (m *matcher) indexLit(buf []byte, pos int) int {
	lit, r := m.lit, m.rare
	for {
		if pos+len(lit) > len(buf) {
			return -1
		}
		region := buf[pos+r : len(buf)-(len(lit)-1-r)]
		i := bytes.IndexByte(region, lit[r])
		if m.rareAlt != lit[r] {
			if j := bytes.IndexByte(region, m.rareAlt); j >= 0 && (i < 0 || j < i) {
				i = j
			}
		}
		if i < 0 {
			return -1
		}
		cand := pos + i
		s := buf[cand : cand+len(lit)]
		if (m.fold && bytes.EqualFold(s, lit)) || (!m.fold && bytes.Equal(s, lit)) {
			return cand
		}
		pos = cand + 1
	}
}

// matchLine reports whether a single line (no terminator) matches.
func (m *matcher) matchLine(line []byte) bool {
	if m.pure {
		if m.fold {
			return m.indexLit(line, 0) >= 0
		}
		return bytes.Contains(line, m.lit)
	}
	return m.re.Match(line)
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}
