package textio

import (
	"bytes"
	"io"
	"unicode"
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

// ASCII classes for wc -w: a printable character is part of a word, a
// space ends one, a control character is neither (GNU wc 9).
const (
	clsWord    = 0
	clsSpace   = 1
	clsNeutral = 2
	clsMulti   = 3 // first byte of a multi-byte sequence: decode it
)

var byteClass [256]uint8

func init() {
	for b := 0; b < 0x20; b++ {
		byteClass[b] = clsNeutral
	}
	byteClass[0x7F] = clsNeutral
	for _, b := range []byte(" \t\n\v\f\r") {
		byteClass[b] = clsSpace
	}
	for b := 0x80; b < 0x100; b++ {
		byteClass[b] = clsMulti
	}
}

// runeClass classifies a non-ASCII character as GNU wc -w does in a UTF-8
// locale: a printable space or no-break space separates words, another
// printable character is part of one, a non-printable one (C1 controls,
// line and paragraph separators, unassigned code points) is neither.
func runeClass(r rune) uint8 {
	switch r {
	case 0x00A0, 0x1680, 0x2007, 0x202F, 0x205F, 0x2060, 0x3000:
		return clsSpace
	}
	if r >= 0x2000 && r <= 0x200A {
		return clsSpace
	}
	if unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Zs, unicode.Cf, unicode.Co) {
		return clsWord
	}
	return clsNeutral
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
			for i := 0; i < end; {
				cls := byteClass[block[i]]
				if cls == clsMulti {
					r, size := utf8.DecodeRune(block[i:end])
					i += size
					if r == utf8.RuneError && size == 1 {
						continue // an invalid byte is no character, and no word
					}
					c.Chars++
					cls = runeClass(r)
				} else {
					i++
					c.Chars++
				}
				switch cls {
				case clsWord:
					if !inWord {
						c.Words++
						inWord = true
					}
				case clsSpace:
					inWord = false
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
