// Package textio reads lines of any length in bounded memory: no line-length
// limit, "\r\n" kept as the file has it, and a last line without a newline
// is a line.
package textio

import (
	"bytes"
	"context"
	"errors"
	"io"
)

// DefaultBufSize is the read block size: large enough that newline counting
// runs at memory speed, small enough to keep peak RSS low.
const DefaultBufSize = 256 << 10

// Reader reads lines from an io.Reader in blocks.
type Reader struct {
	r          io.Reader
	buf        []byte
	start, end int
	err        error
	partial    bool   // bytes consumed since the last newline
	off        int64  // bytes consumed
	long       []byte // the kept head of a line cut by ReadLineMax
}

// Offset returns how many bytes have been consumed.
func (r *Reader) Offset() int64 { return r.off }

// NewReader returns a Reader with a block of size bytes (DefaultBufSize if 0).
func NewReader(r io.Reader, size int) *Reader {
	if size <= 0 {
		size = DefaultBufSize
	}
	return &Reader{r: r, buf: make([]byte, size)}
}

// fill makes sure unconsumed bytes are buffered; false at end of input.
func (r *Reader) fill() bool {
	if r.start < r.end {
		return true
	}
	r.start, r.end = 0, 0
	for r.end == 0 && r.err == nil {
		r.end, r.err = r.r.Read(r.buf)
	}
	return r.end > 0
}

// Err returns the first read error other than io.EOF.
func (r *Reader) Err() error {
	if errors.Is(r.err, io.EOF) {
		return nil
	}
	return r.err
}

// AtEOF reports whether every byte has been consumed.
func (r *Reader) AtEOF() bool { return !r.fill() }

// Peek returns the buffered bytes without consuming them.
func (r *Reader) Peek() []byte {
	r.fill()
	return r.buf[r.start:r.end]
}

func (r *Reader) consume(n int) {
	if n > 0 {
		r.partial = r.buf[r.start+n-1] != '\n'
	}
	r.start += n
	r.off += int64(n)
}

// SkipLines discards up to n lines and returns how many it discarded
// (fewer only at end of input). It counts newlines over whole blocks.
func (r *Reader) SkipLines(n int64) int64 {
	var done int64
	for done < n && r.fill() {
		chunk := r.buf[r.start:r.end]
		if c := int64(bytes.Count(chunk, nl)); done+c < n {
			done += c
			if c == 0 {
				r.start += len(chunk)
				r.off += int64(len(chunk))
				r.partial = true
			} else {
				r.consume(len(chunk))
			}
			continue
		}
		off := 0
		for done < n {
			off += bytes.IndexByte(chunk[off:], '\n') + 1
			done++
		}
		r.consume(off)
	}
	if done < n && r.partial {
		done++ // a final line without a newline
		r.partial = false
	}
	return done
}

// AppendLines appends up to n whole lines (all of them if n < 0) to dst,
// terminators included, but never lets dst grow past max bytes: the line
// that would is left out and cut is true. It returns the lines appended.
func (r *Reader) AppendLines(dst []byte, n int64, max int) (out []byte, lines int64, cut bool) {
	cur := 0 // bytes of the current, unfinished line in dst
	for n < 0 || lines < n {
		if !r.fill() {
			if cur > 0 {
				lines++
			}
			return dst, lines, false
		}
		chunk := r.buf[r.start:r.end]
		i := bytes.IndexByte(chunk, '\n')
		take := len(chunk)
		if i >= 0 {
			take = i + 1
		}
		if len(dst)+take > max {
			return dst[:len(dst)-cur], lines, true
		}
		dst = append(dst, chunk[:take]...)
		r.consume(take)
		if i >= 0 {
			lines++
			cur = 0
		} else {
			cur += take
		}
	}
	return dst, lines, false
}

var nl = []byte{'\n'}

// ReadLine returns the next line with its terminator, or io.EOF when none
// is left. A line of any length is returned whole (the buffer grows to the
// longest line, never to the file). The slice is valid until the next call.
func (r *Reader) ReadLine() ([]byte, error) {
	scanned := 0
	for {
		if i := bytes.IndexByte(r.buf[r.start+scanned:r.end], '\n'); i >= 0 {
			line := r.buf[r.start : r.start+scanned+i+1]
			r.consume(len(line))
			return line, nil
		}
		scanned = r.end - r.start
		if r.err != nil {
			if scanned == 0 {
				if errors.Is(r.err, io.EOF) {
					return nil, io.EOF
				}
				return nil, r.err
			}
			line := r.buf[r.start:r.end]
			r.consume(len(line))
			return line, nil
		}
		// Make room: move the partial line to the front, grow if full.
		if r.start > 0 {
			copy(r.buf, r.buf[r.start:r.end])
			r.end -= r.start
			r.start = 0
		}
		if r.end == len(r.buf) {
			r.buf = append(r.buf, make([]byte, len(r.buf))...)
		}
		var n int
		n, r.err = r.r.Read(r.buf[r.end:])
		r.end += n
	}
}

// MaxLine is the longest line any command holds whole: 16 MiB. A longer
// line is cut (JSON text, see ReadLineMax), skipped and counted (grep), or
// too_large (the text form of slice, cut's split), never held without
// bound. (Minified bundles run to a few MiB a line; a line past 16 MiB is
// data, not text.)
const MaxLine = 16 << 20

// ReadLineMax is ReadLine holding at most limit bytes of a line: a longer
// line's first limit bytes are returned and the rest of it is read and
// dropped. n is the whole line's length, terminator included, so n >
// len(line) says the line was cut. The slice is valid until the next call.
func (r *Reader) ReadLineMax(limit int) (line []byte, n int64, err error) {
	scanned := 0
	for {
		if i := bytes.IndexByte(r.buf[r.start+scanned:r.end], '\n'); i >= 0 {
			line := r.buf[r.start : r.start+scanned+i+1]
			r.consume(len(line))
			if len(line) > limit {
				return r.keepLong(line[:limit], int64(len(line)-limit))
			}
			return line, int64(len(line)), nil
		}
		scanned = r.end - r.start
		if r.err != nil {
			if scanned == 0 {
				if errors.Is(r.err, io.EOF) {
					return nil, 0, io.EOF
				}
				return nil, 0, r.err
			}
			line := r.buf[r.start:r.end]
			r.consume(len(line))
			if len(line) > limit {
				return r.keepLong(line[:limit], int64(len(line)-limit))
			}
			return line, int64(len(line)), nil
		}
		if scanned > limit {
			// Past the cap: keep its head, then drop the rest of the line
			// block by block, never growing the buffer for it.
			head := r.buf[r.start : r.start+limit]
			dropped := int64(scanned - limit)
			r.consume(scanned)
			line, n, _ := r.keepLong(head, dropped)
			rest, err := r.dropLine()
			return line, n + rest, err
		}
		// Make room: move the partial line to the front, grow if full.
		if r.start > 0 {
			copy(r.buf, r.buf[r.start:r.end])
			r.end -= r.start
			r.start = 0
		}
		if r.end == len(r.buf) {
			// Double, but never past the cap and one block: a line that
			// long is cut above.
			r.buf = append(r.buf, make([]byte, max(min(len(r.buf), limit+DefaultBufSize-len(r.buf)), 1))...)
		}
		var m int
		m, r.err = r.r.Read(r.buf[r.end:])
		r.end += m
	}
}

// keepLong copies the head of a cut line where the next read cannot
// overwrite it; n is the head's length plus the dropped bytes.
func (r *Reader) keepLong(head []byte, dropped int64) ([]byte, int64, error) {
	r.long = append(r.long[:0], head...)
	return r.long, int64(len(head)) + dropped, nil
}

// dropLine consumes the rest of the current line, terminator included,
// and returns how many bytes that was.
func (r *Reader) dropLine() (int64, error) {
	var n int64
	for r.fill() {
		chunk := r.buf[r.start:r.end]
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			r.consume(i + 1)
			return n + int64(i) + 1, nil
		}
		r.consume(len(chunk))
		n += int64(len(chunk))
	}
	return n, r.Err()
}

// LineStartFromEnd returns the byte offset where the k-th line from the
// end of a size-byte input starts (k >= 1), scanning backwards in blocks of
// len(buf); 0 when the input has k lines or fewer, size when k <= 0.
func LineStartFromEnd(r io.ReaderAt, size, k int64, buf []byte) (int64, error) {
	if k <= 0 {
		return size, nil
	}
	end := size
	if end > 0 {
		var last [1]byte
		if _, err := r.ReadAt(last[:], end-1); err != nil {
			return 0, err
		}
		if last[0] == '\n' {
			end-- // the final newline ends the last line; it starts none
		}
	}
	for end > 0 {
		n := int64(len(buf))
		if n > end {
			n = end
		}
		block := buf[:n]
		if _, err := r.ReadAt(block, end-n); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		for {
			i := bytes.LastIndexByte(block, '\n')
			if i < 0 {
				break
			}
			k--
			if k == 0 {
				return end - n + int64(i) + 1, nil
			}
			block = block[:i]
		}
		end -= n
	}
	return 0, nil
}

// SplitLines splits b into lines, terminators kept; a final line without a
// newline is a line. It allocates only the slice headers.
func SplitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

// EOL names the line endings in b: "lf", "crlf", "mixed", or "none".
func EOL(b []byte) string {
	lf, crlf := 0, 0
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		if i > 0 && b[i-1] == '\r' {
			crlf++
		} else {
			lf++
		}
		b = b[i+1:]
	}
	switch {
	case lf > 0 && crlf > 0:
		return "mixed"
	case crlf > 0:
		return "crlf"
	case lf > 0:
		return "lf"
	}
	return "none"
}

// TrimEOL strips one "\n" or "\r\n" from the end of a line.
func TrimEOL(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
	}
	return line
}

// SniffLen is how much of a file's start is checked for a NUL byte.
const SniffLen = 8 << 10

// IsBinary reports whether b holds a NUL byte, as grep and ripgrep judge.
func IsBinary(b []byte) bool { return bytes.IndexByte(b, 0) >= 0 }

// BOM is the UTF-8 byte order mark.
var BOM = []byte{0xEF, 0xBB, 0xBF}

// WithContext returns r, made to fail with ctx's error once ctx is done:
// no read reaches the file after a cancel is seen. A context that can
// never be done leaves r as it is.
func WithContext(ctx context.Context, r io.Reader) io.Reader {
	if ctx == nil || ctx.Done() == nil {
		return r
	}
	return &ctxReader{ctx: ctx, r: r}
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
