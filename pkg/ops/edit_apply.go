package ops

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// Edits are matched against the original text, each on its own (several
// edits never see each other's output), must not overlap, and are applied
// together in one pass; the diff comes from the replaced spans. Every step
// is linear in the text plus the number of replacements: a million
// replacements on one line, or thousands of edits over megabytes, cost
// one pass each, and no replacement is ever held as an object of its own.

// With sequential, edit k is matched against the text edits 1..k-1 left
// (applySequential): each step is one edit resolved and applied as above,
// and the diff is rendered from the steps' replacements composed over the
// original (editSet.runs). With loose-indent, an edit whose old text is
// nowhere exactly falls back to a line-by-line match (looseWindows); its
// replacements are held one by one (editSet.fixed).

// resolved is one edit matched against the original text.
type resolved struct {
	idx      int    // 0-based place among the edits
	old, new []byte // as matched and written (CRLF-adjusted)
	count    int    // replacements it makes
	loose    bool   // matched by loose-indent's line-by-line fallback
}

// maxEdits is how many edits one call may make (a span packs its edit's
// number in 16 bits).
const maxEdits = 1<<16 - 1

// editSet is the edits resolved against one text, with (for several
// edits) every replacement found in one pass, in order of position.
type editSet struct {
	eds   []*resolved
	spans []uint64 // start<<16 | edit; nil for one edit, which scans as it goes
	// fixed, when not nil, is every replacement, in order of position:
	// a loose match's old text is the file's own lines, which may also
	// occur elsewhere, so it is held where it was found, not searched
	// for.
	fixed []span
	// runs, when composed, are the runs of the original that text, the
	// edited text, still has (applySequential): the replacements of edits
	// applied one after another, composed over the original, are the
	// stretches between them (changes).
	composed   bool
	runs, text []byte
}

// matchCtx is how a list of edits is matched.
type matchCtx struct {
	loose bool // loose-indent: a line-by-line fallback for old text not found exactly
	base  int  // the place of the first of the edits among the call's (sequential: one at a time)
	total int  // how many edits the call has: with more than one, messages name the edit
	// orig is the call's original text when the edits are matched
	// against what earlier ones left (sequential), else nil.
	orig []byte
}

// label is how messages name edit i ("edit 3: "), or "" for a call's
// only edit.
func (mc matchCtx) label(i int) string {
	if mc.total <= 1 {
		return ""
	}
	return fmt.Sprintf("edit %d: ", mc.base+i+1)
}

// replaceAllHint is ambiguous's other way out, in the words of the face
// (the command line's --all, a tool's "all": true; in a list of edits,
// that edit's "all"); a face without it (the reference profile's
// edit_file) says only to add context.
func (mc matchCtx) replaceAllHint() fserr.Hint {
	if mc.total > 1 {
		return fserr.Hint{Option: "edits", Text: `(or replace every occurrence: "all": true in that edit of %s)`}
	}
	return fserr.Hint{Option: "all", Text: "(or replace every occurrence: %s)"}
}

// where names the text the edits are matched against: "" for the
// original, " as edit 1 left it" with sequential.
func (mc matchCtx) where() string {
	switch {
	case mc.orig == nil || mc.base == 0:
		return ""
	case mc.base == 1:
		return " as edit 1 left it"
	}
	return fmt.Sprintf(" as edits 1 to %d left it", mc.base)
}

// resolveEdits matches every edit against data: text_not_found (with the
// closest lines) when one is absent, ambiguous when one matches more than
// once without All. Several edits are matched in one pass (matchMany).
func resolveEdits(data []byte, specs []EditSpec, path string) (*editSet, error) {
	return resolveIn(data, specs, path, matchCtx{total: len(specs)})
}

// resolveIn is resolveEdits as mc says: with mc.loose, an edit found
// nowhere exactly is matched line by line (looseWindows), and its
// matches make the set's replacements fixed.
func resolveIn(data []byte, specs []EditSpec, path string, mc matchCtx) (*editSet, error) {
	if len(specs) > maxEdits {
		return nil, usagef(path, "%d edits: at most %d go in one call", len(specs), maxEdits)
	}
	if slices.ContainsFunc(specs, func(e EditSpec) bool { return e.ExpectCount != nil && !e.All }) {
		specs = slices.Clone(specs)
		for i := range specs {
			if specs[i].ExpectCount != nil {
				specs[i].All = true // expect-count implies all
			}
		}
	}
	set := &editSet{eds: make([]*resolved, len(specs))}
	for i, e := range specs {
		set.eds[i] = &resolved{idx: i, old: []byte(e.Old), new: []byte(e.New)}
	}
	// count counts each edit's occurrences; with spans, eds is every
	// edit of the set, and its replacements are listed too (matchMany).
	count := func(eds []*resolved, spans bool) error {
		if len(specs) == 1 {
			eds[0].count = bytes.Count(data, eds[0].old)
			return nil
		}
		pats := make([][]byte, len(eds))
		for i, e := range eds {
			pats[i] = e.old
		}
		counts, sps, ok := matchMany(data, pats, spans)
		if !ok {
			return &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Path: path,
				Msg: fmt.Sprintf("the edits match %s more than %d times over: make their old texts longer", path, maxEditMatches(len(data)))}
		}
		for i, e := range eds {
			e.count = counts[i]
		}
		if spans {
			// pats are the set's edits, in order: no renumbering. Not nil,
			// which would be one edit's (spans.next).
			set.spans = append(sps, []uint64{}...)
		}
		return nil
	}
	if err := count(set.eds, true); err != nil {
		return nil, err
	}
	// A CRLF file, old text written with LF: match and write CRLF.
	var crlf []*resolved
	if bytes.Contains(data, []byte("\r\n")) {
		for _, e := range set.eds {
			if e.count == 0 && bytes.Contains(e.old, []byte("\n")) && !bytes.Contains(e.old, []byte("\r\n")) {
				crlf = append(crlf, &resolved{idx: e.idx, old: toCRLF(e.old), new: toCRLF(e.new)})
			}
		}
	}
	if len(crlf) > 0 {
		if len(specs) == 1 {
			crlf[0].count = bytes.Count(data, crlf[0].old)
		} else if err := count(crlf, false); err != nil {
			return nil, err
		}
		found := false
		for _, e := range crlf {
			if e.count > 0 {
				set.eds[e.idx], found = e, true
			}
		}
		// The replacements are listed again, for the edits as they now
		// stand: a list held to the first overlap is only complete for
		// the patterns it was made for.
		if found && len(specs) > 1 {
			if err := count(set.eds, true); err != nil {
				return nil, err
			}
		}
	}
	var loose []span // the loose matches' replacements, edit by edit
	for i, e := range specs {
		r := set.eds[i]
		which, where := mc.label(i), mc.where()
		if r.count == 0 && mc.loose {
			ws := looseWindows(data, e.Old)
			total := len(ws)
			switch {
			case e.ExpectCount != nil && total != *e.ExpectCount && total > 0:
				return nil, countErr(path, which, where, total, *e.ExpectCount, " when each line's leading and trailing blanks are ignored, at lines "+windowLines(ws, total))
			case total > 1 && !e.All:
				return nil, fserr.Errorf(fserr.CodeAmbiguous, path, "%sthe old text is not in %s%s as it is, and occurs %d times when each line's leading and trailing blanks are ignored, at lines %s: include more of the surrounding lines in the old text to make it unique",
					which, path, where, total, windowLines(ws, total)).WithHint(mc.replaceAllHint())
			case total > 0:
				for _, w := range ws {
					lr := &resolved{idx: i, old: data[w.start:w.end], new: reindent(data, w, e.Old, e.New), count: 1, loose: true}
					loose = append(loose, span{w.start, lr})
				}
				r = &resolved{idx: i, old: loose[len(loose)-1].e.old, new: loose[len(loose)-1].e.new, count: total, loose: true}
				set.eds[i] = r
			}
		}
		switch {
		case r.count == 0 && e.ExpectCount != nil:
			return nil, fserr.Errorf(fserr.CodeTextNotFound, path, "%sthe old text occurs 0 times in %s%s, not %d (expect-count)%s", which, path, where, *e.ExpectCount, closest(data, e.Old))
		case e.ExpectCount != nil && r.count != *e.ExpectCount:
			return nil, countErr(path, which, where, r.count, *e.ExpectCount, ", at "+firstLines(data, r.old, r.count)+" (line:column)")
		case r.count == 0:
			hint := ""
			if mc.orig != nil && (bytes.Contains(mc.orig, []byte(e.Old)) || bytes.Contains(mc.orig, toCRLF([]byte(e.Old)))) {
				hint = " (the original text has it: an edit before this one changed it)"
			}
			also := ""
			if mc.loose {
				also = ", not even line by line with leading and trailing blanks ignored"
			}
			return nil, fserr.Errorf(fserr.CodeTextNotFound, path, "%sthe old text is not in %s%s%s%s%s", which, path, where, also, hint, closest(data, e.Old))
		case r.count > 1 && !e.All:
			return nil, fserr.Errorf(fserr.CodeAmbiguous, path, "%sthe old text occurs %d times in %s%s, at %s (line:column): add context to make it unique",
				which, r.count, path, where, firstLines(data, r.old, r.count)).WithHint(mc.replaceAllHint())
		}
	}
	if len(loose) > 0 {
		// Every replacement is held where it was found: the exact ones
		// (whose edits did not fall back) and the loose ones, by position.
		var all []span
		it := newSpans(data, set)
		for sp, ok := it.next(); ok; sp, ok = it.next() {
			if !sp.e.loose {
				all = append(all, sp)
			}
		}
		all = append(all, loose...)
		slices.SortStableFunc(all, func(a, b span) int { return a.start - b.start })
		set.fixed = all
	}
	return set, nil
}

// countErr is an edit whose old text occurs have times, not the want
// its expect-count names: ambiguous when more, text_not_found when fewer.
func countErr(path, which, where string, have, want int, at string) error {
	code := fserr.CodeAmbiguous
	if have < want {
		code = fserr.CodeTextNotFound
	}
	return fserr.Errorf(code, path, "%sthe old text occurs %d times in %s%s, not %d (expect-count)%s: nothing was changed", which, have, path, where, want, at)
}

// maxListedLines is how many occurrences an ambiguous error lists.
const maxListedLines = 10

// firstLines lists the first occurrences of old as 1-based line:column
// (the byte column in its line), each once (at most maxListedLines, then
// how many more), in one pass.
func firstLines(data, old []byte, count int) string {
	var b strings.Builder
	line, pos, lineStart := 1, 0, 0
	for n := 0; n < count && n < maxListedLines; n++ {
		i := bytes.Index(data[pos:], old)
		if nls := bytes.Count(data[pos:pos+i], nl); nls > 0 {
			line += nls
			lineStart = pos + bytes.LastIndexByte(data[pos:pos+i], '\n') + 1
		}
		if n > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d:%d", line, pos+i-lineStart+1)
		if nls := bytes.Count(old, nl); nls > 0 {
			line += nls
			lineStart = pos + i + bytes.LastIndexByte(old, '\n') + 1
		}
		pos += i + len(old)
	}
	if count > maxListedLines {
		fmt.Fprintf(&b, " and %d more", count-maxListedLines)
	}
	return b.String()
}

// span is one replacement: edit e at data[start:start+len(e.old)].
type span struct {
	start int
	e     *resolved
}

// spans yields the replacements of an edit set in order of position: for
// one edit, found as it goes; for several, from the set's list.
type spans struct {
	data []byte
	set  *editSet
	i    int // next in set.spans, or where the one edit's next search starts
	// A composed set's replacements, the last valid until the next
	// call.
	comp *changes
	last resolved
}

func newSpans(data []byte, set *editSet) *spans { return &spans{data: data, set: set} }

func (it *spans) next() (span, bool) {
	set := it.set
	if set.composed {
		if it.comp == nil {
			it.comp = &changes{data: it.data, text: set.text, rd: runReader{b: set.runs}}
		}
		from, to, tat, tend, ok := it.comp.next()
		if !ok {
			return span{}, false
		}
		it.last = resolved{idx: it.i, old: it.data[from:to], new: set.text[tat:tend], count: 1}
		it.i++
		return span{from, &it.last}, true
	}
	if set.fixed != nil {
		if it.i >= len(set.fixed) {
			return span{}, false
		}
		it.i++
		return set.fixed[it.i-1], true
	}
	if set.spans == nil {
		e := set.eds[0]
		j := bytes.Index(it.data[it.i:], e.old)
		if j < 0 {
			return span{}, false
		}
		sp := span{it.i + j, e}
		it.i = sp.start + len(e.old)
		return sp, true
	}
	// Several edits: the listed spans (matchMany), each checked against
	// the text.
	for it.i < len(set.spans) {
		v := set.spans[it.i]
		it.i++
		start, e := int(v>>16), set.eds[v&0xffff]
		if start+len(e.old) <= len(it.data) && bytes.HasPrefix(it.data[start:], e.old) {
			return span{start, e}, true
		}
	}
	return span{}, false
}

// applyAll replaces every span in one pass over data. Two edits whose
// spans overlap are a usage error naming both; a result that would be
// over limit bytes (limitName) is too_large before it is built.
func applyAll(data []byte, set *editSet, path string, limit int64, limitName string) ([]byte, int, error) {
	return applySpans(nil, data, set, path, limit, limitName, nil)
}

// applySpans is applyAll, telling each replacement to each (if not nil)
// in order of position, and writing into dst's room when it has enough.
func applySpans(dst, data []byte, set *editSet, path string, limit int64, limitName string, each func(span)) ([]byte, int, error) {
	size := int64(len(data))
	tooLarge := func() error {
		return &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Path: path,
			Msg: fmt.Sprintf("the edited %s would be over %s = %d", path, limitName, limit)}
	}
	// The exact edits count by their counts, a loose match (held in
	// set.fixed) by itself: a fixed list holds the exact replacements only
	// up to the first overlap (matchMany).
	for _, e := range set.eds {
		if e.loose {
			continue
		}
		// count*len(old) <= len(data), and len(new) is bounded by what a
		// call can pass: no term overflows, but the sum may pass limit.
		size += int64(e.count) * (int64(len(e.new)) - int64(len(e.old)))
		if size > limit {
			return nil, 0, tooLarge()
		}
	}
	for _, sp := range set.fixed {
		if set.eds != nil && !sp.e.loose {
			continue
		}
		if size += int64(len(sp.e.new)) - int64(len(sp.e.old)); size > limit {
			return nil, 0, tooLarge()
		}
	}
	out := dst[:0]
	if int64(cap(dst)) < size {
		out = make([]byte, 0, max(size, 0))
	}
	it := newSpans(data, set)
	pos, n := 0, 0
	var prev *resolved
	for {
		sp, ok := it.next()
		if !ok {
			break
		}
		if sp.start < pos {
			line := 1 + bytes.Count(data[:sp.start], nl)
			return nil, 0, usagef(path, "edits %d and %d overlap at line %d: each edit is matched against the original text, so their old texts must not share bytes", prev.idx+1, sp.e.idx+1, line)
		}
		out = append(append(out, data[pos:sp.start]...), sp.e.new...)
		if each != nil {
			each(sp)
		}
		pos = sp.start + len(sp.e.old)
		prev = sp.e
		n++
	}
	return append(out, data[pos:]...), n, nil
}

// A group is a run of replacements on lines that touch, widened to whole
// lines: the unit of a diff (as go-udiff's lineEdits makes them, so the
// output is byte for byte the diff of the whole file). Its new text is a
// piece of the edited output, never a copy.
type group struct {
	start, end int    // whole lines of the original
	new        []byte // what replaces them: a slice of the edited text
}

// groups yields the groups of the spans of set over data, whose edited
// text is out, in order.
func groups(data, out []byte, set *editSet, yield func(g *group)) {
	// go-udiff leaves edits alone when every one of them already covers
	// whole lines, and otherwise merges edits on touching lines first.
	aligned := true
	it := newSpans(data, set)
	for sp, ok := it.next(); ok && aligned; sp, ok = it.next() {
		end := sp.start + len(sp.e.old)
		aligned = sp.start < len(data) && (sp.start == 0 || data[sp.start-1] == '\n') &&
			data[end-1] == '\n' && (len(sp.e.new) == 0 || sp.e.new[len(sp.e.new)-1] == '\n')
	}
	var g group
	var nstart, nend int // g.new as a range of out
	delta := 0           // len(out) - len(data) over the spans so far
	open := false
	flush := func() {
		if !open {
			return
		}
		if !aligned {
			// Widen to whole lines, as go-udiff's expandEdit does: the
			// text around the span is the same on both sides.
			ls := bytes.LastIndexByte(data[:g.start], '\n') + 1
			head := g.start - ls
			n := out[nstart:nend]
			endsLine := len(n) > 0 && n[len(n)-1] == '\n' || len(n) == 0 && head == 0
			end := g.end
			if end > 0 && data[end-1] != '\n' || !endsLine {
				if i := bytes.IndexByte(data[end:], '\n'); i < 0 {
					g.end = len(data)
				} else {
					g.end = end + i + 1
				}
			}
			g.start, nstart, nend = ls, nstart-head, nend+(g.end-end)
		}
		if trimLines {
			// Lines a replacement leaves as they were are context, not
			// '-' and '+': trim them off both ends of the group. A
			// group that changes nothing is no hunk.
			o, n := data[g.start:g.end], out[nstart:nend]
			for len(o) > 0 && len(n) > 0 {
				lo, ln := lineLen(o), lineLen(n)
				if !bytes.Equal(o[:lo], n[:ln]) {
					break
				}
				o, n, g.start, nstart = o[lo:], n[ln:], g.start+lo, nstart+ln
			}
			for len(o) > 0 && len(n) > 0 {
				lo, ln := lastLineStart(o), lastLineStart(n)
				if !bytes.Equal(o[lo:], n[ln:]) {
					break
				}
				g.end, nend = g.end-(len(o)-lo), nend-(len(n)-ln)
				o, n = o[:lo], n[:ln]
			}
			if len(o) == 0 && len(n) == 0 {
				open = false
				return
			}
		}
		g.new = out[nstart:nend]
		yield(&g)
		open = false
	}
	it = newSpans(data, set)
	for sp, ok := it.next(); ok; sp, ok = it.next() {
		end := sp.start + len(sp.e.old)
		if !(open && !aligned && bytes.IndexByte(data[g.end:sp.start], '\n') < 0) {
			flush()
			g = group{start: sp.start}
			nstart = sp.start + delta
			open = true
		}
		delta += len(sp.e.new) - len(sp.e.old)
		g.end, nend = end, end+delta
	}
	flush()
}

// trimLines makes the diff show only the lines a replacement changes (a
// variable so tests can compare the untrimmed diff with go-udiff's).
var trimLines = true

// lineLen is the length of b's first line, with its newline.
func lineLen(b []byte) int {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return i + 1
	}
	return len(b)
}

// lastLineStart is where b's last line starts (b's final newline, if any,
// ends that line).
func lastLineStart(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	return bytes.LastIndexByte(b[:len(b)-1], '\n') + 1
}

// diffContext is the unified diff's lines of context.
const diffContext = 3

// renderDiff is the unified diff of applying eds to data, rendered from
// the groups in one pass (the format of go-udiff's ToUnified, which counts
// each edit's line number from the start of the file again).
func renderDiff(from, to string, data, edited []byte, set *editSet) string {
	var out strings.Builder // its String is free: the diff is copied once, hunk by hunk
	var body bytes.Buffer
	var hunk struct {
		open             bool
		fromLine, toLine int
		fromN, toN       int
	}
	line, lineOff := 0, 0 // the number of the line that starts at lineOff
	lineAt := func(off int) int {
		line += bytes.Count(data[lineOff:off], nl)
		lineOff = off
		return line
	}
	last, lastOff, toLine := 0, 0, 0
	emit := func(kind byte, l []byte) {
		body.WriteByte(kind)
		body.Write(l)
		if len(l) == 0 || l[len(l)-1] != '\n' {
			body.WriteString("\n\\ No newline at end of file\n")
		}
		switch kind {
		case '-':
			hunk.fromN++
		case '+':
			hunk.toN++
		default:
			hunk.fromN++
			hunk.toN++
		}
	}
	// equal adds up to n lines of context from offset off; it returns how
	// many there were before the end of data.
	equal := func(off, n int) int {
		k := 0
		for ; k < n && off < len(data); k++ {
			l := nextLine(data, off)
			emit(' ', l)
			off += len(l)
		}
		return k
	}
	closeHunk := func() {
		if !hunk.open {
			return
		}
		equal(lastOff, diffContext)
		if out.Len() == 0 {
			fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
		}
		out.WriteString("@@")
		writeRange(&out, '-', hunk.fromLine, hunk.fromN)
		writeRange(&out, '+', hunk.toLine, hunk.toN)
		out.WriteString(" @@\n")
		out.Write(body.Bytes())
		body.Reset()
		hunk.open = false
	}
	groups(data, edited, set, func(g *group) {
		start := lineAt(g.start)
		end := start + bytes.Count(data[g.start:g.end], nl)
		if g.end == len(data) && len(data) > 0 && data[len(data)-1] != '\n' {
			end++ // EOF counts as an implicit newline
		}
		switch {
		case hunk.open && start == last:
		case hunk.open && start <= last+2*diffContext:
			equal(lastOff, start-last)
		default:
			closeHunk()
			toLine += start - last
			hunk.open, hunk.fromN, hunk.toN = true, 0, 0
			// Up to diffContext lines before the group.
			ctxOff, k := g.start, 0
			for ; k < diffContext && ctxOff > 0; k++ {
				ctxOff = bytes.LastIndexByte(data[:ctxOff-1], '\n') + 1
			}
			delta := equal(ctxOff, k)
			hunk.fromLine, hunk.toLine = start+1-delta, toLine+1-delta
		}
		for off := g.start; off < g.end; {
			l := nextLine(data, off)
			emit('-', l)
			off += len(l)
		}
		last, lastOff = end, g.end
		for off := 0; off < len(g.new); {
			l := nextLine(g.new, off)
			emit('+', l)
			off += len(l)
			toLine++
		}
	})
	closeHunk()
	return out.String()
}

// nextLine is the line of b starting at off, with its newline.
func nextLine(b []byte, off int) []byte {
	if i := bytes.IndexByte(b[off:], '\n'); i >= 0 {
		return b[off : off+i+1]
	}
	return b[off:]
}

// writeRange writes one side of a hunk header as GNU diff -u does.
func writeRange(b *strings.Builder, sign byte, line, n int) {
	switch {
	case n > 1:
		fmt.Fprintf(b, " %c%d,%d", sign, line, n)
	case line == 1 && n == 0:
		fmt.Fprintf(b, " %c0,0", sign) // GNU's way of saying "an empty file"
	default:
		fmt.Fprintf(b, " %c%d", sign, line)
	}
}

// hintBudget bounds the work of the text_not_found hint: the cells of the
// longest-common-run tables it fills (about 50 ms), then it stops and says
// how far it looked.
const hintBudget = 50_000_000

// closest names the lines most like the old text's first non-blank line,
// by the longest run of characters they share: the best three, by score,
// then line, with tabs and trailing spaces made visible. For the best one
// it says where the old text, laid over the file from there, first
// differs, and how (indentation, trailing space, a column): an agent can
// act on that. Nothing is ever applied fuzzily.
func closest(data []byte, old string) string {
	oldLines := strings.Split(old, "\n")
	var probe []byte
	at := 0 // the probe's line in the old text
	for i, l := range oldLines {
		if t := strings.TrimSpace(l); t != "" {
			probe, at = []byte(t), i
			break
		}
	}
	if len(probe) == 0 {
		return ""
	}
	need := len(probe) // a line must share half of it, or 8 bytes
	if len(probe) > 200 {
		probe = probe[:200]
	}
	type cand struct {
		line, score int
		text        []byte
	}
	var best []cand
	var lcs commonRunner
	spent, lineNo, stoppedAt := 0, 0, 0
	for off := 0; off < len(data); {
		l := nextLine(data, off)
		off += len(l)
		lineNo++
		t := bytes.TrimSpace(l)
		if len(t) == 0 {
			continue
		}
		if spent += len(probe) * min(len(t), 400); spent > hintBudget {
			stoppedAt = lineNo
			break
		}
		sc := lcs.run(probe, t)
		if sc*2 < need && sc < 8 {
			continue
		}
		c := cand{lineNo, sc, bytes.TrimRight(l, "\r\n")}
		i := len(best)
		for i > 0 && best[i-1].score < sc {
			i--
		}
		if i < 3 {
			best = append(best[:i], append([]cand{c}, best[i:]...)...)
			if len(best) > 3 {
				best = best[:3]
			}
		}
	}
	within := ""
	if stoppedAt > 0 {
		within = fmt.Sprintf(" among the first %d lines", stoppedAt-1)
	}
	if len(best) == 0 {
		return "; no similar line" + within
	}
	var b strings.Builder
	b.WriteString("; closest" + within + ":")
	for _, c := range best {
		t := c.text
		if len(t) > 120 {
			t = append(t[:120:120], "…"...)
		}
		fmt.Fprintf(&b, " line %d: %s;", c.line, visible(string(t)))
	}
	if d := firstDifference(data, best[0].line-at, oldLines); d != "" {
		b.WriteString(" " + d)
		return b.String()
	}
	return strings.TrimSuffix(b.String(), ";")
}

// visible quotes a line with its tabs as \t and its trailing spaces as
// '·', so indentation can be read off an error message.
func visible(s string) string {
	body := strings.TrimRight(s, " ")
	q := strconv.Quote(body)
	return q[:len(q)-1] + strings.Repeat("·", len(s)-len(body)) + `"`
}

// firstDifference lays the old text's lines over the file's from line
// first (1-based) and says where and how they first differ.
func firstDifference(data []byte, first int, oldLines []string) string {
	if first < 1 {
		return ""
	}
	off := 0
	for n := 1; n < first && off < len(data); n++ {
		off += len(nextLine(data, off))
	}
	for j, o := range oldLines {
		if off >= len(data) {
			return fmt.Sprintf("the file ends before line %d of the old text", j+1)
		}
		fl := nextLine(data, off)
		off += len(fl)
		f := strings.TrimRight(string(fl), "\n")
		f = strings.TrimSuffix(f, "\r")
		if f == o {
			continue
		}
		where := fmt.Sprintf("line %d of the old text differs from line %d of the file", j+1, first+j)
		fi, oi := leading(f), leading(o)
		switch {
		case f[len(fi):] == o[len(oi):]:
			return fmt.Sprintf("%s in its indentation: the file indents with %s where the old text has %s", where, describeSpace(fi), describeSpace(oi))
		case strings.TrimRight(f, " \t") == strings.TrimRight(o, " \t"):
			return fmt.Sprintf("%s in its trailing space: the file has %s where the old text has %s",
				where, describeSpace(f[len(strings.TrimRight(f, " \t")):]), describeSpace(o[len(strings.TrimRight(o, " \t")):]))
		}
		col := 0
		for col < len(f) && col < len(o) && f[col] == o[col] {
			col++
		}
		return fmt.Sprintf("%s at column %d: the file has %s where the old text has %s", where, col+1, visible(clip(f[col:], 24)), visible(clip(o[col:], 24)))
	}
	return ""
}

func leading(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// describeSpace names a run of blanks: "a tab", "4 spaces", "nothing".
func describeSpace(s string) string {
	if s == "" {
		return "nothing"
	}
	tabs, spaces := strings.Count(s, "\t"), strings.Count(s, " ")
	name := func(n int, one, many string) string {
		if n == 1 {
			return "a " + one
		}
		return fmt.Sprintf("%d %s", n, many)
	}
	switch {
	case spaces == 0:
		return name(tabs, "tab", "tabs")
	case tabs == 0:
		return name(spaces, "space", "spaces")
	}
	return name(tabs, "tab", "tabs") + " and " + name(spaces, "space", "spaces")
}

// commonRunner computes longest common substrings, reusing its rows.
type commonRunner struct{ prev, cur []int }

// run is the length of the longest common substring of a and b (b cut at
// 400 bytes).
func (r *commonRunner) run(a, b []byte) int {
	if len(b) > 400 {
		b = b[:400]
	}
	if cap(r.prev) < len(b)+1 {
		r.prev, r.cur = make([]int, len(b)+1), make([]int, len(b)+1)
	}
	prev, cur := r.prev[:len(b)+1], r.cur[:len(b)+1]
	clear(prev)
	best := 0
	for i := 1; i <= len(a); i++ {
		cur[0] = 0
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				cur[j] = prev[j-1] + 1
				best = max(best, cur[j])
			} else {
				cur[j] = 0
			}
		}
		prev, cur = cur, prev
	}
	return best
}

// applyReport applies set to data (applySpans, telling each replacement
// to each if not nil) and says how each edit matched: its line range in
// data and its kind. base is the place of the set's first edit among the
// call's.
func applyReport(data []byte, set *editSet, path string, limit int64, limitName string, base int, each func(span)) ([]byte, int, []EditMatch, error) {
	return applyReportInto(nil, data, set, path, limit, limitName, base, each)
}

// applyReportInto is applyReport writing the edited text into dst's room
// when it has enough (dst must not share bytes with data).
func applyReportInto(dst, data []byte, set *editSet, path string, limit int64, limitName string, base int, each func(span)) ([]byte, int, []EditMatch, error) {
	type rng struct{ first, last, n int } // byte offsets of the first replacement's start and the last one's last byte
	rs := make([]rng, len(set.eds))
	for i := range rs {
		rs[i].first = -1
	}
	out, n, err := applySpans(dst, data, set, path, limit, limitName, func(sp span) {
		r := &rs[sp.e.idx]
		if r.first < 0 {
			r.first = sp.start
		}
		r.last = sp.start + max(len(sp.e.old), 1) - 1
		r.n++
		if each != nil {
			each(sp)
		}
	})
	if err != nil {
		return nil, 0, nil, err
	}
	offs := make([]int, 0, 2*len(rs))
	for _, r := range rs {
		if r.first >= 0 {
			offs = append(offs, r.first, r.last)
		}
	}
	lines := lineNumbers(data, offs)
	ms := make([]EditMatch, len(rs))
	for i, r := range rs {
		ms[i] = EditMatch{Index: base + i + 1, Match: "exact", Replacements: r.n}
		if set.eds[i].loose {
			ms[i].Match = "indent"
		}
		if r.first >= 0 {
			ms[i].FirstLine, ms[i].LastLine = lines[r.first], lines[r.last]
		}
	}
	return out, n, ms, nil
}

// lineNumbers maps each byte offset of offs to the 1-based number of the
// line that holds it, in one pass over data.
func lineNumbers(data []byte, offs []int) map[int]int {
	sorted := slices.Clone(offs)
	slices.Sort(sorted)
	lines := make(map[int]int, len(sorted))
	line, pos := 1, 0
	for _, off := range sorted {
		line += bytes.Count(data[pos:off], nl)
		pos = off
		lines[off] = line
	}
	return lines
}

// applySequential applies the edits one after another, each matched
// against the text the ones before it left (resolveIn, then applyReport,
// edit by edit). Its edit set is the steps' replacements composed over
// data, so the diff is rendered against the original text as for edits
// applied together. The work is the edits times the text (each step
// reads the text whole): the deadline is checked between steps. What it
// holds is bounded by the text, whatever the steps: two texts in turn,
// and the runs of the original the text still has, a few bytes each, in
// two lists in turn. It used to keep each step's replacements and every
// piece of the text as an object of its own: 20 edits of every byte of a
// 4 MiB file took 7 GB and two minutes.
func applySequential(ctx context.Context, data []byte, specs []EditSpec, path string, loose bool, limit int64, limitName string) ([]byte, int, *editSet, []EditMatch, error) {
	if len(specs) > maxEdits {
		return nil, 0, nil, nil, usagef(path, "%d edits: at most %d go in one call", len(specs), maxEdits)
	}
	cur := data
	var bufs [2][]byte // the texts the steps write, in turn (never data)
	var w runWriter
	w.add(run{at: 0, from: 0, n: len(data)})
	runs, spare := w.finish(), []byte(nil)
	var ms []EditMatch
	total := 0
	for k := range specs {
		if err := ctx.Err(); err != nil {
			return nil, 0, nil, nil, err
		}
		set, err := resolveIn(cur, specs[k:k+1], path, matchCtx{loose: loose, base: k, total: len(specs), orig: data})
		if err != nil {
			return nil, 0, nil, nil, err
		}
		c := carry{in: runReader{b: runs}, out: runWriter{b: spare[:0]}}
		next, n, m, err := applyReportInto(bufs[k%2], cur, set, path, limit, limitName, k, c.replace)
		if err != nil {
			return nil, 0, nil, nil, err
		}
		bufs[k%2] = next
		runs, spare = c.finish(), runs
		ms = append(ms, m...)
		total += n
		cur = next
	}
	return cur, total, &editSet{composed: true, runs: runs, text: cur}, ms, nil
}

// run is a stretch of the text as edited so far that is still the
// original's: text[at:at+n] is data[from:from+n]. Runs are kept in order
// of position, as a list of varints (runWriter): the stretches between
// runs are the changes, and each holds a byte of the original that is
// gone, so a text has fewer runs than half its original has bytes.
type run struct{ at, from, n int }

// runWriter lists runs, each as three varints: how far it starts after
// the last one ends, in the original and in the text, and its length.
// Runs that meet on both sides are one.
type runWriter struct {
	b        []byte
	from, at int // where the last run listed ends
	last     run // not yet listed
}

func (w *runWriter) add(r run) {
	if r.n == 0 {
		return
	}
	if w.last.n > 0 && w.last.at+w.last.n == r.at && w.last.from+w.last.n == r.from {
		w.last.n += r.n
		return
	}
	w.flush()
	w.last = r
}

func (w *runWriter) flush() {
	if r := w.last; r.n > 0 {
		w.b = binary.AppendUvarint(w.b, uint64(r.from-w.from))
		w.b = binary.AppendUvarint(w.b, uint64(r.at-w.at))
		w.b = binary.AppendUvarint(w.b, uint64(r.n))
		w.from, w.at, w.last = r.from+r.n, r.at+r.n, run{}
	}
}

// finish is the list.
func (w *runWriter) finish() []byte {
	w.flush()
	return w.b
}

// runReader reads a runWriter's list.
type runReader struct {
	b        []byte
	from, at int
}

func (rd *runReader) next() (run, bool) {
	if len(rd.b) == 0 {
		return run{}, false
	}
	var v [3]int
	for i := range v {
		x, k := binary.Uvarint(rd.b)
		v[i], rd.b = int(x), rd.b[k:]
	}
	r := run{from: rd.from + v[0], at: rd.at + v[1], n: v[2]}
	rd.from, rd.at = r.from+r.n, r.at+r.n
	return r, true
}

// carry moves a text's runs through one step's replacements, told in
// order of position (replace): the runs before each are shifted by what
// the replacements before it added or removed, and its bytes leave the
// run they were in.
type carry struct {
	in    runReader
	r     run  // what is left of the run being read
	ok    bool // r holds one
	delta int  // the bytes the replacements so far added (less removed)
	out   runWriter
}

func (c *carry) replace(sp span) {
	s, e := sp.start, sp.start+len(sp.e.old)
	for {
		if !c.ok {
			if c.r, c.ok = c.in.next(); !c.ok {
				break
			}
		}
		r := c.r
		if r.at >= e {
			break
		}
		if r.at < s {
			c.out.add(run{at: r.at + c.delta, from: r.from, n: min(r.at+r.n, s) - r.at})
		}
		if r.at+r.n <= e {
			c.ok = false
			continue
		}
		cut := e - r.at // r goes on after the replacement
		c.r = run{at: e, from: r.from + cut, n: r.n - cut}
		break
	}
	c.delta += len(sp.e.new) - len(sp.e.old)
}

// finish carries the runs after the last replacement, and returns the
// runs of the new text.
func (c *carry) finish() []byte {
	for ; c.ok; c.r, c.ok = c.in.next() {
		c.out.add(run{at: c.r.at + c.delta, from: c.r.from, n: c.r.n})
	}
	return c.out.finish()
}

// changes yields the replacements that turn data into text, whose runs
// of data are runs, in order of position: each stretch between two runs
// is one. A change never has empty old text (the diff's groups need a
// byte to stand on): an insertion takes the byte after it (at the end,
// the one before) on both sides, which the runs beside it have.
type changes struct {
	data, text []byte
	rd         runReader
	pos, at    int  // where the last run ended, in data and in text
	done       bool // the stretch after the last run is told
}

// next is the next change: data[from:to] becomes text[tat:tend].
func (c *changes) next() (from, to, tat, tend int, ok bool) {
	for !c.done {
		r, more := c.rd.next()
		if !more {
			c.done = true
			r = run{from: len(c.data), at: len(c.text)}
		}
		from, to, tat, tend = c.pos, r.from, c.at, r.at
		c.pos, c.at = r.from+r.n, r.at+r.n
		if from == to && tat == tend {
			continue
		}
		if from == to && len(c.data) > 0 {
			if to < len(c.data) {
				to, tend = to+1, tend+1
			} else {
				from, tat = from-1, tat-1
			}
		}
		return from, to, tat, tend, true
	}
	return 0, 0, 0, 0, false
}

// A window is a run of whole lines of a text that an old text matches
// line by line: bytes [start, end) (end past the last line's
// terminator, if it has one), lines first..first+n-1 (1-based).
type window struct {
	start, end int
	first, n   int
}

// looseLines splits an old or new text into lines for loose-indent: a
// final newline ends the last line (it starts no empty one), and a
// line's "\r" before its "\n" is no part of it.
func looseLines(s string) []string {
	if s == "" {
		return nil
	}
	ls := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range ls {
		ls[i] = strings.TrimSuffix(l, "\r")
	}
	return ls
}

// blanks are what loose-indent ignores at either end of a line.
const blanks = " \t"

// looseWindows finds where old matches data line by line when each
// line's leading and trailing blanks (spaces, tabs) are ignored, as the
// reference MCP filesystem server's edit_file compares
// oldLine.trim() === contentLine.trim(): old's lines must match a run of
// data's whole lines, in order. The windows do not overlap (each search
// goes on after the last match, as bytes.Count does); the search is
// linear (the lines are numbered by their trimmed text, and the numbers
// matched with Knuth-Morris-Pratt).
func looseWindows(data []byte, old string) []window {
	oldLines := looseLines(old)
	if len(oldLines) == 0 {
		return nil
	}
	ids := map[string]int32{}
	pat := make([]int32, len(oldLines))
	for i, l := range oldLines {
		t := strings.Trim(l, blanks)
		id, ok := ids[t]
		if !ok {
			id = int32(len(ids))
			ids[t] = id
		}
		pat[i] = id
	}
	// fail[i] is the length of the longest proper border of pat[:i+1].
	fail := make([]int, len(pat))
	for i, k := 1, 0; i < len(pat); i++ {
		for k > 0 && pat[i] != pat[k] {
			k = fail[k-1]
		}
		if pat[i] == pat[k] {
			k++
		}
		fail[i] = k
	}
	var out []window
	var starts []int // where the lines of the current partial match start (the last len(pat))
	k, line := 0, 0
	for off := 0; off < len(data); {
		l := nextLine(data, off)
		start := off
		off += len(l)
		line++
		id, ok := ids[string(bytes.Trim(bytes.TrimSuffix(bytes.TrimSuffix(l, nl), []byte("\r")), blanks))]
		if !ok {
			id = -1
		}
		starts = append(starts, start)
		for k > 0 && id != pat[k] {
			k = fail[k-1]
		}
		if id == pat[k] {
			k++
		}
		if k == len(pat) {
			first := starts[len(starts)-len(pat)]
			out = append(out, window{start: first, end: off, first: line - len(pat) + 1, n: len(pat)})
			k, starts = 0, starts[:0]
		}
		if len(starts) > 2*len(pat) { // keep the last len(pat) starts
			starts = append(starts[:0], starts[len(starts)-len(pat):]...)
		}
	}
	return out
}

// windowLines lists the first windows as "3-5, 9-11" (at most
// maxListedLines, then how many more).
func windowLines(ws []window, total int) string {
	var b strings.Builder
	for i, w := range ws {
		if i == maxListedLines {
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if w.n == 1 {
			fmt.Fprintf(&b, "%d", w.first)
		} else {
			fmt.Fprintf(&b, "%d-%d", w.first, w.first+w.n-1)
		}
	}
	if total > maxListedLines {
		fmt.Fprintf(&b, " and %d more", total-maxListedLines)
	}
	return b.String()
}

// reindent is the text that replaces a loose match w of old in data: the
// new text's lines, each re-indented to the file, joined with the file's
// line ending (that of the window's first line; "\r\n" when it has none
// and data has "\r\n" somewhere), then the window's last line's own
// ending. The rule, for each new line:
//
//   - a blank line (empty, or only spaces and tabs) is written empty;
//   - among the old text's non-blank lines whose indentation (leading
//     spaces and tabs) is a prefix of the new line's, the one with the
//     longest (the first of them, on a tie) gives the file's indentation
//     of the line it matched, and the new line keeps the rest of its own
//     indentation after it: with old "    if x {" over the file's
//     "\tif x {", the new "        y()" becomes "\t    y()", and when
//     the old text also has an "        z()" matched by "\t\tz()", it
//     becomes "\t\ty()";
//   - when no old line's indentation is a prefix of the new line's (it is
//     indented less, or with other blanks), it gets the indentation of
//     the file's first matched non-blank line.
//
// So a new text written with the old text's indentation gets the file's
// indentation line for line, and the first new line, indented as the old
// text's first line, gets the file's indentation of the first line.
func reindent(data []byte, w window, old, new string) []byte {
	newLines := looseLines(new)
	if len(newLines) == 0 {
		return nil // the lines are deleted, endings and all
	}
	oldLines := looseLines(old)
	type lead struct{ old, file string }
	var leads []lead
	for off, i := w.start, 0; i < w.n; i++ {
		l := nextLine(data, off)
		off += len(l)
		if strings.Trim(oldLines[i], blanks) == "" {
			continue
		}
		leads = append(leads, lead{leadingBlanks(oldLines[i]), leadingBlanks(string(l))})
	}
	fallback := ""
	if len(leads) > 0 {
		fallback = leads[0].file
	}
	eol, last := "\n", ""
	first := nextLine(data, w.start)
	switch {
	case bytes.HasSuffix(first, []byte("\r\n")):
		eol = "\r\n"
	case bytes.HasSuffix(first, nl):
	case bytes.Contains(data, []byte("\r\n")):
		eol = "\r\n"
	}
	lastLine := data[w.start+lastLineStart(data[w.start:w.end]) : w.end]
	switch {
	case bytes.HasSuffix(lastLine, []byte("\r\n")):
		last = "\r\n"
	case bytes.HasSuffix(lastLine, nl):
		last = "\n"
	}
	var b strings.Builder
	for i, l := range newLines {
		if i > 0 {
			b.WriteString(eol)
		}
		if strings.Trim(l, blanks) == "" {
			continue
		}
		own := leadingBlanks(l)
		ind, best := fallback, -1
		for _, ld := range leads {
			if len(ld.old) > best && strings.HasPrefix(own, ld.old) {
				ind, best = ld.file+own[len(ld.old):], len(ld.old)
			}
		}
		b.WriteString(ind)
		b.WriteString(l[len(own):])
	}
	b.WriteString(last)
	return []byte(b.String())
}

// leadingBlanks is s's leading spaces and tabs.
func leadingBlanks(s string) string { return s[:len(s)-len(strings.TrimLeft(s, blanks))] }
