package patch

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strconv"
	"strings"
)

const bom = "\xef\xbb\xbf"

// fileLines is the file being patched as lines, without copying it: line
// i is b[starts[i]:starts[i+1]], its ending included.
type fileLines struct {
	b      []byte
	starts []uint32
}

// maxFileLines and maxFileBytes bound what Apply indexes (4 bytes per
// line number and per offset).
const (
	maxFileLines = math.MaxInt32 - 1
	maxFileBytes = math.MaxUint32
)

func splitFile(b []byte) (fileLines, error) {
	if len(b) > maxFileBytes {
		return fileLines{}, &LimitError{Msg: fmt.Sprintf("the file has %d bytes, over the %d a patch can be applied to", len(b), maxFileBytes)}
	}
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	if n > maxFileLines {
		return fileLines{}, &LimitError{Msg: fmt.Sprintf("the file has %d lines, over the %d a patch can be applied to", n, maxFileLines)}
	}
	starts := make([]uint32, 0, n+1)
	for off := 0; off < len(b); {
		starts = append(starts, uint32(off))
		i := bytes.IndexByte(b[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
	}
	starts = append(starts, uint32(len(b)))
	return fileLines{b: b, starts: starts}, nil
}

// n is the number of lines.
func (ls *fileLines) n() int { return len(ls.starts) - 1 }

// line returns line i's text and its ending: "\n", "\r\n", or "" for a
// last line without newline.
func (ls *fileLines) line(i int) ([]byte, string) {
	raw := ls.b[ls.starts[i]:ls.starts[i+1]]
	if n := len(raw); n > 0 && raw[n-1] == '\n' {
		if n > 1 && raw[n-2] == '\r' {
			return raw[:n-2], "\r\n"
		}
		return raw[:n-1], "\n"
	}
	return raw, ""
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

func trimWSBytes(b []byte) []byte { return bytes.TrimRight(b, " \t") }

// eolOK reports whether a file line's ending is the one a hunk expects; a
// last line without newline counts as ending with dom, the dominant one.
func eolOK(eol, dom string, crlf bool) bool {
	if eol == "" {
		eol = dom
	}
	return (eol == "\r\n") == crlf
}

func lineMatches(text []byte, eol, s string, level int, crlf bool, dom string) bool {
	switch level {
	case levelExact:
		return string(text) == s && eolOK(eol, dom, crlf)
	case levelTrailingWS:
		return string(trimWSBytes(text)) == trimWS(s) && eolOK(eol, dom, crlf)
	default:
		return string(trimWSBytes(text)) == trimWS(s)
	}
}

// Apply applies hunks, in order, to content and returns the new content.
// See the package doc for the rules.
func Apply(content []byte, hunks []Hunk) (*Result, error) {
	var st hunkStats
	for k := range hunks {
		st.add(&hunks[k])
	}
	return apply(content, st, func(fn func(*Hunk) error) error {
		for k := range hunks {
			if err := fn(&hunks[k]); err != nil {
				return err
			}
		}
		return nil
	})
}

// Apply applies an Update's hunks to content as the package function
// Apply does, reading them from the patch one at a time: besides content,
// it holds the result, 12 bytes per line of content and 20 per hunk.
func (f *File) Apply(content []byte) (*Result, error) { return apply(content, f.stats, f.EachHunk) }

// Placements calls fn with each of f's hunks, in order, and where r
// (f.Apply's result) placed it. The Placed and its slices are reused for
// the next hunk: fn must copy what it keeps.
func (f *File) Placements(r *Result, fn func(*Placed) error) error {
	k, delta := 0, 0
	var p Placed
	return f.EachHunk(func(h *Hunk) error {
		if k >= len(r.At) {
			return fmt.Errorf("patch: the result places %d hunks, and the file has more", len(r.At))
		}
		at := int(r.At[k])
		k++
		p = Placed{OldLine: at, NewLine: at + delta, Old: h.Old, New: h.New}
		delta += len(h.New) - len(h.Old)
		return fn(&p)
	})
}

// apply applies the hunks each gives (st sums them up) to content.
func apply(content []byte, st hunkStats, each func(func(*Hunk) error) error) (*Result, error) {
	body := content
	hasBOM := bytes.HasPrefix(content, []byte(bom))
	if hasBOM {
		body = content[len(bom):]
	}
	if hasBOM && len(body) > 0 && st.bomInOld {
		// A unified diff (git diff, diff -u) carries the BOM as text of
		// line 1: match it, and keep or drop it, as that text.
		hasBOM, body = false, content
	}
	ls, err := splitFile(body)
	if err != nil {
		return nil, err
	}
	n := ls.n()
	crlfs := bytes.Count(body, []byte("\r\n"))
	lfs := bytes.Count(body, []byte{'\n'}) - crlfs
	dom := "\n"
	if crlfs > lfs || (crlfs == 0 && lfs == 0 && st.hunks > 0 && st.firstCRLF) {
		dom = "\r\n"
	}
	wantFinalNL := n == 0 || body[len(body)-1] == '\n'

	res := &Result{Matched: make([]string, 0, st.hunks), At: make([]int32, 0, st.hunks)}
	size := len(content) + 16 + max(0, st.newBytes+2*st.newLines-st.oldBytes-st.oldLines)
	o := &outBuf{b: make([]byte, 0, size), ls: &ls, dom: dom}
	if hasBOM {
		o.b = append(o.b, bom...)
	}
	m := &matcher{ls: &ls, dom: dom, budget: workPerLine*(n+st.oldLines) + minWork}
	from, k := 0, 0
	err = each(func(h *Hunk) error {
		start, level, err := m.locate(from, h, k)
		if err != nil {
			return err
		}
		end := start + len(h.Old)
		res.At = append(res.At, int32(start+1))
		o.fileLines(from, start)
		o.hunk(start, h)
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
		k++
		return nil
	})
	if err != nil {
		return nil, err
	}
	o.fileLines(from, n)
	o.finish(wantFinalNL)
	res.Content = o.b
	return res, nil
}

// outBuf is the new content as it is written, line by line: lines of the
// file keep their own ending, lines a hunk adds take the dominant one, a
// line without ending gets one when another follows, and finish settles
// the last line's.
type outBuf struct {
	b     []byte
	ls    *fileLines
	dom   string
	lines int // lines written
	end   int // length of the last line's ending (0: none)
}

// sep ends the last line, if it has no ending, before another follows.
func (o *outBuf) sep() {
	if o.lines > 0 && o.end == 0 {
		o.b = append(o.b, o.dom...)
		o.end = len(o.dom)
	}
}

// fileLines copies the file's lines i to j-1.
func (o *outBuf) fileLines(i, j int) {
	if i >= j {
		return
	}
	o.sep()
	o.b = append(o.b, o.ls.b[o.ls.starts[i]:o.ls.starts[j]]...)
	_, eol := o.ls.line(j - 1)
	o.lines += j - i
	o.end = len(eol)
}

// newLine writes a line a hunk adds.
func (o *outBuf) newLine(s string) {
	o.sep()
	o.b = append(o.b, s...)
	o.b = append(o.b, o.dom...)
	o.lines++
	o.end = len(o.dom)
}

// finish gives the last line a final newline, or takes it away.
func (o *outBuf) finish(wantFinalNL bool) {
	switch {
	case o.lines == 0:
	case wantFinalNL:
		o.sep()
	default:
		o.b = o.b[:len(o.b)-o.end]
		o.end = 0
	}
}

// hunk writes the hunk's New lines, which replace the file lines from
// start. Lines the hunk keeps (equal Old and New lines: the common prefix
// and suffix, then an in-order greedy pairing of the rest) are copied from
// the file, so they keep their own whitespace and endings; the others take
// the dominant ending.
func (o *outBuf) hunk(start int, h *Hunk) {
	oldL, newL := h.Old, h.New
	pre := 0
	for pre < len(oldL) && pre < len(newL) && oldL[pre] == newL[pre] {
		pre++
	}
	suf := 0
	for suf < len(oldL)-pre && suf < len(newL)-pre && oldL[len(oldL)-1-suf] == newL[len(newL)-1-suf] {
		suf++
	}
	o.fileLines(start, start+pre)
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
			o.fileLines(start+pre+found, start+pre+found+1)
			j = found + 1
		} else {
			o.newLine(s)
		}
	}
	end := start + len(oldL)
	o.fileLines(end-suf, end)
}

// findAnchor returns the first line at or after from equal to a after
// trimming trailing whitespace, else the first equal to it after trimming
// both ends, else -1.
func (m *matcher) findAnchor(from int, a string) int {
	n := m.ls.n()
	at := trimWS(a)
	for i := from; i < n; i++ {
		if t, _ := m.ls.line(i); string(trimWSBytes(t)) == at {
			return i
		}
	}
	a = strings.TrimSpace(a)
	for i := from; i < n; i++ {
		if t, _ := m.ls.line(i); string(bytes.TrimSpace(t)) == a {
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
	ls  *fileLines
	dom string
	// index holds, for each line, the hash of its text with trailing
	// whitespace trimmed (the high 32 bits) and its number (the low 32),
	// sorted: the lines that may start a hunk's match are a run of it.
	// Built when a hunk first needs it.
	index  []uint64
	seed   maphash.Seed
	budget int
	cands  []int
}

// spend takes n comparisons from the budget; false when it is gone.
func (m *matcher) spend(n int) bool {
	m.budget -= n
	return m.budget >= 0
}

func (m *matcher) buildIndex() {
	m.seed = maphash.MakeSeed()
	n := m.ls.n()
	m.index = make([]uint64, n)
	for i := range n {
		t, _ := m.ls.line(i)
		m.index[i] = maphash.Bytes(m.seed, trimWSBytes(t))>>32<<32 | uint64(i)
	}
	slices.Sort(m.index)
}

func (m *matcher) locate(from int, h *Hunk, k int) (int, int, error) {
	n := m.ls.n()
	searchFrom := from
	for _, a := range h.Anchors {
		p := m.findAnchor(searchFrom, a)
		if p < 0 {
			return 0, 0, &NotFoundError{Hunk: k, Msg: fmt.Sprintf("hunk %d (patch line %d): anchor %q not found after line %d",
				k+1, h.Line, a, searchFrom), Closest: m.closestAnchor(a)}
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
	if m.index == nil {
		m.buildIndex()
	}
	atEndOnly := h.EOF || h.OldNoEOL
	lo, hi := searchFrom, n-hm
	if atEndOnly {
		lo = max(lo, n-hm)
	}
	// Every window that can match at any level starts with a line whose
	// text, trailing whitespace trimmed, is the first Old line's.
	key := trimWS(h.Old[0])
	hash := maphash.String(m.seed, key) >> 32 << 32
	first, _ := slices.BinarySearch(m.index, hash|uint64(lo))
	for level := range numLevels {
		cands := m.cands[:0]
		for _, e := range m.index[first:] {
			s := int(uint32(e))
			if e&^math.MaxUint32 != hash || s > hi {
				break
			}
			if t, _ := m.ls.line(s); string(trimWSBytes(t)) != key {
				continue // another text of the same hash
			}
			if !m.spend(hm) {
				return 0, 0, &LimitError{Hunk: k, Msg: fmt.Sprintf("hunk %d (patch line %d): matching it against this file takes more than %d line comparisons (a file of many equal lines?): give it distinct context", k+1, h.Line, workPerLine)}
			}
			if m.windowMatches(s, h, level) {
				cands = append(cands, s)
			}
		}
		m.cands = cands
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

// windowMatches reports whether the file's lines from s match h's Old
// lines at level.
func (m *matcher) windowMatches(s int, h *Hunk, level int) bool {
	for i, o := range h.Old {
		if t, eol := m.ls.line(s + i); !lineMatches(t, eol, o, level, h.CRLF, m.dom) {
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
	n := m.ls.n()
	hm := len(old)
	if hm == 0 || n == 0 {
		return ""
	}
	byText := map[string][]int{}
	for i := range n {
		t, _ := m.ls.line(i)
		k := string(bytes.TrimSpace(t))
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
	lo, hi := max(best, 0), min(best+hm, n)
	return m.render(lo, hi)
}

func (m *matcher) closestAnchor(a string) string {
	a = strings.TrimSpace(a)
	if a == "" {
		return ""
	}
	ab := []byte(a)
	for i := range m.ls.n() {
		if t, _ := m.ls.line(i); bytes.Contains(t, ab) {
			return m.render(i, i+1)
		}
	}
	return ""
}

func (m *matcher) render(lo, hi int) string {
	var b strings.Builder
	w := len(strconv.Itoa(hi))
	for i := lo; i < hi; i++ {
		t, eol := m.ls.line(i)
		fmt.Fprintf(&b, "%*d| %s\n", w, i+1, Visible(string(t)+strings.TrimSuffix(eol, "\n")))
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
