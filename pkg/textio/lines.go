// Package textio reads lines of any length in bounded memory: no line-length
// limit, "\r\n" kept as the file has it, and a last line without a newline
// is a line.
package textio

import (
	"bytes"
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
	partial    bool // bytes consumed since the last newline
}

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
