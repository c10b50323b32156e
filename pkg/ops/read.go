package ops

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
	"github.com/fsbox/fsbox/pkg/textio"
)

var readOp = &spec.Op{
	Name: "read", Class: spec.Read, Result: ReadResult{}, Limit: "max_read_bytes", Pages: true,
	Summary: "print a file's content, or a page of its lines",
	Help: "Prints a text file whole, or LIMIT lines from line OFFSET. A file over max_read_bytes is refused unless read in pages. " +
		"A read whose JSON would pass max_result_bytes is a page: it ends at the last whole line that fits (a first line alone over the budget is cut at a UTF-8 boundary, text_truncated; base64 at a multiple of 3 bytes), with truncated, limit max_result_bytes, next_offset and next_cursor, and the same call with that cursor gives the rest; it exits 9 (truncated) unless offset, limit or max-bytes asked for a page. " +
		"A UTF-8 BOM and CRLF line ends are reported, not changed.",
	Args: []spec.Arg{stdinArg("the file to read")},
	Options: []spec.Option{
		{Name: "offset", Type: spec.Int, Meta: "N", Min: min0, Help: "first line to return, 0-based"},
		{Name: "limit", Type: spec.Int, Meta: "N", Min: min1, DefaultText: "all", Help: "number of lines to return"},
		{Name: "max-bytes", Type: spec.Int, Meta: "N", Unit: "bytes", Min: min1, Narrows: "max_read_bytes", Help: "largest file to read whole"},
		{Name: "encoding", Type: spec.String, Meta: "ENC", Default: "utf-8", Enum: []string{"utf-8", "base64"}, Help: "how content is given: utf-8 text, or base64 for a binary file"},
		{Name: "if-none-match", Type: spec.String, Meta: "SHA", Help: "the SHA-256 (64 hex digits) of the content read before: when the file still hashes to it, the answer is {path, unchanged: true, sha256} without content, whatever the file's size or type; else the read as without it"},
	},
	Examples: []spec.Example{
		{Cmd: "read main.go", Says: "the file as JSON, with its size, line count and SHA-256"},
		{Cmd: "read notes.txt --offset 1 --limit 2 --format text", Says: "lines 2 and 3, as sed -n 2,3p prints them"},
		{Cmd: "read notes.txt --if-none-match 0000000000000000000000000000000000000000000000000000000000000000", Says: "the file as JSON, as it no longer hashes to that SHA-256; {path, unchanged: true, sha256} when it still does"},
	},
	JSONNote: "with if-none-match and content that still hashes to it: {path, unchanged: true, sha256} alone (the text form prints nothing on stdout and a note on stderr)",
	Text:     "the selected bytes exactly as the file holds them (BOM and CRLF kept; base64 text with --encoding base64), as cat or sed -n would",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		o := ReadInput(in)
		o.RawOnly = in.Exact && o.Encoding != "base64" // a text form prints the bytes alone
		pg, err := pagingOf(sb, in)
		if err != nil {
			return nil, err
		}
		o.Paging = pg
		r, err := Read(ctx, sb, o)
		if err == nil && r.Unchanged {
			return &ReadUnchanged{Path: r.Path, Unchanged: true, SHA256: *r.SHA256}, nil
		}
		return &r, err
	},
}

// ReadInput is read's options from its descriptor's input (every face
// builds them here).
func ReadInput(in *spec.Input) ReadOptions {
	return ReadOptions{Path: in.String("path"), Offset: in.Int("offset"), Limit: in.Int("limit"),
		MaxBytes: in.Int("max-bytes"), Encoding: in.String("encoding"), IfNoneMatch: in.String("if-none-match"),
		Paged: in.IsSet("offset") || in.IsSet("limit") || in.IsSet("max-bytes")}
}

// ReadOptions are read's inputs.
type ReadOptions struct {
	Path     string
	Offset   int64  // first line, 0-based
	Limit    int64  // lines to return; 0 = all
	MaxBytes int64  // lowers the policy's max_read_bytes; 0 = the policy's
	Encoding string // "utf-8" (default) or "base64"
	RawOnly  bool   // fill Raw only, not Content (the text form prints Raw)
	// IfNoneMatch, when set, is the SHA-256 (hex) of the content the
	// caller holds: a file that still hashes to it is answered Unchanged,
	// without content, whatever its size or type.
	IfNoneMatch string
	// Paged: the caller asked for a page (offset, limit or max-bytes
	// given, even at their defaults): a page the byte budget ends exits
	// 0, as a max_read_bytes page does; without it, 9 (truncated).
	Paged bool
	// Whole: no max_result_bytes page: the whole selection up to
	// max_read_bytes, as the reference profile's read tools answer.
	Whole bool
	// Paging is the call's cursor (where a page the byte budget cut goes
	// on) and how the next one is sealed.
	Paging Paging
}

// ReadResult is a file's content, or one page of it.
// With IfNoneMatch and content that still hashes to it, it is Unchanged:
// the path and sha256 alone (the face prints a ReadUnchanged), so the
// fields an unchanged answer leaves out are optional in the schema.
type ReadResult struct {
	Path       string  `json:"path"`
	Size       int64   `json:"size" schema:"optional"`
	Mtime      string  `json:"mtime" schema:"optional"`
	Encoding   string  `json:"encoding" schema:"optional"`
	Content    string  `json:"content" schema:"optional" fsbox:"big"` // up to max_read_bytes: a face may write it in place
	Offset     int64   `json:"offset" schema:"optional"`
	Lines      int64   `json:"lines" schema:"optional"`
	EOF        bool    `json:"eof" schema:"optional"`
	NextOffset *int64  `json:"next_offset" schema:"optional"`
	SHA256     *string `json:"sha256"`
	EOL        string  `json:"eol" schema:"optional"`
	BOM        bool    `json:"bom" schema:"optional"`
	Lossy      bool    `json:"lossy" schema:"optional"`
	// Unchanged: the file still hashes to IfNoneMatch (read
	// --if-none-match); no other field but Path and SHA256 is set.
	Unchanged bool `json:"unchanged,omitempty"`
	// Restarted: the cursor's file changed since the page before; this
	// page starts again at the call's own offset.
	Restarted  bool `json:"restarted,omitempty"`
	Truncation `schema:"optional"`

	// paged: the caller asked for a page (ReadOptions.Paged).
	paged bool
	// skip is how many bytes of its first line the page leaves out (a
	// cursor resuming inside a line).
	skip int64

	// Raw is the selected bytes exactly as the file has them (BOM
	// included), for the text form.
	Raw []byte `json:"-"`
}

// Read returns a file's lines [Offset, Offset+Limit). A file no larger
// than max_read_bytes is read whole, so sha256 and eol describe the whole
// file; a larger one must be paged with Offset/Limit, is streamed in
// bounded memory, and has sha256 null (use `stat --sha256`), unless
// IfNoneMatch hashed it whole anyway. With IfNoneMatch, a file whose
// content still hashes to it is Unchanged (path and sha256 alone): the
// file is read once, hashed on the way, whatever its size or type.
func Read(ctx context.Context, sb *sandbox.Sandbox, o ReadOptions) (ReadResult, error) {
	if err := begin(ctx, sb, "read"); err != nil {
		return ReadResult{}, err
	}
	switch {
	case o.Offset < 0:
		return ReadResult{}, usagef(o.Path, "offset must be 0 or more, got %d", o.Offset)
	case o.Limit < 0:
		return ReadResult{}, usagef(o.Path, "limit must be 1 or more, got %d", o.Limit)
	case o.MaxBytes < 0:
		return ReadResult{}, usagef(o.Path, "max-bytes must be 1 or more, got %d", o.MaxBytes)
	case o.IfNoneMatch != "" && !isSHA256Hex(o.IfNoneMatch):
		return ReadResult{}, usagef(o.Path, "if-none-match takes a SHA-256: 64 hex digits, got %q", clipArg(o.IfNoneMatch))
	}
	if o.Encoding == "" {
		o.Encoding = "utf-8"
	}
	if o.Encoding != "utf-8" && o.Encoding != "base64" {
		return ReadResult{}, usagef(o.Path, "encoding must be utf-8 or base64, got %q", o.Encoding)
	}
	f, err := openInput(sb, o.Path)
	if err != nil {
		return ReadResult{}, err
	}
	defer f.Close()
	at, err := readResume(f, o)
	if err != nil {
		return ReadResult{}, err
	}
	src := io.Reader(textio.WithContext(ctx, f))
	if o.IfNoneMatch == "" {
		res, err := readPage(sb, f, src, o, at, nil)
		if err != nil {
			return ReadResult{}, err
		}
		return res, res.fillContent(o)
	}
	// --if-none-match: the file is read once, its hash taken on the way
	// (tee), whatever the normal read made of it; a verdict on the bytes
	// (too_large, binary) still hashes the rest, streamed, so a file of
	// any size is answered in memory that does not grow with it.
	h := sha256.New()
	src = io.TeeReader(src, h)
	res, err := readPage(sb, f, src, o, at, h)
	if err != nil {
		if c := fserr.AsError(err).Code; c != fserr.CodeTooLarge && c != fserr.CodeBinary {
			return ReadResult{}, err
		}
	}
	if _, derr := io.CopyBuffer(io.Discard, src, make([]byte, 64<<10)); derr != nil {
		return ReadResult{}, fserr.AsError(derr)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if sum == strings.ToLower(o.IfNoneMatch) {
		return ReadResult{Path: f.Info.Path, Unchanged: true, SHA256: &sum}, nil
	}
	if err != nil {
		return ReadResult{}, err
	}
	if res.SHA256 == nil {
		res.SHA256 = &sum // a page of a large file: the whole file was hashed anyway
	}
	return res, res.fillContent(o)
}

// ReadPagesAdvice ends read's too_large: how to read a file over the
// cap. A face whose read takes other arguments (the reference profile's
// head and tail) says its own instead.
const ReadPagesAdvice = "read it in pages with offset and limit"

// isSHA256Hex reports whether s is a SHA-256 in hex: 64 hex digits.
func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// clipArg is a value quoted in a usage message, cut to a readable length.
func clipArg(s string) string {
	if len(s) > 80 {
		return string(cutText([]byte(s), 80)) + "…"
	}
	return s
}

// readBody is read up to its content: the page selected into res.Raw,
// with the whole file's sha256 and eol when it was read whole, and the
// verdicts on it (too_large, binary). src reads f; whole, when set, is
// the hash src feeds (--if-none-match), which is the file's sha256 once
// the file was read whole.
func readBody(sb *sandbox.Sandbox, f *sandbox.File, src io.Reader, o ReadOptions, whole hash.Hash) (ReadResult, error) {
	policyCap, capName := holdLimit(sb.Limits().MaxReadBytes, "max_read_bytes")
	capBytes := policyCap
	if o.MaxBytes > 0 && o.MaxBytes < capBytes {
		capBytes, capName = o.MaxBytes, "max_bytes"
	}
	paging := o.Offset > 0 || o.Limit > 0
	size := f.Info.Size
	stream := f.Stream() // standard input: read forward; a pipe's size is known once read
	if !paging && size > capBytes {
		return ReadResult{}, &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Path: o.Path,
			Msg: fmt.Sprintf("%s has %d bytes, over %s = %d: %s", o.Path, size, capName, capBytes, ReadPagesAdvice)}
	}
	res := ReadResult{Path: f.Info.Path, Size: size, Mtime: rfc3339(f.Info.ModTime), Encoding: o.Encoding, Offset: o.Offset}
	if stream {
		res.Mtime = ""
	}
	limit := o.Limit
	if limit == 0 {
		limit = -1
	}
	var head []byte // the file's first bytes, for BOM and binary sniffing
	if size <= policyCap && !(stream && paging) {
		// Small (or standard input read whole): read it whole into one buffer (through a cap, in case it
		// grows meanwhile) and page it in place, without copies.
		data, err := readUpTo(src, size, satAdd(policyCap, 1))
		if err != nil {
			return ReadResult{}, fserr.AsError(err)
		}
		if stream && int64(len(data)) > capBytes {
			return ReadResult{}, &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Path: o.Path,
				Msg: fmt.Sprintf("standard input has more than %s = %d bytes: %s", capName, capBytes, ReadPagesAdvice)}
		}
		if int64(len(data)) > policyCap && !paging {
			return ReadResult{}, fserr.Errorf(fserr.CodeTooLarge, o.Path, "%s grew past %s = %d while being read", o.Path, capName, policyCap)
		}
		if stream {
			res.Size = int64(len(data))
		}
		if int64(len(data)) <= policyCap {
			// data is the whole file (readUpTo stopped at its end).
			var hexsum string
			if whole != nil {
				hexsum = hex.EncodeToString(whole.Sum(nil)) // hashed on the way in: not twice
			} else {
				sum := sha256.Sum256(data)
				hexsum = hex.EncodeToString(sum[:])
			}
			res.SHA256 = &hexsum
			res.EOL = textio.EOL(data)
		}
		head = data
		if err := res.pageInPlace(data, o, limit, int(capBytes), capName); err != nil {
			return ReadResult{}, err
		}
	} else {
		r := textio.NewReader(src, 0)
		head = append([]byte(nil), r.Peek()...)
		if err := res.page(r, o, limit, int(capBytes), capName); err != nil {
			return ReadResult{}, err
		}
		if err := r.Err(); err != nil {
			return ReadResult{}, fserr.AsError(err)
		}
		res.EOL = textio.EOL(res.Raw)
	}
	res.BOM = bytes.HasPrefix(head, textio.BOM)
	if len(head) > textio.SniffLen {
		head = head[:textio.SniffLen]
	}
	if o.Encoding != "base64" && (textio.IsBinary(head) || textio.IsBinary(res.Raw)) {
		return ReadResult{}, fserr.Errorf(fserr.CodeBinary, o.Path, "%s holds binary data (a NUL byte); read it with encoding base64", o.Path)
	}
	return res, nil
}

// fillContent sets Content from Raw as the encoding asks (nothing when
// the face prints Raw alone).
func (res *ReadResult) fillContent(o ReadOptions) error {
	content := res.Raw
	if o.RawOnly {
		return nil
	}
	if o.Encoding == "base64" {
		res.Content = base64.StdEncoding.EncodeToString(content)
		return nil
	}
	if o.Offset == 0 && res.skip == 0 && res.BOM && bytes.HasPrefix(content, textio.BOM) {
		content = content[len(textio.BOM):]
	}
	if utf8.Valid(content) {
		res.Content = string(content)
	} else {
		res.Lossy = true
		res.Content = string(bytes.ToValidUTF8(content, []byte("\uFFFD")))
	}
	return nil
}

// page skips o.Offset lines and collects up to limit lines of at most
// capBytes bytes into res.Raw.
func (res *ReadResult) page(r *textio.Reader, o ReadOptions, limit int64, capBytes int, capName string) error {
	if skipped := r.SkipLines(o.Offset); skipped < o.Offset {
		res.EOF = true
		res.Raw = []byte{}
		return nil
	}
	raw, n, cut := r.AppendLines(make([]byte, 0, min(capBytes, 64<<10)), limit, capBytes)
	res.Raw = raw
	return res.finish(o, n, cut, r.AtEOF(), capBytes, capName)
}

// finish records a page of n lines: a cap that cut it, where the next page
// starts, and too_large when not even one line fitted.
func (res *ReadResult) finish(o ReadOptions, n int64, cut, eof bool, capBytes int, capName string) error {
	res.Lines = n
	if cut && n == 0 {
		return &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Path: o.Path,
			Msg: fmt.Sprintf("line %d of %s alone is longer than %s = %d bytes", o.Offset+1, o.Path, capName, capBytes)}
	}
	res.EOF = eof
	if cut {
		res.Truncated, res.Limit = true, capName
	}
	if !res.EOF {
		next := o.Offset + n
		res.NextOffset = &next
	}
	return nil
}

// readUpTo reads at most max bytes into one buffer sized from fstat.
func readUpTo(r io.Reader, size, max int64) ([]byte, error) {
	buf := make([]byte, 0, min(satAdd(size, 1), max))
	for int64(len(buf)) < max {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):min(int64(cap(buf)), max)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// pageInPlace is page for a file held whole in data: Raw is a sub-slice.
func (res *ReadResult) pageInPlace(data []byte, o ReadOptions, limit int64, capBytes int, capName string) error {
	start := 0
	for i := int64(0); i < o.Offset; i++ {
		j := bytes.IndexByte(data[start:], '\n')
		if j < 0 {
			if start < len(data) && i == o.Offset-1 {
				start = len(data) // the last line has no newline
				break
			}
			res.EOF, res.Raw = true, []byte{}
			return nil
		}
		start += j + 1
	}
	end, n := start, int64(0)
	cut := false
	for end < len(data) && (limit < 0 || n < limit) {
		j := bytes.IndexByte(data[end:], '\n')
		next := len(data)
		if j >= 0 {
			next = end + j + 1
		}
		if next-start > capBytes {
			cut = true
			break
		}
		end, n = next, n+1
	}
	res.Raw = data[start:end]
	return res.finish(o, n, cut, end == len(data), capBytes, capName)
}

// Text is the selected bytes exactly as the file holds them (base64 text
// and a newline with that encoding), escaped by the face on a terminal.
func (r *ReadResult) Text(w spec.TextWriter) error {
	if r.Encoding == "base64" {
		w.WriteString(r.Content)
		return w.WriteByte('\n')
	}
	_, err := w.Write(w.Content(r.Raw))
	return err
}

// ReadUnchanged is read's answer when the file still hashes to
// --if-none-match: no content, whatever the file's size or type.
type ReadUnchanged struct {
	Path      string `json:"path"`
	Unchanged bool   `json:"unchanged"`
	SHA256    string `json:"sha256"`
}

// Text is nothing: the caller holds the content already (a note on
// stderr says so, see Notes), as an HTTP 304 has no body.
func (r *ReadUnchanged) Text(w spec.TextWriter) error { return nil }

// Outcome: a note for the text form's stderr, that the file is unchanged.
func (r *ReadUnchanged) Outcome() spec.Outcome {
	return spec.Outcome{Notes: []string{r.Path + " is unchanged (sha256 " + r.SHA256 + ")"}}
}

// Outcome: a page the byte budget cut, when the caller asked for no page,
// is a cut (exit 9, and the text form's note with the cursor); one the
// caller asked for exits 0 as a max_read_bytes page does, the text form
// saying where the rest is in a note. Else a whole result.
func (r *ReadResult) Outcome() spec.Outcome {
	if !r.Truncated || r.Limit != "max_result_bytes" {
		return spec.Outcome{}
	}
	if !r.paged {
		return spec.Outcome{Cut: r.outcomeCut()}
	}
	note := "the page ends at max_result_bytes"
	if r.NextCursor != "" {
		note += "; the rest: the same command with --cursor " + r.NextCursor
	}
	return spec.Outcome{Notes: []string{note}}
}
