package ops

import (
	"bytes"
	"errors"
	"io"

	"github.com/fsbox/fsbox/pkg/textio"
)

const (
	searchBuf   = 256 << 10 // each worker's read buffer: most files fit in one read
	keptBuf     = 1 << 20   // a buffer grown for a long line is kept up to this size
	maxLineGrow = 64 << 20  // grow straight to the end of a file this close (never past textio.MaxLine)
)

// search reads one file in blocks of whole lines and records its matching
// lines in fr, up to s.perFile. A NUL byte anywhere makes the file binary:
// its matches are dropped.
func (s *searcher) search(r io.Reader, size int64, fr *FileResult, bufp *[]byte) error {
	buf := *bufp
	o := s.o
	simple := !o.Invert && o.Before == 0 && o.After == 0
	needLines := !o.Count && !o.FilesWithMatches
	keep := needLines  // whether match objects are built
	lineNo := int64(1) // number of the first line in the block
	carry := 0
	var lc lineCtx
	if keep { // -c and -l count lines: no context is kept
		lc.init(s.before, s.after)
	}
	var total int64
	for {
		if err := s.ctx.Err(); err != nil {
			return err // nothing more is read once the call is cancelled
		}
		first := total == 0
		n, eof, rerr := fillBlock(r, buf[carry:], size-total)
		total += int64(n)
		if rerr != nil {
			return rerr
		}
		if first && bytes.HasPrefix(buf[:n], textio.BOM) {
			// A UTF-8 BOM is no text: ^ matches after it and columns
			// count from it, as in rg (read strips it too).
			n = copy(buf, buf[len(textio.BOM):n])
		}
		data := buf[:carry+n]
		end := len(data)
		if !eof {
			end = bytes.LastIndexByte(data, '\n') + 1
			if end == 0 {
				// A NUL makes the file binary wherever it lies: said before
				// any growth (a sparse file is one long run of NULs).
				if s.binary(data) {
					fr.Binary, fr.Matches, fr.Count = true, nil, 0
					return nil
				}
				if len(data) >= textio.MaxLine {
					fr.LongLine, fr.Matches, fr.Count = true, nil, 0
					return nil
				}
				// One line longer than the buffer: grow it, to the end of
				// the file at once when that is near (fstat said how far),
				// so a long line costs one allocation, not a doubling
				// chain. Only a modest buffer is kept for the next file.
				n := min(2*len(buf), textio.MaxLine+1)
				if rest := size - total; rest >= 0 && rest <= maxLineGrow {
					n = max(n, min(len(data)+int(rest)+1, textio.MaxLine+1))
				}
				nb := make([]byte, n)
				copy(nb, data)
				buf = nb
				if len(buf) <= keptBuf {
					*bufp = buf
				}
				carry = len(data)
				continue
			}
		}
		block := data[:end]
		if s.binary(block) {
			fr.Binary, fr.Matches, fr.Count = true, nil, 0
			return nil
		}
		if simple {
			var full bool
			if lineNo, full = s.simpleBlock(block, fr, lineNo, needLines); full {
				return nil
			}
		} else {
			done := false
			for pos := 0; pos < len(block) && !done; {
				i := bytes.IndexByte(block[pos:], '\n')
				lineEnd := len(block)
				if i >= 0 {
					lineEnd = pos + i + 1
				}
				line := block[pos:lineEnd]
				hit := s.m.matchLine(trimEOL(line)) != o.Invert
				switch {
				case hit && fr.Count < s.perFile:
					if keep && s.o.OnlyMatching {
						fr.Matches = s.appendMatches(fr.Matches, fr.Path, lineNo, line)
					} else if keep {
						m := s.match(fr.Path, lineNo, line)
						m.BeforeRaw = lc.takeBefore()
						fr.Matches = append(fr.Matches, m)
						lc.afterLeft = s.after
					}
					fr.Count++
				case hit && keep && lc.afterLeft > 0 && len(fr.Matches) > 0:
					// -m reached: a match in the last one's after-context
					// is printed as context, as grep and rg do.
					last := &fr.Matches[len(fr.Matches)-1]
					last.AfterRaw = append(last.AfterRaw, CtxLine{Line: lineNo, Raw: dupLine(line)})
					lc.afterLeft--
				case hit:
					done = true // -m reached: stop, as grep does
				case keep && lc.afterLeft > 0 && len(fr.Matches) > 0:
					last := &fr.Matches[len(fr.Matches)-1]
					last.AfterRaw = append(last.AfterRaw, CtxLine{Line: lineNo, Raw: dupLine(line)})
					lc.afterLeft--
				default:
					lc.remember(lineNo, line)
				}
				if hit {
					lc.reset()
				}
				lineNo++
				pos = lineEnd
			}
			if done || (fr.Count >= s.perFile && lc.afterLeft == 0) {
				break
			}
		}
		if eof {
			break
		}
		carry = copy(buf, data[end:])
	}
	if keep && !simple {
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
	return nil
}

// simpleBlock records the matching lines of block (whole lines, the first
// numbered lineNo) in fr, for a search without context or -v: the
// matcher skips from match to match, and lines are counted only when
// matches are kept. It returns the number of the line after the block, and
// whether fr is full (s.perFile lines), in which case the count stops
// short of the block's end.
func (s *searcher) simpleBlock(block []byte, fr *FileResult, lineNo int64, needLines bool) (int64, bool) {
	pos, last := 0, 0
	for fr.Count < s.perFile {
		st, en := s.m.next(block, pos)
		if st < 0 {
			break
		}
		if needLines {
			lineNo += int64(bytes.Count(block[last:st], nl))
			last = st
			fr.Matches = s.appendMatches(fr.Matches, fr.Path, lineNo, block[st:en])
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
// read that would return 0 on every small file.
func fillBlock(r io.Reader, buf []byte, expect int64) (n int, eof bool, err error) {
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		switch {
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

// appendMatches adds a matching line's Match, or with -o one Match per
// match in it (none for -v: an inverted line holds no match), each with
// the match as its text.
func (s *searcher) appendMatches(ms []Match, path string, lineNo int64, line []byte) []Match {
	if !s.o.OnlyMatching {
		return append(ms, s.match(path, lineNo, line))
	}
	if s.o.Invert {
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
		raw := dupLine(body[l[0]:l[1]])
		m := Match{Path: path, Line: lineNo, Column: l[0] + 1, Raw: raw, MatchLen: len(raw), Only: true}
		m.Text = s.text(raw, &m.TextTruncated)
		if m.TextTruncated {
			m.TextBytes = len(raw)
		}
		ms = append(ms, m)
	}
	return ms
}

// match builds a Match for a line (with or without its terminator).
func (s *searcher) match(path string, lineNo int64, line []byte) Match {
	raw := dupLine(line)
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
	m := Match{Path: path, Line: lineNo, Column: col, Raw: raw, MatchLen: n}
	m.Text = s.text(body, &m.TextTruncated)
	if m.TextTruncated {
		m.TextBytes = len(body)
	}
	return m
}

// text is a line's JSON text: cut at s.cut, which sets *cut.
func (s *searcher) text(body []byte, cut *bool) string {
	if s.cut > 0 && len(body) > s.cut {
		*cut = true
		return string(cutText(body, s.cut))
	}
	return string(body)
}

// dupLine copies a line without its "\n" (a "\r" stays, as grep prints it).
func dupLine(line []byte) []byte {
	line = bytes.TrimSuffix(line, nl)
	return append([]byte(nil), line...)
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

func (c *lineCtx) remember(lineNo int64, line []byte) {
	if c.before == 0 {
		return
	}
	l := CtxLine{Line: lineNo, Raw: dupLine(line)}
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
