package patch

import (
	"fmt"
	"strconv"
	"strings"
)

const bom = "\xef\xbb\xbf"

// fline is one line of the file being patched.
type fline struct {
	text string // without the ending
	eol  string // "\n", "\r\n", or "" for a last line without newline
}

func splitFile(content []byte) (hasBOM bool, lines []fline) {
	s := string(content)
	if strings.HasPrefix(s, bom) {
		hasBOM, s = true, s[len(bom):]
	}
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, fline{text: s})
			break
		}
		l := fline{text: s[:i], eol: "\n"}
		if strings.HasSuffix(l.text, "\r") {
			l.text, l.eol = l.text[:len(l.text)-1], "\r\n"
		}
		lines = append(lines, l)
		s = s[i+1:]
	}
	return hasBOM, lines
}

// Match levels, in the order they are tried.
const (
	levelExact = iota
	levelTrailingWS
	levelEOL
	numLevels
)

var levelNames = [numLevels]string{MatchExact, MatchTrailingWhitespace, MatchEOL}

func trimWS(s string) string { return strings.TrimRight(s, " \t") }

// eolOK reports whether a file line's ending is the one a hunk expects; a
// last line without newline counts as ending with dom, the dominant one.
func eolOK(eol, dom string, crlf bool) bool {
	if eol == "" {
		eol = dom
	}
	return (eol == "\r\n") == crlf
}

func lineMatches(l fline, s string, level int, crlf bool, dom string) bool {
	switch level {
	case levelExact:
		return l.text == s && eolOK(l.eol, dom, crlf)
	case levelTrailingWS:
		return trimWS(l.text) == trimWS(s) && eolOK(l.eol, dom, crlf)
	default:
		return trimWS(l.text) == trimWS(s)
	}
}

// Apply applies hunks, in order, to content and returns the new content.
// See the package doc for the rules.
func Apply(content []byte, hunks []Hunk) (*Result, error) {
	hasBOM, lines := splitFile(content)
	if hasBOM && len(lines) > 0 && bomInOld(hunks) {
		// A unified diff (git diff, diff -u) carries the BOM as text of
		// line 1: match it, and keep or drop it, as that text.
		hasBOM = false
		lines[0].text = bom + lines[0].text
	}
	n := len(lines)
	crlfs, lfs := 0, 0
	for _, l := range lines {
		switch l.eol {
		case "\r\n":
			crlfs++
		case "\n":
			lfs++
		}
	}
	dom := "\n"
	if crlfs > lfs || (crlfs == 0 && lfs == 0 && len(hunks) > 0 && hunks[0].CRLF) {
		dom = "\r\n"
	}
	wantFinalNL := n == 0 || lines[n-1].eol != ""

	res := &Result{Matched: make([]string, 0, len(hunks))}
	out := make([]fline, 0, n+8)
	m := &matcher{lines: lines, dom: dom, index: map[string][]int{}}
	total := n
	for k := range hunks {
		total += len(hunks[k].Old)
	}
	m.budget = workPerLine*total + minWork
	for i, l := range lines {
		key := trimWS(l.text)
		m.index[key] = append(m.index[key], i)
	}
	from := 0
	for k := range hunks {
		h := &hunks[k]
		start, level, err := m.locate(from, h, k)
		if err != nil {
			return nil, err
		}
		end := start + len(h.Old)
		res.Hunks = append(res.Hunks, Placed{OldLine: start + 1, NewLine: len(out) + (start - from) + 1, Old: h.Old, New: h.New})
		out = append(out, lines[from:start]...)
		out = appendNew(out, lines[start:end], h, dom)
		if end == n {
			switch {
			case h.NewNoEOL:
				wantFinalNL = false
			case h.OldNoEOL:
				wantFinalNL = true
			}
		}
		from = end
		res.Matched = append(res.Matched, levelNames[level])
		res.Replacements++
	}
	out = append(out, lines[from:]...)

	size := len(content) + 16
	for k := range hunks {
		for _, l := range hunks[k].New {
			size += len(l) + 2
		}
	}
	b := make([]byte, 0, size)
	if hasBOM {
		b = append(b, bom...)
	}
	for i, l := range out {
		b = append(b, l.text...)
		switch {
		case i < len(out)-1:
			if l.eol == "" {
				b = append(b, dom...)
			} else {
				b = append(b, l.eol...)
			}
		case wantFinalNL:
			if l.eol == "" {
				b = append(b, dom...)
			} else {
				b = append(b, l.eol...)
			}
		}
	}
	res.Content = b
	return res, nil
}

// bomInOld reports whether a hunk's first old line starts with a BOM.
func bomInOld(hunks []Hunk) bool {
	for k := range hunks {
		if len(hunks[k].Old) > 0 && strings.HasPrefix(hunks[k].Old[0], bom) {
			return true
		}
	}
	return false
}

// appendNew appends the hunk's New lines, which replace the file lines
// win. Lines the hunk keeps (equal Old and New lines: the common prefix
// and suffix, then an in-order greedy pairing of the rest) are copied from
// the file, so they keep their own whitespace and endings; the others take
// the dominant ending.
func appendNew(out []fline, win []fline, h *Hunk, dom string) []fline {
	oldL, newL := h.Old, h.New
	pre := 0
	for pre < len(oldL) && pre < len(newL) && oldL[pre] == newL[pre] {
		pre++
	}
	suf := 0
	for suf < len(oldL)-pre && suf < len(newL)-pre && oldL[len(oldL)-1-suf] == newL[len(newL)-1-suf] {
		suf++
	}
	out = append(out, win[:pre]...)
	midOld := oldL[pre : len(oldL)-suf]
	midNew := newL[pre : len(newL)-suf]
	align := len(midOld)*len(midNew) <= 1<<16
	j := 0
	for _, s := range midNew {
		found := -1
		if align {
			for x := j; x < len(midOld); x++ {
				if midOld[x] == s {
					found = x
					break
				}
			}
		}
		if found >= 0 {
			out = append(out, win[pre+found])
			j = found + 1
		} else {
			out = append(out, fline{text: s, eol: dom})
		}
	}
	out = append(out, win[len(win)-suf:]...)
	return out
}

// findAnchor returns the first line at or after from equal to a after
// trimming trailing whitespace, else the first equal to it after trimming
// both ends, else -1.
func findAnchor(lines []fline, from int, a string) int {
	at := trimWS(a)
	for i := from; i < len(lines); i++ {
		if trimWS(lines[i].text) == at {
			return i
		}
	}
	a = strings.TrimSpace(a)
	for i := from; i < len(lines); i++ {
		if strings.TrimSpace(lines[i].text) == a {
			return i
		}
	}
	return -1
}

// locate finds where hunk k starts in lines, searching from line index from.
// Matching work is bounded: at most workPerLine line comparisons per line
// of file and hunks (plus minWork), so a hostile file of identical lines
// against a long hunk costs linear time, not lines × hunk lines. Past
// the bound Apply fails with *LimitError.
const (
	workPerLine = 64
	minWork     = 1 << 20
)

// matcher finds hunks in one file: its lines, their dominant ending, an
// index of line positions by text (trailing whitespace trimmed: every
// tolerance level needs at least that equality), and the work left.
type matcher struct {
	lines  []fline
	dom    string
	index  map[string][]int
	budget int
}

// spend takes n comparisons from the budget; false when it is gone.
func (m *matcher) spend(n int) bool {
	m.budget -= n
	return m.budget >= 0
}

func (m *matcher) locate(from int, h *Hunk, k int) (int, int, error) {
	lines, dom := m.lines, m.dom
	n := len(lines)
	searchFrom := from
	for _, a := range h.Anchors {
		p := findAnchor(lines, searchFrom, a)
		if p < 0 {
			return 0, 0, &NotFoundError{Hunk: k, Msg: fmt.Sprintf("hunk %d (patch line %d): anchor %q not found after line %d",
				k+1, h.Line, a, searchFrom), Closest: closestAnchor(lines, a)}
		}
		searchFrom = p + 1
	}
	hm := len(h.Old)
	positioned := h.HasRange || h.OldStart > 0
	if hm == 0 {
		pos := n
		switch {
		case h.EOF:
		case len(h.Anchors) > 0:
			pos = searchFrom
		case positioned:
			pos = min(max(h.OldStart, searchFrom), n)
		}
		return pos, levelExact, nil
	}
	atEndOnly := h.EOF || h.OldNoEOL
	starts := m.index[trimWS(h.Old[0])] // every window that can match at any level starts here
	for level := range numLevels {
		var cands []int
		lo, hi := searchFrom, n-hm
		if atEndOnly {
			lo = max(lo, n-hm)
		}
		for _, s := range starts {
			if s < lo || s > hi {
				continue
			}
			if !m.spend(hm) {
				return 0, 0, &LimitError{Hunk: k, Msg: fmt.Sprintf("hunk %d (patch line %d): matching it against this file takes more than %d line comparisons (a file of many equal lines?): give it distinct context", k+1, h.Line, workPerLine)}
			}
			if windowMatches(lines[s:s+hm], h, level, dom) {
				cands = append(cands, s)
			}
		}
		switch {
		case len(cands) == 0:
			continue
		case len(cands) == 1 || len(h.Anchors) > 0:
			return cands[0], level, nil
		case positioned:
			want := h.OldStart - 1
			best := cands[0]
			for _, c := range cands[1:] {
				if abs(c-want) < abs(best-want) {
					best = c
				}
			}
			return best, level, nil
		}
		ls := make([]int, len(cands))
		for i, c := range cands {
			ls[i] = c + 1
		}
		return 0, 0, &AmbiguousError{Hunk: k, Lines: ls}
	}
	where := fmt.Sprintf("after line %d", searchFrom)
	if searchFrom == 0 {
		where = "anywhere"
	}
	if atEndOnly {
		where = "at the end of the file"
	}
	return 0, 0, &NotFoundError{Hunk: k,
		Msg: fmt.Sprintf("hunk %d (patch line %d): its %d old line(s) are not in the file %s, even ignoring trailing whitespace and line endings",
			k+1, h.Line, hm, where),
		Closest: m.closest(h.Old)}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func windowMatches(win []fline, h *Hunk, level int, dom string) bool {
	for i, s := range h.Old {
		if !lineMatches(win[i], s, level, h.CRLF, dom) {
			return false
		}
	}
	return true
}

// closest renders the window of len(old) file lines with the most lines
// equal to old's after trimming whitespace at both ends (the first such
// window on ties), or "" when no line is equal (or finding it would take
// more than the matcher's work budget).
func (m *matcher) closest(old []string) string {
	lines := m.lines
	hm := len(old)
	if hm == 0 || len(lines) == 0 {
		return ""
	}
	byText := map[string][]int{}
	for i, l := range lines {
		k := strings.TrimSpace(l.text)
		byText[k] = append(byText[k], i)
	}
	// A window starting at s (which may hang over either end of the file,
	// so a hunk near an end still finds its lines) scores one for each i
	// with file line s+i equal to old[i].
	score := map[int]int{}
	for i, o := range old {
		ps := byText[strings.TrimSpace(o)]
		if !m.spend(len(ps)) {
			return ""
		}
		for _, j := range ps {
			score[j-i]++
		}
	}
	best, bestScore := 0, 0
	for s, sc := range score {
		if sc > bestScore || sc == bestScore && s < best {
			best, bestScore = s, sc
		}
	}
	if bestScore == 0 {
		return ""
	}
	lo, hi := max(best, 0), min(best+hm, len(lines))
	return render(lines, lo, hi)
}

func closestAnchor(lines []fline, a string) string {
	a = strings.TrimSpace(a)
	if a == "" {
		return ""
	}
	for i, l := range lines {
		if strings.Contains(l.text, a) {
			return render(lines, i, i+1)
		}
	}
	return ""
}

func render(lines []fline, lo, hi int) string {
	var b strings.Builder
	w := len(strconv.Itoa(hi))
	for i := lo; i < hi; i++ {
		fmt.Fprintf(&b, "%*d| %s\n", w, i+1, Visible(lines[i].text+strings.TrimSuffix(lines[i].eol, "\n")))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Visible makes a line's whitespace visible as NotFoundError.Closest
// shows it: a tab as "→", a carriage return as "␍", and each space of the
// trailing run of spaces and tabs as "·".
func Visible(s string) string {
	body := strings.TrimRight(s, " \t\r")
	tail := s[len(body):]
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range body {
		switch r {
		case '\t':
			b.WriteString("→")
		case '\r':
			b.WriteString("␍")
		default:
			b.WriteRune(r)
		}
	}
	for _, r := range tail {
		switch r {
		case '\t':
			b.WriteString("→")
		case '\r':
			b.WriteString("␍")
		default:
			b.WriteString("·")
		}
	}
	return b.String()
}
