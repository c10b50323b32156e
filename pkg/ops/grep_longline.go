// grep's long lines: a line past the block is searched through a mapping
// (a file) or as it streams by (a pipe), never held whole.

package ops

import (
	"bytes"
	"io"
	"math"
	"unicode/utf8"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// mappedLine searches the line at off of f (size bytes as opened), too
// long for the buffer, through a mapping: it returns the offset after the
// line, and whether the file's search is over. errHugeLine: the line is
// longer than s.geom.huge and whole lines are not needed.
func (s *searcher) mappedLine(f *sandbox.File, off, size, lineNo int64, fr *FileResult, lc *lineCtx, keep bool) (next int64, done bool, err error) {
	limit := s.geom.huge
	if s.wholeLines() {
		limit = math.MaxInt64
	}
	win, n, err := mapLine(f, off, size, limit)
	if err != nil {
		return 0, false, err
	}
	defer func() {
		if !fr.holds(win) {
			win.Unmap()
		}
	}()
	f.CountRead(int64(n))
	err = sandbox.GuardFaults(f.Info.Path, func() error {
		line := win.Data[:n]
		if !fr.Binary && s.binary(line) && s.stopBinary(fr) {
			done = true
			return nil
		}
		hit := s.m.matchLine(trimEOL(line)) != s.o.Invert
		done = s.step(fr, lc, lineNo, line, hit, keep, win) || (fr.Count >= s.perFile && lc.afterLeft == 0)
		return nil
	})
	return off + int64(n), done, err
}

// mapLine maps f from off (a line's start) to the end of that line, past
// its "\n", or to size: windows four times larger each time until the
// "\n" is in one, so a line costs about as much address space as it is
// long. It returns the mapping and the line's length in it, or
// errHugeLine once the line is found longer than limit.
func mapLine(f *sandbox.File, off, size, limit int64) (*sandbox.Mapping, int, error) {
	scanned := int64(0)
	for w := int64(4 << 20); ; w *= 4 {
		if scanned >= limit {
			return nil, 0, errHugeLine
		}
		w = min(w, size-off, max(limit, scanned+1))
		win, err := f.MapAt(off, int(w))
		if err != nil {
			return nil, 0, err
		}
		i := -1
		err = sandbox.GuardFaults(f.Info.Path, func() error {
			if j := bytes.IndexByte(win.Data[scanned:], '\n'); j >= 0 {
				i = int(scanned) + j
			}
			return nil
		})
		switch {
		case err != nil:
			win.Unmap()
			return nil, 0, err
		case i >= 0:
			return win, i + 1, nil
		case off+w >= size:
			return win, len(win.Data), nil
		}
		scanned = int64(len(win.Data))
		win.Unmap()
	}
}

// streamLine searches a stream's line whose first textio.MaxLine bytes are
// head (no "\n" in them) as the rest of it streams past: a literal by a
// scan that keeps its last len-1 bytes from one piece to the next, any
// other pattern by the regexp reading the line rune by rune. What is kept
// of the line is head, cut: the JSON text says text_truncated with the
// whole length, and the text form prints head and notes it (fr.cutLines).
// It reports whether the file's search is over.
//
// src, when the line is a file's (at lineStart in it), is where the
// window around a match past head is read from.
func (s *searcher) streamLine(st *lineStream, head []byte, lineNo int64, fr *FileResult, lc *lineCtx, keep bool, again func() *lineStream, src io.ReaderAt, lineStart int64) (done bool) {
	m := s.m
	start, mlen := -1, 0 // where the first match is, in the line
	switch {
	case m.pure: // the pattern is its literal
		if start = scanLit(m, st, head); start >= 0 {
			mlen = len(m.lit)
		}
	case again != nil && len(m.lit) > 0:
		// A file's line: the literal every match holds is looked for
		// first, and the regexp reads the line again only if it is there.
		if scanLit(m, st, head) >= 0 {
			st2 := again()
			start, mlen = s.findRunes(&lineRunes{cur: head, st: st2})
			for st2.next() != nil {
			}
			if st2.err != nil {
				st.err = st2.err
			}
		}
	default:
		start, mlen = s.findRunes(&lineRunes{cur: head, st: st})
		for st.next() != nil { // the rest of the line
		}
	}
	if st.err != nil {
		return true
	}
	if st.nul && !fr.Binary && s.stopBinary(fr) {
		return true
	}
	length := int64(len(head)) + st.lineLen
	hit := (start >= 0) != s.o.Invert
	done = s.step(fr, lc, lineNo, head, hit, keep, nil) || (fr.Count >= s.perFile && lc.afterLeft == 0)
	// The line's matches are the last ones of its number (step may have
	// let go of matches before them: s.drop).
	had := len(fr.Matches)
	for had > 0 && fr.Matches[had-1].Line == lineNo {
		had--
	}
	if len(fr.Matches) > had {
		for i := had; i < len(fr.Matches); i++ {
			mt := &fr.Matches[i]
			if !mt.Only {
				mt.TextTruncated, mt.TextBytes = true, int(length)
				if start >= 0 && !s.o.Invert {
					mt.Column, mt.MatchLen = start+1, mlen
					if !s.rawOnly {
						s.streamWindow(mt, head, src, lineStart, length)
					}
				}
			}
		}
		if s.rawOnly { // the text form prints head: it says so
			fr.cutLines++
			if fr.firstCut == 0 {
				fr.firstCut = lineNo
			}
		}
	}
	return done
}

// streamWindow gives a long line's match the window around it as its
// text: from head, or read from the file; on a stream, a match past head
// keeps head's start (the bytes around it are gone).
func (s *searcher) streamWindow(mt *Match, head []byte, src io.ReaderAt, lineStart, length int64) {
	from := int64(s.window(int(min(length, math.MaxInt)), mt.Column-1, mt.MatchLen))
	if from == 0 {
		return
	}
	lo, end := max(0, from-utf8.UTFMax+1), min(length, from+int64(s.cut))
	var b []byte
	switch {
	case end <= int64(len(head)):
		b = head[lo:end]
	case src != nil:
		b = make([]byte, end-lo)
		if _, err := src.ReadAt(b, lineStart+lo); err != nil {
			return
		}
	default:
		return
	}
	i := windowStart(b, int(from-lo))
	var cut bool
	mt.Text, mt.TextOffset = s.text(b[i:], &cut), int(lo)+i
}

// scanLit finds m's literal in a line, head then the stream's pieces
// (read to the line's end), carrying the last len-1 bytes from one piece
// to the next; it returns where the first one starts, or -1.
func scanLit(m *matcher, st *lineStream, head []byte) int {
	start := m.index(head, 0)
	keepN := len(m.lit) - 1
	tail := append([]byte(nil), head[len(head)-min(keepN, len(head)):]...)
	seen := len(head) // bytes of the line before p
	for p := st.next(); p != nil; p = st.next() {
		if start < 0 {
			// Across the edge (tail and p's first bytes), then in p.
			edge := append(tail, p[:min(keepN, len(p))]...)
			if i := m.index(edge, 0); i >= 0 {
				start = seen - len(tail) + i
			} else if i := m.index(p, 0); i >= 0 {
				start = seen + i
			}
			if len(p) >= keepN {
				tail = append(tail[:0], p[len(p)-keepN:]...)
			} else {
				tail = append(tail[:0], edge[len(edge)-min(keepN, len(edge)):]...)
			}
		}
		seen += len(p)
	}
	return start
}

// findRunes runs the regexp over a line given as runes: where its first
// match starts and how long it is, or -1.
func (s *searcher) findRunes(rr *lineRunes) (int, int) {
	var loc []int
	if s.m.word {
		if l := s.m.re.FindReaderSubmatchIndex(rr); l != nil {
			loc = l[2:4]
		}
	} else {
		loc = s.m.re.FindReaderIndex(rr)
	}
	if loc == nil {
		return -1, 0
	}
	return loc[0], loc[1] - loc[0]
}

// lineStream reads the rest of a line from a stream, a piece at a time.
// A piece never ends inside a UTF-8 sequence: its first bytes wait for the
// next piece (hold), so the regexp decodes the runes it would in one
// slice.
type lineStream struct {
	r       io.Reader
	buf     []byte
	text    bool // -a: NUL bytes are text
	hold    [utf8.UTFMax]byte
	held    int
	rest    []byte // read past the line's "\n"
	read    int64  // bytes read from r
	lineLen int64  // bytes of the line given by next
	nul     bool   // a NUL byte was in the line
	end     bool   // the line is over
	eof     bool   // and so is the stream
	err     error
}

// holdTail keeps back the start of a UTF-8 sequence that head ends in,
// for the first piece, and returns the rest of head.
func (l *lineStream) holdTail(head []byte) []byte {
	k := runeStart(head)
	l.held = copy(l.hold[:], head[k:])
	return head[:k]
}

// runeStart is where an incomplete UTF-8 sequence at p's end starts, or
// len(p).
func runeStart(p []byte) int {
	for k := len(p) - 1; k >= 0 && k >= len(p)-utf8.UTFMax+1; k-- {
		if utf8.RuneStart(p[k]) {
			if !utf8.FullRune(p[k:]) {
				return k
			}
			break
		}
	}
	return len(p)
}

// next is the next piece of the line, without its "\n" (nor a "\r" just
// before it in the same piece), or nil once the line is over.
func (l *lineStream) next() []byte {
	for !l.end {
		h := copy(l.buf, l.hold[:l.held])
		l.held = 0
		n, err := l.r.Read(l.buf[h:])
		l.read += int64(n)
		switch {
		case err == io.EOF || (err == nil && n == 0):
			l.end, l.eof = true, true
		case err != nil:
			l.end, l.err = true, err
			return nil
		}
		p := l.buf[:h+n]
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			l.end, l.eof, l.rest = true, false, p[i+1:]
			p = bytes.TrimSuffix(p[:i], []byte{'\r'})
		} else if !l.end {
			k := runeStart(p)
			l.held = copy(l.hold[:], p[k:])
			p = p[:k]
		}
		if !l.text && bytes.IndexByte(p, 0) >= 0 {
			l.nul = true
		}
		l.lineLen += int64(len(p))
		return p
	}
	return nil
}

// lineRunes gives a long line to the regexp as runes: cur, then the
// stream's pieces.
type lineRunes struct {
	cur []byte
	st  *lineStream
}

func (l *lineRunes) ReadRune() (rune, int, error) {
	for len(l.cur) == 0 {
		p := l.st.next()
		if p == nil {
			return 0, 0, io.EOF
		}
		l.cur = p
	}
	r, size := utf8.DecodeRune(l.cur)
	l.cur = l.cur[size:]
	return r, size, nil
}
