package ops

import (
	"bytes"
	"encoding/binary"
	"regexp"
	"regexp/syntax"
	"strings"
)

// matcher finds lines that match a grep pattern in a buffer of whole
// lines. A pattern that requires a literal, or one of a few, is
// prefiltered: the literals are found with a pair scan and the pattern runs
// only on candidate lines; a pattern that requires none runs as a lazy DFA
// over the whole buffer (grep_dfa.go). re still finds where a match is.
type matcher struct {
	re   *regexp.Regexp
	word bool // -w: group 1 of re is the match
	// litScan finds the one literal every match contains (lit; "" if none
	// or several: multi).
	litScan
	pure bool // the pattern is exactly lit: no regexp needed
	// multi finds any of several literals one of which every match
	// contains (an alternation, -e A -e B, an -i literal's case variants);
	// multiExact: the pattern is exactly those literals.
	multi      []litScan
	multiExact bool
	mscan      *multiScan // all of multi in one pass (nil: one pass each)
	// asciiScan is mscan for a buffer of ASCII bytes alone: only the
	// literals that are ASCII (an -i literal's Kelvin-sign and long-s
	// variants cannot occur there, and would cost a compare per byte
	// each); nil with asciiNone when no literal is ASCII.
	asciiScan *multiScan
	asciiNone bool
	// anchored is ^(?:pattern), set when every match starts with lit: a
	// candidate is then checked where the literal stands (often one-pass).
	anchored *regexp.Regexp
	// tail, when tailed: the pattern is lit followed only by single-byte
	// classes (latency_ms=[0-9]{3}, fmt\.Errorf\("[a-z]+), which are
	// checked byte by byte after the literal instead of by the regexp.
	tail   []byteSet
	tailed bool
	// dfa decides lines without a literal to find first, and candidate
	// lines (nil if the program cannot be built: re decides then).
	dfa *lineDFA
}

// litScan finds one literal in a buffer.
type litScan struct {
	lit     []byte // the literal
	fold    bool   // lit is matched ASCII-case-insensitively
	rare    int    // index in lit of its rarest byte
	rareAlt byte   // the other case of lit[rare] when fold
	// common: lit's rarest byte is still a common one (a letter, a space),
	// so a scan for it stops every few dozen bytes; bytes.Index, which
	// switches to a vectorised compare of the whole literal when its first
	// byte keeps matching in vain, is faster then.
	common bool
	// pair: lit's two rarest bytes (at pairA < pairB) are scanned for
	// together, at their distance, 32 positions at a time (pairScan).
	pair         bool
	pairA, pairB int
}

// newLitScan prepares the scan for lit.
func newLitScan(lit []byte, fold bool) litScan { return newLitScanIn(lit, fold, len(lit)) }

// newLitScanIn prepares the scan for lit with the bytes it scans for taken
// from lit[:within] (all of lit when within is under 2).
func newLitScanIn(lit []byte, fold bool, within int) litScan {
	l := litScan{lit: lit, fold: fold}
	if len(lit) == 0 {
		return l
	}
	head := lit
	if within >= 2 {
		head = lit[:within]
	}
	l.rare = rarestByte(head, fold)
	l.rareAlt = lit[l.rare]
	if fold {
		l.rareAlt = swapCase(lit[l.rare])
	}
	l.common = !fold && len(lit) > 1 && byteRank(lit[l.rare]) >= 60
	if useSIMDPair && len(head) > 1 {
		l.pair = true
		l.pairA, l.pairB = rarePair(head, l.rare, fold)
	}
	return l
}

func newMatcher(pattern string, fixed, ignoreCase, word, line bool) (*matcher, error) {
	return newMatcherOf([]string{pattern}, fixed, ignoreCase, word, line)
}

// normalizeExpr turns one pattern into RE2 syntax that can be wrapped: a
// literal quoted, \w \d \s Unicode (unicodeClasses), and \Q without \E
// spelled out (it would swallow a wrapper's ")").
func normalizeExpr(pattern string, fixed bool) (string, error) {
	expr := unicodeClasses(pattern)
	if fixed {
		expr = regexp.QuoteMeta(pattern)
	}
	if strings.Contains(expr, `\Q`) {
		ast, err := syntax.Parse(expr, syntax.Perl)
		if err != nil {
			return "", usagef("", "invalid regular expression %q: %v", pattern, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
		expr = ast.String()
	}
	return expr, nil
}

// newMatcherOf matches a line when any of patterns does (grep -e, -f); no
// pattern matches nothing. line (-x) wants the whole line to match.
func newMatcherOf(patterns []string, fixed, ignoreCase, word, line bool) (*matcher, error) {
	pattern := strings.Join(patterns, "\n")
	var expr string
	switch len(patterns) {
	case 0:
		expr = `[^\x00-\x{10FFFF}]` // grep -f of an empty file: no line matches
	case 1:
		var err error
		if expr, err = normalizeExpr(patterns[0], fixed); err != nil {
			return nil, err
		}
	default:
		parts := make([]string, len(patterns))
		for i, p := range patterns {
			e, err := normalizeExpr(p, fixed)
			if err != nil {
				return nil, err
			}
			parts[i] = "(?:" + e + ")"
		}
		expr, fixed = strings.Join(parts, "|"), false
	}
	if line {
		expr, fixed = `^(?:`+expr+`)$`, false
	}
	if word {
		// ripgrep's -w: the match is preceded and followed by a non-word
		// character or the line's edge (so -w . matches "...", which
		// \b...\b would not); group 1 is the match itself.
		expr = `(?:^|[^` + wordItems + `])(` + expr + `)(?:$|[^` + wordItems + `])`
	}
	if ignoreCase {
		expr = `(?i)` + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, usagef("", "invalid regular expression %q: %v", pattern, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	m := &matcher{re: re, word: word}
	// The regexp compiled, so the pattern parses.
	ast, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, usagef("", "invalid regular expression %q: %v", pattern, err)
	}
	simple := ast.Simplify()
	m.dfa, _ = newLineDFA(simple)
	m.useSet(requiredSet(simple))
	if !m.pure && !m.fold && len(m.lit) > 0 && startsWithLiteral(simple, string(m.lit)) {
		m.anchored = regexp.MustCompile(`^(?:` + expr + `)`)
		m.tail, m.tailed = literalTail(simple, string(m.lit))
	}
	m.litScan = newLitScan(m.lit, m.fold)
	return m, nil
}

// maxScans is the most literals scanned for: each adds a compare to every
// position of the one pass (multiScan; without AVX2, a pass each), and past
// that many the DFA's pass is as quick.
const maxScans = 16

// maxSetCost is the most false candidates per byte a scan for several
// literals may meet and still beat checking every line.
const maxSetCost = 0.01

// useSet takes what every match must contain: one literal, or several
// found by one scan each, when they are rare enough to pay.
func (m *matcher) useSet(set litSet) {
	switch {
	case len(set.needles) == 1:
		m.lit, m.fold = set.needles[0].lit, set.needles[0].fold
		m.pure = set.exact
	case len(set.needles) > 1 && len(set.needles) <= maxScans && (set.exact || setCost(set.needles) <= maxSetCost):
		m.multi = make([]litScan, len(set.needles))
		for i, n := range set.needles {
			m.multi[i] = newLitScan(n.lit, n.fold)
		}
		m.multiExact = set.exact
		m.mscan = newMultiScan(m.multi)
		var ascii []litScan
		for _, l := range m.multi {
			if isASCII(l.lit) {
				ascii = append(ascii, l)
			}
		}
		m.asciiNone = len(ascii) == 0
		if len(ascii) < len(m.multi) && !m.asciiNone {
			m.asciiScan = newMultiScan(ascii)
		}
	}
}

// startsWithLiteral reports whether every match of re begins with lit
// itself (no anchor or assertion before it).
func startsWithLiteral(re *syntax.Regexp, lit string) bool {
	for re.Op == syntax.OpCapture || (re.Op == syntax.OpConcat && len(re.Sub) > 0) {
		re = re.Sub[0]
	}
	return re.Op == syntax.OpLiteral && re.Flags&syntax.FoldCase == 0 && string(re.Rune) == lit
}

// byteSet is a set of bytes.
type byteSet [4]uint64

func (s *byteSet) add(lo, hi rune) {
	for c := lo; c <= hi; c++ {
		s[c>>6] |= 1 << (c & 63)
	}
}

func (s *byteSet) has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }

// literalTail reports whether re is lit followed by nothing but ASCII
// literals and ASCII character classes, each matching exactly one byte,
// repeated a fixed number of times (the last one any number of times);
// and returns the classes after lit. Whether a line matches then needs no
// regexp: X+ at the end matches wherever one X does, X* and X? wherever
// nothing does. Anything else (case folding, '.', a class reaching beyond
// ASCII, which matches multi-byte runes, alternation, anchors) is left to
// the regexp.
func literalTail(re *syntax.Regexp, lit string) ([]byteSet, bool) {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 {
		return nil, false
	}
	head := re.Sub[0]
	if head.Op != syntax.OpLiteral || head.Flags&syntax.FoldCase != 0 || string(head.Rune) != lit {
		return nil, false
	}
	var tail []byteSet
	one := func(x *syntax.Regexp) bool {
		var set byteSet
		switch {
		case x.Op == syntax.OpLiteral && x.Flags&syntax.FoldCase == 0 && len(x.Rune) == 1 && x.Rune[0] < 0x80:
			set.add(x.Rune[0], x.Rune[0])
		case x.Op == syntax.OpCharClass && len(x.Rune) > 0:
			for i := 0; i+1 < len(x.Rune); i += 2 {
				if x.Rune[i+1] >= 0x80 {
					return false
				}
				set.add(x.Rune[i], x.Rune[i+1])
			}
		default:
			return false
		}
		tail = append(tail, set)
		return true
	}
	// add appends x's classes; last: nothing follows x, so a repetition
	// needs only its minimum (X{2,} and X{2,5} as XX, X* and X? as nothing).
	var add func(x *syntax.Regexp, last bool) bool
	add = func(x *syntax.Regexp, last bool) bool {
		least, most := 1, 1
		switch x.Op {
		case syntax.OpConcat:
			for i, sub := range x.Sub {
				if !add(sub, last && i == len(x.Sub)-1) {
					return false
				}
			}
			return true
		case syntax.OpLiteral:
			if x.Flags&syntax.FoldCase != 0 {
				return false
			}
			for _, r := range x.Rune {
				if !one(&syntax.Regexp{Op: syntax.OpLiteral, Rune: []rune{r}}) {
					return false
				}
			}
			return true
		case syntax.OpPlus:
			most = -1
		case syntax.OpStar:
			least, most = 0, -1
		case syntax.OpQuest:
			least = 0
		case syntax.OpRepeat:
			least, most = x.Min, x.Max
		default:
			return one(x)
		}
		if least != most && !last {
			return false
		}
		n := len(tail)
		if !one(x.Sub[0]) { // the operand must be one byte wide
			return false
		}
		tail = tail[:n]
		for range least {
			one(x.Sub[0])
		}
		return true
	}
	for i, x := range re.Sub[1:] {
		if !add(x, i == len(re.Sub)-2) {
			return nil, false
		}
	}
	return tail, true
}

// tailMatches reports whether b (what follows the literal) begins with
// one byte of each tail class.
func (m *matcher) tailMatches(b []byte) bool {
	if len(b) < len(m.tail) {
		return false
	}
	for i := range m.tail {
		if !m.tail[i].has(b[i]) {
			return false
		}
	}
	return true
}

// isASCII reports whether b holds no byte past 0x7f, eight at a time.
func isASCII(b []byte) bool {
	for len(b) >= 32 {
		w := binary.LittleEndian.Uint64(b) | binary.LittleEndian.Uint64(b[8:]) |
			binary.LittleEndian.Uint64(b[16:]) | binary.LittleEndian.Uint64(b[24:])
		if w&0x8080808080808080 != 0 {
			return false
		}
		b = b[32:]
	}
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

// rarestByte picks the byte to scan for; when folding, both cases of it
// are scanned, so a letter costs as much as its commoner case.
func rarestByte(lit []byte, fold bool) int {
	rank := func(c byte) int {
		if fold {
			return max(byteRank(c), byteRank(swapCase(c))) + 5
		}
		return byteRank(c)
	}
	best := 0
	for i, c := range lit {
		if rank(c) < rank(lit[best]) {
			best = i
		}
	}
	return best
}

// rarePair pairs lit's rarest byte (at rare) with the rarest of the
// others (another byte before the same one again), the farthest from it on
// a tie, and returns the two offsets in order.
func rarePair(lit []byte, rare int, fold bool) (int, int) {
	rank := func(c byte) int {
		r := byteRank(c)
		if fold {
			r = max(r, byteRank(swapCase(c)))
		}
		if c == lit[rare] || (fold && swapCase(c) == lit[rare]) {
			// The same byte twice tells less than two: in identifiers
			// "_" recurs every few bytes (LINK_REQ_RST's two are 4 apart
			// in every other kernel line).
			r += 25
		}
		return r
	}
	other := -1
	for i, c := range lit {
		if i == rare {
			continue
		}
		if other < 0 || rank(c) < rank(lit[other]) ||
			(rank(c) == rank(lit[other]) && abs(i-rare) > abs(other-rare)) {
			other = i
		}
	}
	return min(rare, other), max(rare, other)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// scanState is one buffer's search: where each of a matcher's several
// literals next occurs, so none is looked for twice over the same bytes.
type scanState struct {
	at    []int // at or after the last position asked; -1: not yet looked for
	ascii uint8 // whether the buffer is all ASCII: 0 not yet known, 1 no, 2 yes
}

// indexMulti returns where the first of m.multi occurs at or after pos in
// buf, or -1.
func (m *matcher) indexMulti(buf []byte, pos int, st *scanState) int {
	if st.ascii == 0 {
		st.ascii = 1
		if isASCII(buf) {
			st.ascii = 2
		}
	}
	if st.ascii == 2 {
		switch {
		case m.asciiNone:
			return -1
		case m.asciiScan != nil:
			return m.asciiScan.index(buf, pos)
		}
	}
	if m.mscan != nil {
		return m.mscan.index(buf, pos)
	}
	if st.at == nil {
		st.at = make([]int, len(m.multi))
		for i := range st.at {
			st.at[i] = -1
		}
	}
	best := -1
	for i := range m.multi {
		if st.ascii == 2 && !isASCII(m.multi[i].lit) {
			continue // cannot occur in this buffer
		}
		if st.at[i] < pos {
			st.at[i] = m.multi[i].index(buf, pos)
			if st.at[i] < 0 {
				st.at[i] = len(buf) + 1 // nowhere: never asked again
			}
		}
		if st.at[i] <= len(buf) && (best < 0 || st.at[i] < best) {
			best = st.at[i]
		}
	}
	return best
}

// next returns the start and end of the next line at or after pos that
// matches, or -1. buf holds whole lines; st is the search's state in buf
// (a new one for each buffer).
func (m *matcher) next(buf []byte, pos int, st *scanState) (int, int) {
	for pos < len(buf) {
		var hit int
		switch {
		case len(m.multi) > 0:
			hit = m.indexMulti(buf, pos, st)
		case len(m.lit) > 0:
			hit = m.index(buf, pos)
		case m.dfa != nil:
			return m.dfa.next(buf, pos)
		default:
			hit = pos // check line by line
		}
		if hit < 0 {
			return -1, -1
		}
		if m.tailed && !m.tailMatches(buf[hit+len(m.lit):]) {
			// Cheap reject before finding the line: the bytes after the
			// literal are the line's own, or the line ends before them.
			pos = hit + 1
			continue
		}
		start := bytes.LastIndexByte(buf[:hit], '\n') + 1
		end := bytes.IndexByte(buf[hit:], '\n')
		if end < 0 {
			end = len(buf)
		} else {
			end += hit + 1
		}
		if m.pure || m.multiExact {
			return start, end
		}
		body := trimEOL(buf[start:end])
		if m.anchored != nil {
			for p := hit - start; p < len(body); {
				if m.tailed {
					if rest := p + len(m.lit); rest <= len(body) && m.tailMatches(body[rest:]) {
						return start, end
					}
				} else if m.anchored.Match(body[p:]) {
					return start, end
				}
				q := bytes.Index(body[p+1:], m.lit)
				if q < 0 {
					break
				}
				p += 1 + q
			}
		} else if m.lineMatch(body) {
			return start, end
		}
		pos = end
	}
	return -1, -1
}

// index finds the literal at or after pos: by scanning for two of its
// bytes at their distance (pair), else with bytes.Index (common), else by
// scanning for its rarest byte (both cases of it when folding) and checking
// around it, remembering the next position of each case so neither is
// rescanned.
func (m *litScan) index(buf []byte, pos int) int {
	if m.pair {
		lit, a, b := m.lit, m.pairA, m.pairB
		ca, cb := lit[a], lit[b]
		altA, altB := ca, cb
		if m.fold {
			altA, altB = swapCase(ca), swapCase(cb)
		}
		for pos+len(lit) <= len(buf) {
			i := pairScan(buf[pos+a:], len(buf)-len(lit)+1-pos, ca, altA, cb, altB, b-a)
			if i < 0 {
				return -1
			}
			start := pos + i
			if s := buf[start : start+len(lit)]; (!m.fold && bytes.Equal(s, lit)) || (m.fold && asciiEqualFold(s, lit)) {
				return start
			}
			pos = start + 1
		}
		return -1
	}
	if m.common {
		if pos > len(buf) {
			return -1
		}
		if i := bytes.Index(buf[pos:], m.lit); i >= 0 {
			return pos + i
		}
		return -1
	}
	lit, r := m.lit, m.rare
	a, b := m.lit[r], m.rareAlt
	nextA, nextB := -1, -1 // next known position of a / b; -1 unknown, past end: none
	end := len(buf) - (len(lit) - 1 - r)
	for {
		if pos+len(lit) > len(buf) {
			return -1
		}
		from := pos + r
		if nextA < from {
			nextA = indexFrom(buf[:end], a, from)
		}
		cand := nextA
		if b != a {
			if nextB < from {
				nextB = indexFrom(buf[:end], b, from)
			}
			cand = min(cand, nextB)
		}
		if cand >= end {
			return -1
		}
		start := cand - r
		s := buf[start : start+len(lit)]
		if (m.fold && asciiEqualFold(s, lit)) || (!m.fold && bytes.Equal(s, lit)) {
			return start
		}
		pos = start + 1
	}
}

// indexFrom is bytes.IndexByte from an offset, as a buffer offset or -1;
// a spent search is remembered as len(buf) so it is not repeated.
func indexFrom(buf []byte, c byte, from int) int {
	if from >= len(buf) {
		return len(buf) + 1
	}
	i := bytes.IndexByte(buf[from:], c)
	if i < 0 {
		return len(buf) + 1
	}
	return from + i
}

// matchLine reports whether a single line (no terminator) matches.
func (m *matcher) matchLine(line []byte) bool {
	if m.pure {
		if m.fold {
			return m.index(line, 0) >= 0
		}
		return bytes.Contains(line, m.lit)
	}
	if len(m.multi) > 0 {
		if m.indexMulti(line, 0, &scanState{}) < 0 {
			return false
		}
		if m.multiExact {
			return true
		}
	}
	return m.lineMatch(line)
}

// lineMatch runs the pattern on one line (no terminator).
func (m *matcher) lineMatch(line []byte) bool {
	if m.dfa != nil && bytes.IndexByte(line, '\n') < 0 {
		return m.dfa.match(line)
	}
	return m.re.Match(line)
}

// asciiEqualFold reports whether a and b are equal but for the case of
// ASCII letters (a non-ASCII byte must be equal: a needle spells each
// Unicode fold it matches).
func asciiEqualFold(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if x, y := a[i], b[i]; x != y && (x|0x20 != y|0x20 || x|0x20 < 'a' || x|0x20 > 'z') {
			return false
		}
	}
	return true
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
