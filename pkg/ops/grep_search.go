package ops

import (
	"bytes"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/textio"
)

const (
	searchBuf   = 256 << 10 // each worker's read buffer: most files fit in one read
	keptBuf     = 1 << 20   // a buffer grown for a long line is kept up to this size
	maxLineGrow = 64 << 20  // grow straight to the end of a file this close (never past textio.MaxLine)
)

// search reads one file in blocks of whole lines and records its matching
// lines in fr, up to s.perFile. A NUL byte anywhere makes the file binary:
// a walked file's matches are dropped; a named one is searched on
// (fr.named), and its matches lose their text once it is done.
//
// No line is skipped, however long (SPEC §4, Hostile sizes): in a file
// that can be mapped, a line that outgrows a modest buffer is searched
// where it lies, through a mapping (mappedLine); on a stream (standard
// input, a pipe) one over textio.MaxLine is searched as it streams past,
// its first textio.MaxLine bytes kept (streamLine).
func (s *searcher) search(f *sandbox.File, size int64, fr *FileResult, bufp *[]byte) error {
	sc := fileScan{f: f, size: size, fr: fr, bufp: bufp, buf: *bufp, r: f, lineNo: 1, mappable: f.Mappable()}
	o := s.o
	sc.simple = !o.Invert && o.Before == 0 && o.After == 0
	sc.needLines = !o.Count && !o.FilesWithMatches
	sc.keep = sc.needLines // whether match objects are built
	if sc.keep {           // -c and -l count lines: no context is kept
		sc.lc.init(s.before, s.after)
	}
	for {
		if err := s.ctx.Err(); err != nil {
			return err // nothing more is read once the call is cancelled
		}
		data, eof, err := sc.fill()
		if err != nil {
			return err
		}
		var next scanNext
		if end := sc.blockEnd(data, eof); end == 0 && !eof {
			next, err = s.longLine(&sc, data)
		} else {
			next, err = s.block(&sc, data, end, eof)
		}
		switch next {
		case scanOn:
			continue
		case scanDone:
			s.contextText(fr, sc.keep && !sc.simple)
		}
		return err
	}
}

// fileScan is one file's search under way: the buffer, the line and the
// offset it has reached, and the partial line it carries to the next
// read.
type fileScan struct {
	f        *sandbox.File
	size     int64
	fr       *FileResult
	bufp     *[]byte // the worker's buffer, which a modest growth replaces
	buf      []byte
	r        io.Reader
	lc       lineCtx
	mappable bool
	// simple: no -v, -B or -A (a block is searched whole); needLines:
	// the lines are wanted (not -c or -l); keep: match objects are built.
	simple, needLines, keep bool
	lineNo                  int64 // number of the first line in the block
	carry                   int   // bytes of a partial line at buf[0]
	// clean is how many of the carried bytes are known to hold no "\n"
	// (nor, unless -a, a NUL): a line that outgrows the buffer is scanned
	// only in what each read adds, not again from its start.
	clean int
	total int64 // bytes taken from the input
	off   int64 // offset in the file of buf[0]
}

// scanNext is what a file's search does after a step.
type scanNext uint8

const (
	scanOn   scanNext = iota // read on
	scanDone                 // over: the context lines get their text, and the step's error is the search's
	scanStop                 // over as it is (a binary file dropped, -m reached, an error)
)

// fill reads the next block after the carried bytes: data is the carry
// and what was read (a leading UTF-8 BOM left out).
func (sc *fileScan) fill() (data []byte, eof bool, err error) {
	first := sc.total == 0
	n, eof, err := fillBlock(sc.r, sc.buf[sc.carry:], sc.size-sc.total, sc.f.Stream())
	sc.total += int64(n)
	if err != nil {
		return nil, false, err
	}
	if first && bytes.HasPrefix(sc.buf[:n], textio.BOM) {
		// A UTF-8 BOM is no text: ^ matches after it and columns
		// count from it, as in rg (read strips it too).
		n = copy(sc.buf, sc.buf[len(textio.BOM):n])
		sc.off = int64(len(textio.BOM))
	}
	return sc.buf[:sc.carry+n], eof, nil
}

// blockEnd is where the whole lines of data end (all of it at the end of
// the input); 0: not one line is whole.
func (sc *fileScan) blockEnd(data []byte, eof bool) int {
	if eof {
		return len(data)
	}
	if i := bytes.LastIndexByte(data[sc.clean:], '\n'); i >= 0 {
		return sc.clean + i + 1
	}
	return 0
}

// longLine goes on with data, one line that fills the buffer: searched as
// it streams past or where it lies in the file, or the buffer grown.
func (s *searcher) longLine(sc *fileScan, data []byte) (scanNext, error) {
	// A NUL makes the file binary wherever it lies: said before any
	// growth (a sparse file is one long run of NULs).
	if !sc.fr.Binary && s.binary(data[sc.clean:]) && s.stopBinary(sc.fr) {
		return scanStop, nil
	}
	switch {
	case (!sc.mappable && len(data) >= textio.MaxLine) || (sc.mappable && len(data) >= searchBuf && s.passesLongLines() && s.cut+1 <= len(data)):
		// A stream's line over textio.MaxLine, kept cut; or a literal
		// sought in a long line of a file that is not wanted whole:
		// searched as it streams past, in one pass.
		return s.streamedLine(sc, data)
	case sc.mappable && len(data) >= searchBuf:
		// A long line in a file: searched where it lies, never copied
		// (nor the buffer grown: every fresh page is a fault); the
		// reading goes on after it.
		return s.mappedLongLine(sc)
	}
	sc.grow(data)
	return scanOn, nil
}

// streamedLine searches the long line data starts as it streams past.
func (s *searcher) streamedLine(sc *fileScan, data []byte) (scanNext, error) {
	st := lineStream{r: sc.r, buf: make([]byte, streamPiece), text: s.o.Text}
	var src io.ReaderAt
	if sc.mappable {
		src = sc.f
	}
	done := s.streamLine(&st, st.holdTail(data), sc.lineNo, sc.fr, &sc.lc, sc.keep, nil, src, sc.off)
	sc.total += st.read
	if st.err != nil || done || st.eof {
		return scanDone, st.err
	}
	sc.lineNo++
	sc.off += int64(len(data)) + st.read - int64(len(st.rest))
	sc.carry, sc.clean = copy(sc.buf, st.rest), 0
	return scanOn, nil
}

// mappedLongLine searches the long line at sc.off where it lies in the
// file, and reads on after it.
func (s *searcher) mappedLongLine(sc *fileScan) (scanNext, error) {
	next, done, err := s.mappedLine(sc.f, sc.off, sc.size, sc.lineNo, sc.fr, &sc.lc, sc.keep)
	if errors.Is(err, errHugeLine) {
		return s.hugeLine(sc)
	}
	if err != nil || done || next >= sc.size {
		return scanDone, err
	}
	sc.lineNo++
	sc.off, sc.total, sc.carry, sc.clean = next, next, 0, 0
	sc.r = io.NewSectionReader(sc.f, next, sc.size-next)
	return scanOn, nil
}

// hugeLine searches a line at sc.off longer than a mapping may be: read
// past as a stream's is, from the file (bounded memory).
func (s *searcher) hugeLine(sc *fileScan) (scanNext, error) {
	f, off, size := sc.f, sc.off, sc.size
	head := make([]byte, max(keptBuf, min(s.cut+1, textio.MaxLine)))
	if _, err := f.ReadAt(head, off); err != nil {
		return scanStop, err
	}
	from := off + int64(len(head))
	st := lineStream{r: io.NewSectionReader(f, from, size-from), buf: make([]byte, streamPiece), text: s.o.Text}
	head = st.holdTail(head)
	again := func() *lineStream { // the line once more, from the file
		at := off + int64(len(head))
		return &lineStream{r: io.NewSectionReader(f, at, size-at), buf: make([]byte, streamPiece), text: s.o.Text}
	}
	done := s.streamLine(&st, head, sc.lineNo, sc.fr, &sc.lc, sc.keep, again, f, off)
	if st.err != nil || done || st.eof {
		return scanDone, st.err
	}
	next := from + st.read - int64(len(st.rest))
	sc.lineNo++
	sc.off, sc.total = next, next+int64(len(st.rest))
	sc.carry, sc.clean = copy(sc.buf, st.rest), 0
	sc.r = st.r
	return scanOn, nil
}

// grow makes room for a stream's line that outgrows the buffer (a file's
// is mapped or passed): to the end of the input at once when that is
// near (fstat said how far), so a long line costs one allocation, not a
// doubling chain. Only a modest buffer is kept for the next file.
func (sc *fileScan) grow(data []byte) {
	n := min(2*len(sc.buf), textio.MaxLine)
	if rest := sc.size - sc.total; rest >= 0 && rest <= maxLineGrow {
		n = max(n, min(len(data)+int(rest)+1, textio.MaxLine))
	}
	nb := make([]byte, n)
	copy(nb, data)
	sc.buf = nb
	if len(sc.buf) <= keptBuf {
		*sc.bufp = sc.buf
	}
	sc.carry, sc.clean = len(data), len(data)
}

// block searches the whole lines of data (up to end), and carries the
// rest to the next read.
func (s *searcher) block(sc *fileScan, data []byte, end int, eof bool) (scanNext, error) {
	block, fr := data[:end], sc.fr
	if !fr.Binary && s.binary(block) && s.stopBinary(fr) {
		return scanStop, nil
	}
	if sc.simple {
		var full bool
		if sc.lineNo, full = s.simpleBlock(block, fr, sc.lineNo, sc.needLines, nil); full {
			return scanStop, nil
		}
		if !s.sendPart(fr, nil) {
			return scanStop, errStop
		}
	} else {
		if s.lines(sc, block) || (fr.Count >= s.perFile && sc.lc.afterLeft == 0) {
			return scanDone, nil
		}
		if !s.sendPart(fr, &sc.lc) {
			return scanStop, errStop
		}
	}
	if eof {
		return scanDone, nil
	}
	sc.carry, sc.clean = copy(sc.buf, data[end:]), 0
	sc.off += int64(end)
	return scanOn, nil
}

// lines searches block line by line (-v, -B, -A), with context; it
// reports whether the file's search is over (-m reached).
func (s *searcher) lines(sc *fileScan, block []byte) (done bool) {
	for pos := 0; pos < len(block) && !done; {
		i := bytes.IndexByte(block[pos:], '\n')
		lineEnd := len(block)
		if i >= 0 {
			lineEnd = pos + i + 1
		}
		line := block[pos:lineEnd]
		hit := s.m.matchLine(trimEOL(line)) != s.o.Invert
		done = s.step(sc.fr, &sc.lc, sc.lineNo, line, hit, sc.keep, nil)
		sc.lineNo++
		pos = lineEnd
	}
	return done
}

// stopBinary records that fr's file is binary and reports whether its
// search ends there: a walked file's does, its matches dropped; a named
// file is searched on (SPEC §5, Binary files).
func (s *searcher) stopBinary(fr *FileResult) bool {
	fr.Binary = true
	if fr.named {
		return false
	}
	fr.Matches, fr.Count = nil, 0
	return true
}

// step takes one line of the read path into fr (hit: the line is
// selected), with its context; it reports whether the file's search is
// over (-m reached). win is the mapping the line lies in, if any.
func (s *searcher) step(fr *FileResult, lc *lineCtx, lineNo int64, line []byte, hit, keep bool, win *sandbox.Mapping) bool {
	switch {
	case hit && fr.Count < s.perFile:
		if keep && s.o.OnlyMatching {
			fr.Matches = s.appendMatches(fr, lineNo, line, win)
		} else if keep {
			m := s.match(fr, lineNo, line, win)
			m.BeforeRaw = lc.takeBefore()
			fr.Matches = append(fr.Matches, m)
			if s.drop != nil {
				fr.Matches = s.pass(fr, fr.Matches, len(fr.Matches)-1, lineNo)
			}
			lc.afterLeft = s.after
		}
		fr.Count++
	case hit && keep && lc.afterLeft > 0 && len(fr.Matches) > 0:
		// -m reached: a match in the last one's after-context is printed
		// as context, as grep and rg do.
		s.after1(fr, lc, lineNo, line, win)
	case hit:
		return true // -m reached: stop, as grep does
	case keep && lc.afterLeft > 0 && len(fr.Matches) > 0:
		s.after1(fr, lc, lineNo, line, win)
	case lc.before > 0:
		lc.remember(lineNo, s.raw(line, fr, win))
	}
	if hit {
		lc.reset()
	}
	return false
}

// after1 adds a line to the last match's after-context.
func (s *searcher) after1(fr *FileResult, lc *lineCtx, lineNo int64, line []byte, win *sandbox.Mapping) {
	last := &fr.Matches[len(fr.Matches)-1]
	last.AfterRaw = append(last.AfterRaw, CtxLine{Line: lineNo, Raw: s.raw(line, fr, win)})
	lc.afterLeft--
}

// contextText gives the kept matches their context lines as JSON text
// (the text form prints them raw).
func (s *searcher) contextText(fr *FileResult, context bool) {
	if !context || s.rawOnly {
		return
	}
	for i := range fr.Matches {
		m := &fr.Matches[i]
		for _, c := range m.BeforeRaw {
			m.Before = append(m.Before, s.text(trimEOL(c.Raw), &m.ContextTruncated))
		}
		for _, c := range m.AfterRaw {
			m.After = append(m.After, s.text(trimEOL(c.Raw), &m.ContextTruncated))
		}
	}
}

// raw is what a Match keeps of a line (given with or without its "\n"):
// for the text form (rawOnly) all of it, a long line in a mapping kept
// mapped rather than copied (fr holds the mapping until the line is
// printed); otherwise no more than its JSON text can show.
func (s *searcher) raw(line []byte, fr *FileResult, win *sandbox.Mapping) []byte {
	line = bytes.TrimSuffix(line, nl)
	if s.cut > 0 && len(line) > s.cut+1 {
		line = line[:s.cut+1] // one more byte than the cut: text() then says it is cut
	}
	if s.rawOnly && win != nil && len(line) > keptBuf {
		fr.hold(win)
		return line
	}
	return append([]byte(nil), line...)
}

// errHugeLine says a line is longer than mapGeometry.huge and is to be
// read past rather than mapped.
var errHugeLine = errors.New("a line longer than a mapping may be")

// passesLongLines reports whether a long line is searched as it streams
// past rather than mapped: a literal sought where the line is not wanted
// whole (one pass, no window to grow).
func (s *searcher) passesLongLines() bool { return s.m.pure && !s.wholeLines() }

// wholeLines reports whether a line's search needs all of it in view at
// once: for -o, and for lines given whole (the text form prints them;
// Exact asks for whole JSON text).
func (s *searcher) wholeLines() bool {
	return s.o.OnlyMatching || ((s.rawOnly || s.cut == 0) && !s.o.Count && !s.o.FilesWithMatches)
}

// streamPiece is how much of a long line on a stream is read at a time.
const streamPiece = searchBuf

// simpleBlock records the matching lines of block (whole lines, the first
// numbered lineNo) in fr, for a search without context or -v: the
// matcher skips from match to match, and lines are counted only when
// matches are kept. It returns the number of the line after the block, and
// whether fr is full (s.perFile lines), in which case the count stops
// short of the block's end. win is the mapping block lies in, if any.
func (s *searcher) simpleBlock(block []byte, fr *FileResult, lineNo int64, needLines bool, win *sandbox.Mapping) (int64, bool) {
	pos, last := 0, 0
	var sc scanState
	for fr.Count < s.perFile {
		st, en := s.m.next(block, pos, &sc)
		if st < 0 {
			break
		}
		if needLines {
			lineNo += int64(bytes.Count(block[last:st], nl))
			last = st
			fr.Matches = s.appendMatches(fr, lineNo, block[st:en], win)
		}
		fr.Count++
		pos = en
	}
	if fr.Count >= s.perFile {
		return lineNo, true
	}
	if needLines {
		lineNo += int64(bytes.Count(block[last:], nl))
	}
	return lineNo, false
}

// fillBlock reads until buf is full or the input ends. It takes the end as
// reached once `expect` bytes (the size fstat gave) have come, sparing the
// read that would return 0 on every small file. On a stream it stops at
// the first read that brings a whole line: a pipe's lines are searched
// (and their matches given) as they come, not once a buffer is full.
func fillBlock(r io.Reader, buf []byte, expect int64, stream bool) (n int, eof bool, err error) {
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		switch {
		case stream && m > 0 && err == nil && bytes.IndexByte(buf[n-m:n], '\n') >= 0:
			return n, false, nil
		case errors.Is(err, io.EOF):
			return n, true, nil
		case err != nil:
			return n, false, err
		case m == 0:
			return n, true, nil
		case int64(n) >= expect && n < len(buf):
			return n, true, nil
		}
	}
	return n, false, nil
}

// appendMatches adds a matching line's Match to fr's, or with -o one
// Match per match in it (none for -v: an inverted line holds no match),
// each with the match as its text.
func (s *searcher) appendMatches(fr *FileResult, lineNo int64, line []byte, win *sandbox.Mapping) []Match {
	ms := fr.Matches
	if !s.o.OnlyMatching {
		ms = append(ms, s.match(fr, lineNo, line, win))
		if s.drop != nil {
			ms = s.pass(fr, ms, len(ms)-1, lineNo)
		}
		return ms
	}
	had := len(ms)
	if s.o.Invert {
		if s.drop != nil {
			ms = s.pass(fr, ms, had, lineNo)
		}
		return ms
	}
	body := trimEOL(line)
	var locs [][]int
	if s.m.word {
		for _, l := range s.m.re.FindAllSubmatchIndex(body, -1) {
			locs = append(locs, l[2:4])
		}
	} else {
		locs = s.m.re.FindAllIndex(body, -1)
	}
	for _, l := range locs {
		if l[1] == l[0] {
			continue // an empty match prints nothing, as grep -o
		}
		only := body[l[0]:l[1]]
		m := Match{Path: fr.Path, Line: lineNo, Column: l[0] + 1, Raw: s.raw(only, fr, win), MatchLen: len(only), Only: true}
		if !s.rawOnly {
			m.Text = s.text(only, &m.TextTruncated)
			if m.TextTruncated {
				m.TextBytes = len(only)
			}
		}
		ms = append(ms, m)
	}
	if s.drop != nil {
		ms = s.pass(fr, ms, had, lineNo)
	}
	return ms
}

// pass, in the cursor's file on a resumed page (s.drop), takes the
// matches of line lineNo just added to ms (from index i): those the page
// before gave (every one of a line before the cursor's, the first skip of
// its line) are marked dropped, and the line counted gone when none of
// its matches is left. Matches dropped before it are let go now: a new
// line's matches were taken, so their after-context is whole. It returns
// ms (fr.Matches' new value).
func (s *searcher) pass(fr *FileResult, ms []Match, i int, lineNo int64) []Match {
	if d := fr.dropped; d > 0 {
		n := copy(ms, ms[d:])
		clear(ms[n:])
		ms, i, fr.dropped = ms[:n], i-d, 0
	}
	d := s.drop
	if lineNo > d.line {
		return ms
	}
	k := len(ms) - i
	if lineNo == d.line {
		k = int(min(int64(k), d.skip))
	}
	fr.dropped = i + k // the matches before i were given too (the lines before)
	if k == len(ms)-i {
		fr.gone++
	}
	return ms
}

// dropGiven lets go of the matches the cursor gave that fr still holds
// (the last ones pass marked): once the file is searched, or a part of
// it is sent.
func (s *searcher) dropGiven(fr *FileResult) {
	if d := fr.dropped; d > 0 {
		n := copy(fr.Matches, fr.Matches[d:])
		clear(fr.Matches[n:])
		fr.Matches, fr.dropped = fr.Matches[:n], 0
	}
}

// match builds a Match for a line (with or without its terminator).
func (s *searcher) match(fr *FileResult, lineNo int64, line []byte, win *sandbox.Mapping) Match {
	body := trimEOL(line)
	col, n := 0, 0
	if !s.o.Invert {
		switch {
		case s.m.pure && !s.m.fold:
			col, n = bytes.Index(body, s.m.lit)+1, len(s.m.lit)
		case s.m.word:
			if loc := s.m.re.FindSubmatchIndex(body); loc != nil {
				col, n = loc[2]+1, loc[3]-loc[2]
			}
		default:
			if loc := s.m.re.FindIndex(body); loc != nil {
				col, n = loc[0]+1, loc[1]-loc[0]
			}
		}
	}
	m := Match{Path: fr.Path, Line: lineNo, Column: col, Raw: s.raw(line, fr, win), MatchLen: n}
	if !s.rawOnly {
		from := 0
		if col > 0 {
			from = windowStart(body, s.window(len(body), col-1, n))
		}
		m.Text = s.text(body[from:], &m.TextTruncated)
		if m.TextTruncated || from > 0 {
			m.TextTruncated, m.TextBytes, m.TextOffset = true, len(body), from
		}
	}
	return m
}

// window is where a matched line's JSON text starts when the line is cut
// at s.cut (SPEC §4, max_line_bytes): around the match at start, n bytes
// long (half the room left before it), a match longer than the cut
// starting it, moved back to a UTF-8 boundary by the caller (windowStart).
func (s *searcher) window(length, start, n int) int {
	if s.cut == 0 || length <= s.cut {
		return 0
	}
	if n >= s.cut {
		return start
	}
	return max(0, start-(s.cut-n)/2)
}

// windowStart moves from back to the start of the UTF-8 sequence b[from]
// belongs to (at most 3 bytes back).
func windowStart(b []byte, from int) int {
	for i := from; i > 0 && i > from-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return from
}

// text is a line's JSON text: cut at s.cut, which sets *cut.
func (s *searcher) text(body []byte, cut *bool) string {
	if s.cut > 0 && len(body) > s.cut {
		*cut = true
		return string(cutText(body, s.cut))
	}
	return string(body)
}

var nl = []byte{'\n'}

// lineCtx keeps the last -B lines before the next match, in a ring: each
// line costs O(1), whatever -B is.
type lineCtx struct {
	before    int
	ring      []CtxLine // at most before lines; the oldest at start once full
	start     int
	afterLeft int
}

func (c *lineCtx) init(before, after int) { c.before = before }

// remember keeps a line (raw: as searcher.raw gives it) for the next
// match's before-context.
func (c *lineCtx) remember(lineNo int64, raw []byte) {
	l := CtxLine{Line: lineNo, Raw: raw}
	if len(c.ring) < c.before {
		c.ring = append(c.ring, l)
		return
	}
	c.ring[c.start] = l
	c.start = (c.start + 1) % c.before
}

func (c *lineCtx) takeBefore() []CtxLine {
	if len(c.ring) == 0 {
		return nil
	}
	out := make([]CtxLine, 0, len(c.ring))
	out = append(append(out, c.ring[c.start:]...), c.ring[:c.start]...)
	c.reset()
	return out
}

func (c *lineCtx) reset() { c.ring, c.start = c.ring[:0], 0 }
