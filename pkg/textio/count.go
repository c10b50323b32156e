package textio

import (
	"bytes"
	"io"
	"unicode/utf8"
)

// Counts are wc's figures for one input.
type Counts struct {
	Lines int64 `json:"lines"` // newline bytes, as wc -l
	Words int64 `json:"words"` // runs of non-space, as wc -w
	Bytes int64 `json:"bytes"`
	Chars int64 `json:"chars"` // UTF-8 characters, as wc -m in a UTF-8 locale
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.Lines += o.Lines
	c.Words += o.Words
	c.Bytes += o.Bytes
	c.Chars += o.Chars
}

// byteClass: 1 = ASCII space, 2 = UTF-8 continuation byte, 4 = a lead byte
// that may start a multi-byte space (U+0085, U+1680, U+2000.., U+3000).
var byteClass [256]uint8

func init() {
	for _, b := range []byte(" \t\n\v\f\r") {
		byteClass[b] = 1
	}
	for b := 0x80; b < 0xC0; b++ {
		byteClass[b] = 2
	}
	byteClass[0xC2], byteClass[0xE1], byteClass[0xE2], byteClass[0xE3] = 4, 4, 4, 4
}

// isUnicodeSpace is glibc's iswspace for non-ASCII runes in a UTF-8 locale:
// the no-break spaces (U+00A0, U+2007, U+202F) are not spaces.
func isUnicodeSpace(r rune) bool {
	switch r {
	case 0x85, 0x1680, 0x2028, 0x2029, 0x205F, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200A && r != 0x2007
}

// Count reads r to the end and counts lines, words, bytes and characters
// in one pass over blocks of buf's size.
func Count(r io.Reader, buf []byte) (Counts, error) {
	var c Counts
	inWord := false
	carry := 0 // bytes kept at buf's start from the previous block (a split lead sequence)
	for {
		n, err := r.Read(buf[carry:])
		n += carry
		carry = 0
		if n > 0 {
			block := buf[:n]
			end := n
			if err == nil {
				// Keep an incomplete trailing multi-byte sequence for the next block.
				for k := 1; k <= 3 && k <= n; k++ {
					b := block[n-k]
					if b < 0x80 {
						break
					}
					if b >= 0xC0 {
						if k < utf8SeqLen(b) {
							end = n - k
						}
						break
					}
				}
			}
			c.Lines += int64(bytes.Count(block[:end], nl))
			c.Bytes += int64(end)
			for i := 0; i < end; i++ {
				b := block[i]
				cls := byteClass[b]
				if cls == 0 {
					if !inWord {
						c.Words++
						inWord = true
					}
					c.Chars++
					continue
				}
				switch cls {
				case 1:
					inWord = false
					c.Chars++
				case 2:
					// continuation byte: part of the current character
				case 4:
					r, size := utf8.DecodeRune(block[i:end])
					c.Chars++
					if size > 1 && isUnicodeSpace(r) {
						inWord = false
						i += size - 1
						continue
					}
					if !inWord {
						c.Words++
						inWord = true
					}
				}
			}
			carry = copy(buf, block[end:n])
		}
		if err == io.EOF {
			return c, nil
		}
		if err != nil {
			return c, err
		}
	}
}

func utf8SeqLen(b byte) int {
	switch {
	case b >= 0xF0:
		return 4
	case b >= 0xE0:
		return 3
	}
	return 2
}
