package cli

import (
	"bytes"
	"unicode/utf8"
)

// appendJSONString appends s as a JSON string, byte for byte as
// encoding/json writes it with SetEscapeHTML(false): \" \\ \b \f \n \r \t,
// other control bytes as \u00XX, invalid UTF-8 as \ufffd, and U+2028 and
// U+2029 escaped (FuzzJSONString holds it to that).
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// bigStringMark stands in for a large string field while the rest of a
// result is encoded; no other field can hold a NUL byte.
const bigStringMark = "\x00"

// emitWithString prints v as document does (no --fields or --jq to
// apply), but encodes the string *field itself, straight into the
// output: encoding/json builds a long string by repeated growth (about
// five times its size in fresh memory, a page fault per page), where
// this takes one allocation.
func (p *output) emitWithString(v any, field *string) error {
	s := *field
	*field = bigStringMark
	var doc bytes.Buffer
	err := newEncoder(&doc, p.pretty && p.format == formatJSON).Encode(v)
	*field = s
	if err != nil {
		return err
	}
	mark := []byte(`"\u0000"`)
	i := bytes.Index(doc.Bytes(), mark)
	if i < 0 || bytes.Count(doc.Bytes(), mark) != 1 {
		return p.document(v)
	}
	out := make([]byte, 0, doc.Len()+len(s)+len(s)/8+16)
	out = append(out, doc.Bytes()[:i]...)
	out = appendJSONString(out, s)
	out = append(out, doc.Bytes()[i+len(mark):]...)
	w, _ := p.jsonOut() // one whole document: nothing is held back
	_, err = w.Write(out)
	return err
}
