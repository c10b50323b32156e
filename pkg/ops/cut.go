package ops

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
	"github.com/fsbox/fsbox/pkg/textio"
)

var cutOp = &spec.Op{
	Name: "cut", Class: spec.Read, Result: CutResult{},
	Streams: true,
	Pages:   true,
	Summary: "select fields from each line",
	Help:    "Keeps the listed fields of each line, split at a delimiter (a tab unless told), at an RE2 pattern with regex, or as RFC 4180 CSV records with csv.",
	Args:    []spec.Arg{stdinArg("the file to cut")},
	Options: []spec.Option{
		{Name: "fields", Short: "f", Type: spec.String, Meta: "LIST", ToolRequired: true, Help: "fields to keep, 1-based: 1,3 or 2-4 or 3- (required)"},
		{Name: "delimiter", Short: "d", Type: spec.String, Meta: "DELIM", DefaultText: "tab; comma with csv", Help: "field delimiter"},
		{Name: "regex", Type: spec.Bool, Help: "the delimiter is an RE2 regular expression"},
		{Name: "csv", Type: spec.Bool, Help: "parse RFC 4180 CSV (quoted fields, embedded delimiters and newlines)"},
		{Name: "only-delimited", Short: "s", Type: spec.Bool, Help: "drop lines without the delimiter"},
		{Name: "output-delimiter", Type: spec.String, Meta: "DELIM", CLIOnly: true, DefaultText: "the delimiter; tab with regex", Help: "join the fields of the text form with DELIM"},
	},
	Examples: []spec.Example{{Cmd: "cut --csv -f 1 data.csv --format text", Says: "the first column of a CSV file"}},
	Text:     "the fields joined by the delimiter (or --output-delimiter), as cut; CSV re-quoted with --csv",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		o, err := CutInput(in)
		if err != nil {
			return nil, err
		}
		o.Exact = in.Exact
		o.Sink = rowSink(in.Sink, in, o)
		if o.Paging, err = pagingOf(sb, in); err != nil {
			return nil, err
		}
		return Cut(ctx, sb, o)
	},
}

// CutInput turns a cut input into options.
func CutInput(in *spec.Input) (CutOptions, error) {
	o := CutOptions{Path: in.String("path"), Fields: in.String("fields"), Delimiter: in.String("delimiter"),
		Regex: in.Bool("regex"), CSV: in.Bool("csv"), OnlyDelimited: in.Bool("only-delimited")}
	if !in.IsSet("fields") {
		return o, fserr.Errorf(fserr.CodeUsage, "", "cut needs fields").WithHint(fserr.Hint{Option: "fields", Short: true, Text: "(%s LIST), such as 1,3 or 2-"})
	}
	if in.IsSet("delimiter") && o.Delimiter == "" {
		return o, usageErr("delimiter must not be empty")
	}
	return o, nil
}

// FieldList is a parsed cut field list: 1-based fields in ascending order,
// as GNU cut prints them whatever order the list names them in. It holds
// ranges, so no list costs memory by the size of its numbers: "1-" and
// "1234567890-" are as cheap as "1".
type FieldList struct {
	ranges []fieldRange // sorted, merged; hi == math.MaxInt for an open range
	small  uint64       // bit i: field i (1 to 63) selected, for Has's common case
}

type fieldRange struct{ lo, hi int }

// ParseFieldList parses "1,3", "2-4", "3-", "-2" and their combinations.
// A number too large for an int is usage, as GNU cut 9.1 has it ("field
// number is too large").
func ParseFieldList(s string) (FieldList, error) {
	var fl FieldList
	if s == "" {
		return fl, usagef("", "empty field list")
	}
	num := func(t string) (int, error) {
		if t == "" || strings.Trim(t, "0123456789") != "" {
			return 0, usagef("", "invalid field %q in list %q: fields are numbered from 1", t, s)
		}
		n, err := strconv.Atoi(t)
		if err != nil {
			return 0, usagef("", "field number %q in list %q is too large", t, s)
		}
		if n < 1 {
			return 0, usagef("", "invalid field %q in list %q: fields are numbered from 1", t, s)
		}
		return n, nil
	}
	var rs []fieldRange
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		switch {
		case !isRange:
			n, err := num(part)
			if err != nil {
				return fl, err
			}
			rs = append(rs, fieldRange{n, n})
		case lo == "" && hi == "":
			return fl, usagef("", "invalid range %q in list %q", part, s)
		case hi == "":
			n, err := num(lo)
			if err != nil {
				return fl, err
			}
			rs = append(rs, fieldRange{n, math.MaxInt})
		default:
			a := 1
			if lo != "" {
				var err error
				if a, err = num(lo); err != nil {
					return fl, err
				}
			}
			b, err := num(hi)
			if err != nil {
				return fl, err
			}
			if b < a {
				return fl, usagef("", "invalid decreasing range %q in list %q", part, s)
			}
			rs = append(rs, fieldRange{a, b})
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].lo < rs[j].lo })
	for _, r := range rs {
		if n := len(fl.ranges); n > 0 && r.lo <= fl.ranges[n-1].hi+1 && fl.ranges[n-1].hi != math.MaxInt {
			fl.ranges[n-1].hi = max(fl.ranges[n-1].hi, r.hi)
			continue
		} else if n > 0 && fl.ranges[n-1].hi == math.MaxInt {
			continue // an open range already takes everything after it
		}
		fl.ranges = append(fl.ranges, r)
	}
	for i := 1; i < 64; i++ {
		if fl.scan(i) {
			fl.small |= 1 << i
		}
	}
	return fl, nil
}

// last is the highest selected field (math.MaxInt with an open range).
func (fl FieldList) last() int {
	if len(fl.ranges) == 0 {
		return 0
	}
	return fl.ranges[len(fl.ranges)-1].hi
}

// Has reports whether 1-based field i is selected.
func (fl FieldList) Has(i int) bool {
	if i > 0 && i < 64 {
		return fl.small&(1<<i) != 0
	}
	return fl.scan(i)
}

func (fl FieldList) scan(i int) bool {
	for _, r := range fl.ranges {
		if i < r.lo {
			return false
		}
		if i <= r.hi {
			return true
		}
	}
	return false
}

// RowSink receives each row's selected fields and the line's terminator;
// both are valid only during the call.
type RowSink func(fields [][]byte, eol []byte) error

// CutOptions are cut's inputs.
type CutOptions struct {
	Path          string
	Fields        string // the LIST
	Delimiter     string // default tab (comma with CSV)
	Regex         bool   // Delimiter is an RE2 pattern
	CSV           bool   // RFC 4180 records
	OnlyDelimited bool   // -s: drop lines without the delimiter
	Sink          RowSink
	Exact         bool // fields go out whole (the text form), not cut at max_line_bytes
	// Paging: a page gives the rows after the first From.N (its position
	// is the number of rows given so far).
	Paging
}

// CutResult holds the selected fields of each row.
type CutResult struct {
	Path  string     `json:"path"`
	Rows  [][]string `json:"rows" fsbox:"items"`
	Count int64      `json:"count"` // the rows on this page
	Truncation
}

// jsonFieldsLen is the JSON length of a row as an item holds it (an
// array of its fields' text).
func jsonFieldsLen(fields [][]byte) int64 { return jsonListLen(fields, jsonBytesLen) }

// Cut selects fields from each line, streaming. A line without the
// delimiter is one field and is kept whole (GNU cut), unless OnlyDelimited.
func Cut(ctx context.Context, sb *sandbox.Sandbox, o CutOptions) (CutResult, error) {
	if err := begin(ctx, sb, "cut"); err != nil {
		return CutResult{}, err
	}
	fl, err := ParseFieldList(o.Fields)
	if err != nil {
		return CutResult{}, err
	}
	if o.Regex && o.CSV {
		return CutResult{}, usagef(o.Path, "regex and csv do not go together")
	}
	delim := o.Delimiter
	if delim == "" {
		delim = "\t"
		if o.CSV {
			delim = ","
		}
	}
	var re *regexp.Regexp
	if o.Regex {
		if re, err = regexp.Compile(delim); err != nil {
			return CutResult{}, usagef(o.Path, "invalid regex delimiter %q: %v", delim, err)
		}
	}
	if o.CSV && (len([]rune(delim)) != 1 || delim == "\"" || delim == "\r" || delim == "\n") {
		return CutResult{}, usagef(o.Path, "csv needs a one-character delimiter other than a quote or newline, got %q", delim)
	}
	f, err := openInput(sb, o.Path)
	if err != nil {
		return CutResult{}, err
	}
	defer f.Close()
	res := CutResult{Path: f.Info.Path}
	sink := o.Sink
	if sink == nil {
		res.Rows = [][]string{}
		sink = func(fields [][]byte, _ []byte) error {
			row := make([]string, len(fields))
			for i, fd := range fields {
				row[i] = jsonText(fd)
			}
			res.Rows = append(res.Rows, row)
			return nil
		}
	}
	pg := newPager(sb, 0)
	cut := lineCut(sb, o.Exact)
	// In the text form a row counts at most its line's bytes and 3 more
	// (its fields and a byte between each are within the line, which
	// has at least one byte), so a file of S bytes gives at most 4S+3:
	// when that cannot reach the budget no row needs measuring, and the
	// item cap alone can cut. A stream's size is not known, and a regex
	// may split at no byte at all: their rows are measured.
	measure := f.Stream() || re != nil || f.Info.Size > (pg.budget-4)/4

	// A page after a cursor re-reads the file and drops the first From.N
	// rows: a row count is all the cursor holds (no offset to trust or
	// check, and -s or a CSV record makes rows and lines differ), so the
	// page is exactly the suffix of the rows as the file reads now.
	var skip, from0 int64
	if o.From != nil {
		skip, from0 = o.From.N, o.From.N
	}
	emit := func(fields [][]byte, eol []byte) (bool, error) {
		if skip > 0 {
			skip-- // given on an earlier page
			return true, nil
		}
		var size int64
		cutRow := false
		if cut > 0 {
			for i, fd := range fields {
				if len(fd) > cut {
					fields[i], cutRow = cutText(fd, cut), true
				}
			}
			size = jsonFieldsLen(fields)
		} else if measure {
			// The text form: the cheap measure of the line (its fields
			// and a byte between each), which reads none of its bytes.
			size = int64(len(fields)) + 2
			for _, fd := range fields {
				size += int64(len(fd))
			}
		}
		if lim := pg.admit(size); lim != "" {
			res.cut(lim, o.next(Cursor{N: from0 + res.Count}))
			return false, nil
		}
		res.Count++
		if cutRow {
			res.TextTruncated = true
			res.CutLines++
		}
		return true, sink(fields, eol)
	}
	if o.CSV {
		return res, cutCSV(f, o.Path, fl, []rune(delim)[0], o.OnlyDelimited, emit)
	}
	// A line is split whole, so one over textio.MaxLine is too_large in
	// every form.
	r := textio.NewReader(textio.WithContext(ctx, f), 0)
	var sel [][]byte
	sep := []byte(delim)
	for lineNo := int64(1); ; lineNo++ {
		line, n, err := r.ReadLineMax(textio.MaxLine)
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil {
			return CutResult{}, fserr.AsError(err)
		}
		if n > int64(len(line)) {
			return CutResult{}, tooLongLine(o.Path, lineNo, n)
		}
		body := textio.TrimEOL(line)
		eol := line[len(body):]
		sel = sel[:0]
		var parts [][]byte
		if re != nil {
			idx := re.FindAllIndex(body, -1)
			if len(idx) == 0 {
				parts = nil
			} else {
				prev := 0
				for _, m := range idx {
					parts = append(parts, body[prev:m[0]])
					prev = m[1]
				}
				parts = append(parts, body[prev:])
			}
		}
		switch {
		case re != nil && parts == nil, re == nil && !bytes.Contains(body, sep):
			if o.OnlyDelimited {
				continue
			}
			sel = append(sel, body)
		case re != nil:
			for i, p := range parts {
				if fl.Has(i + 1) {
					sel = append(sel, p)
				}
			}
		default:
			rest := body
			for i := 1; ; i++ {
				j := bytes.Index(rest, sep)
				if j < 0 {
					if fl.Has(i) {
						sel = append(sel, rest)
					}
					break
				}
				if fl.Has(i) {
					sel = append(sel, rest[:j])
				}
				rest = rest[j+len(sep):]
				if i >= fl.last() {
					break
				}
			}
		}
		more, err := emit(sel, eol)
		if err != nil {
			return CutResult{}, err
		}
		if !more {
			return res, nil
		}
	}
}

func cutCSV(r io.Reader, path string, fl FieldList, comma rune, onlyDelimited bool, emit func([][]byte, []byte) (bool, error)) error {
	// encoding/csv holds a whole record, and an open quote runs to the end
	// of the file: the reader under it fails once one record passes
	// textio.MaxLine.
	rc := &recordCap{r: r}
	cr := csv.NewReader(rc)
	cr.Comma = comma
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = true
	var sel [][]byte
	for n := int64(1); ; n++ {
		rec, err := cr.Read()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, errLongRecord):
			return tooLongLine(path, n, rc.n-rc.start)
		case err != nil:
			return fserr.Errorf(fserr.CodeIO, path, "CSV: %v", err)
		}
		rc.start = cr.InputOffset()
		if onlyDelimited && len(rec) < 2 {
			continue // -s: a record of one field has no delimiter
		}
		sel = sel[:0]
		for i, v := range rec {
			if fl.Has(i + 1) {
				sel = append(sel, []byte(v))
			}
		}
		more, err := emit(sel, []byte("\n"))
		if err != nil || !more {
			return err
		}
	}
}

var errLongRecord = errors.New("a CSV record over textio.MaxLine")

// recordCap is the reader under encoding/csv: it fails once the bytes read
// since the current record started pass textio.MaxLine (plus what csv's
// buffer reads ahead).
type recordCap struct {
	r        io.Reader
	n, start int64 // bytes read; where the current record starts
}

func (c *recordCap) Read(p []byte) (int, error) {
	if c.n-c.start > textio.MaxLine {
		return 0, errLongRecord
	}
	m, err := c.r.Read(p)
	c.n += int64(m)
	return m, err
}

// cutRowsText is cut's text form as a row sink writing to w: the fields
// joined by the output delimiter (the delimiter by default; a tab with a
// regex delimiter, a comma with CSV; an empty one is a NUL, as GNU cut
// has it), each row ended as its line was; CSV rows re-quoted.
func cutRowsText(in *spec.Input, o CutOptions, w io.Writer) RowSink {
	out := o.Delimiter
	switch {
	case in.IsSet("output-delimiter"):
		out = in.String("output-delimiter")
		if out == "" {
			out = "\x00"
		}
	case o.Regex || out == "":
		out = "\t"
		if o.CSV {
			out = ","
		}
	}
	if o.CSV && !in.IsSet("output-delimiter") {
		cw := csv.NewWriter(w)
		if len(out) == 1 {
			cw.Comma = rune(out[0])
		}
		var rec []string
		return func(fields [][]byte, _ []byte) error {
			rec = rec[:0]
			for _, f := range fields {
				rec = append(rec, string(f))
			}
			cw.Write(rec)
			cw.Flush()
			return cw.Error()
		}
	}
	sep := []byte(out)
	return func(fields [][]byte, eol []byte) error {
		for i, f := range fields {
			if i > 0 {
				w.Write(sep)
			}
			w.Write(f)
		}
		if len(eol) == 0 {
			eol = []byte("\n")
		}
		_, err := w.Write(eol)
		return err
	}
}

// rowSink sends each row as its fields (an item, a JSON array of
// strings), or as cut's text form.
func rowSink(s *spec.Sink, in *spec.Input, o CutOptions) RowSink {
	switch {
	case s == nil:
		return nil
	case s.Text != nil:
		return cutRowsText(in, o, s.Text)
	}
	item := s.Item
	row := []string{} // an empty row is [], as collected
	return func(fields [][]byte, _ []byte) error {
		row = row[:0]
		for _, f := range fields {
			row = append(row, jsonText(f))
		}
		return item(row)
	}
}
