package ops

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"hash"
	"io"
	"unicode/utf8"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/textio"
)

// A read within the byte budget (SPEC, read): a read whose JSON would
// exceed max_result_bytes is a page. It ends at the last whole line that
// fits; a first line alone over the budget is cut at a UTF-8 boundary
// (text_truncated); a base64 page ends at a multiple of 3 bytes, so the
// pages' base64 texts join into the file's. The page carries
// truncated, limit "max_result_bytes", next_offset and next_cursor: the
// same call with that cursor gives the bytes after the page, so that
// following the cursors gives the file (or the lines the call selected)
// exactly.
//
// The budget counts the result as fsbox prints it: the JSON document,
// compact, without its newline, measured (the envelope encoded, the
// content's string counted as the encoder writes it).

// readAt is where a cursor resumes a read: line N of the file (0-based),
// Skip bytes into it; restarted when the cursor's file changed since
// (the page starts again at the call's own offset).
type readAt struct {
	n, skip   int64
	restarted bool
	id        string // the file's identity, for the next cursor
}

// readResume is where the call's page starts: its own offset, or the
// position its cursor names in the same file.
func readResume(f *sandbox.File, o ReadOptions) (readAt, error) {
	at := readAt{n: o.Offset, id: fileID(f.Info.Size, f.Info.ModTime.UnixNano(), f.Info.Key(), f.Stream())}
	c := o.Paging.From
	if c == nil {
		return at, nil
	}
	if c.Arg != 0 || c.Key != "" || c.N < o.Offset || (o.Limit > 0 && c.N >= o.Offset+o.Limit) {
		return readAt{}, errCursor("does not name a position of this read")
	}
	if c.ID != at.id {
		at.restarted = true // changed since the cursor was made: start again
		return at, nil
	}
	at.n, at.skip = c.N, c.Skip
	return at, nil
}

// readPage is readBody at the cursor's position (the page starts Skip
// bytes into line N), then cut to the byte budget.
func readPage(sb *sandbox.Sandbox, f *sandbox.File, src io.Reader, o ReadOptions, at readAt, whole hash.Hash) (ReadResult, error) {
	ob := o
	ob.Offset = at.n
	if o.Limit > 0 {
		ob.Limit = o.Limit - (at.n - o.Offset) // the rest of the call's window
	}
	res, err := readBody(sb, f, src, ob, whole)
	if err != nil {
		return ReadResult{}, err
	}
	res.paged, res.Restarted = o.Paged, at.restarted
	if at.skip > 0 {
		first := len(res.Raw)
		if i := bytes.IndexByte(res.Raw, '\n'); i >= 0 {
			first = i + 1
		}
		if at.skip >= int64(first) {
			return ReadResult{}, errCursor("does not name a position of this read")
		}
		res.Raw, res.skip = res.Raw[at.skip:], at.skip
	}
	if o.Whole {
		return res, nil
	}
	return res, res.fitBudget(sb.Limits().MaxResultBytes, ob, at)
}

// fitBudget cuts the page to budget bytes of JSON (none when budget is 0
// or less): the last whole line that fits, else the first line cut at a
// UTF-8 boundary; base64 at a multiple of 3 bytes. A page always gives
// something (a character, 3 bytes), so that following the cursors ends.
func (res *ReadResult) fitBudget(budget int64, o ReadOptions, at readAt) error {
	if budget <= 0 || len(res.Raw) == 0 {
		return nil
	}
	if res.jsonSize(o) <= budget {
		return nil
	}
	raw := res.Raw
	eof := res.EOF
	// The envelope as a cut page has it, at its largest: every field set,
	// the cursor and numbers of the longest a page of this read can have.
	res.Truncated, res.Limit, res.TextTruncated, res.CutLines = true, "max_result_bytes", true, 1
	big := int64(1<<62 - 1)
	res.NextOffset = &big
	res.Lines, res.EOF = big, false
	res.NextCursor = o.Paging.next(Cursor{N: big, Skip: big, ID: at.id})
	res.Raw = nil
	avail := budget - res.envSize(o) // for the content's text, quotes and all
	// That envelope is the largest; the page's own is smaller: grow the
	// page by what is left while it still fits, measured each time, and
	// shrink it by what is over when it does not.
	best, bestCut := -1, false
	tried := map[int]bool{}
	for try := 0; try < 16; try++ {
		p, cutLine := res.cutAt(raw, o, avail)
		if tried[p] {
			break
		}
		tried[p] = true
		res.setPage(raw, p, cutLine, eof, o, at)
		size := res.jsonSize(o)
		if size > budget && !(best < 0 && p <= minPage(o)) {
			avail = res.contentSize(o) - (size - budget)
			continue
		}
		if p > best {
			best, bestCut = p, cutLine
		}
		if size >= budget || p == len(raw) {
			break
		}
		avail = res.contentSize(o) + (budget - size)
	}
	if best < 0 {
		best, bestCut = res.cutAt(raw, o, avail)
	}
	res.setPage(raw, best, bestCut, eof, o, at)
	return nil
}

// minPage is the least a page gives whatever the budget.
func minPage(o ReadOptions) int {
	if o.Encoding == "base64" {
		return 3
	}
	return utf8.UTFMax
}

// cutAt is how many bytes of raw a page holds whose content's JSON text
// (quotes included) is at most avail bytes, and whether it cuts a line.
func (res *ReadResult) cutAt(raw []byte, o ReadOptions, avail int64) (int, bool) {
	if o.Encoding == "base64" {
		n := max((avail-2)/4*3, 3)
		return int(min(n, int64(len(raw)))), false
	}
	bom := 0
	if o.Offset == 0 && res.skip == 0 && res.BOM && bytes.HasPrefix(raw, textio.BOM) {
		bom = len(textio.BOM) // not in the content
	}
	used, end := int64(2), 0
	for end < len(raw) {
		next := len(raw)
		if i := bytes.IndexByte(raw[end:], '\n'); i >= 0 {
			next = end + i + 1
		}
		from := end
		if from < bom {
			from = bom
		}
		n := jsonBytesLen(raw[from:next]) - 2
		if used+n > avail {
			break
		}
		used, end = used+n, next
	}
	if end > 0 {
		return end, false
	}
	// Not even the first line fits: cut it at a UTF-8 boundary.
	line := raw
	if i := bytes.IndexByte(raw, '\n'); i >= 0 {
		line = raw[:i+1]
	}
	p := bom
	for p < len(line) {
		r, size := utf8.DecodeRune(line[p:])
		n := int64(3) // an invalid byte: at most one U+FFFD
		if r != utf8.RuneError || size > 1 {
			n = jsonBytesLen(line[p:p+size]) - 2
		}
		if used+n > avail {
			break
		}
		used, p = used+n, p+size
	}
	if p == bom {
		// Not even one character: one anyway, so that the pages move on.
		_, size := utf8.DecodeRune(line[p:])
		p += size
	}
	return p, p < len(line)
}

// setPage makes the page raw[:p] of the selection raw (which ended the
// file when eof), with the fields of a page the byte budget cut.
func (res *ReadResult) setPage(raw []byte, p int, cutLine, eof bool, o ReadOptions, at readAt) {
	page := raw[:p]
	res.Raw = page
	nl := int64(bytes.Count(page, []byte{'\n'}))
	res.Lines = nl
	if p > 0 && page[p-1] != '\n' {
		res.Lines++ // a line the page holds part of
	}
	res.TextTruncated, res.CutLines = cutLine, 0
	if cutLine {
		res.CutLines = 1
	}
	if p == len(raw) {
		// The whole selection fitted after all.
		res.Truncated, res.Limit, res.NextCursor, res.TextTruncated, res.CutLines = false, "", "", false, 0
		res.EOF = eof
		if eof {
			res.NextOffset = nil
		} else {
			next := o.Offset + nl
			if p > 0 && page[p-1] != '\n' {
				next++
			}
			res.NextOffset = &next
		}
		return
	}
	res.EOF = false
	// The next page starts at line o.Offset+nl, this many bytes into it.
	line := o.Offset + nl
	skip := int64(p)
	if nl > 0 {
		skip = int64(p - (bytes.LastIndexByte(page, '\n') + 1))
	} else {
		skip += res.skip
	}
	next := line
	if nl == 0 {
		next = line + 1 // no line end on the page: the line after the cut one
	}
	res.NextOffset = &next
	res.NextCursor = o.Paging.next(Cursor{N: line, Skip: skip, ID: at.id})
}

// jsonSize is the length of the result as fsbox prints it in JSON
// (compact, without the newline), its content as the encoding gives it
// from Raw: the envelope encoded, the content's text counted as the
// encoder writes it.
func (res *ReadResult) jsonSize(o ReadOptions) int64 {
	return res.envSize(o) + res.contentSize(o)
}

// envSize is jsonSize without the content's text (its quotes neither).
func (res *ReadResult) envSize(o ReadOptions) int64 {
	content := res.Raw
	if o.Encoding != "base64" && o.Offset == 0 && res.skip == 0 && res.BOM && bytes.HasPrefix(content, textio.BOM) {
		content = content[len(textio.BOM):]
	}
	env := *res
	env.Content, env.Raw = "", nil
	env.Lossy = o.Encoding != "base64" && !utf8.Valid(content) // as fillContent will say
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(&env) != nil {
		return 0
	}
	return int64(b.Len()) - 1 - 2 // no newline; the empty content's quotes are the content's
}

// contentSize is the length of the content's JSON text, quotes included.
func (res *ReadResult) contentSize(o ReadOptions) int64 {
	if o.Encoding == "base64" {
		return 2 + int64(base64.StdEncoding.EncodedLen(len(res.Raw)))
	}
	content := res.Raw
	if o.Offset == 0 && res.skip == 0 && res.BOM && bytes.HasPrefix(content, textio.BOM) {
		content = content[len(textio.BOM):]
	}
	return jsonBytesLen(content)
}
