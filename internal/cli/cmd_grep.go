package cli

import (
	"bufio"
	"strconv"

	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

func init() { runners["grep"] = runGrep }

func runGrep(x *call) error {
	o, err := ops.GrepInput(x.sb, x.in)
	if err != nil {
		return err
	}
	o.Exact = x.out.exact()
	if x.in.Bool("no-filename") && x.in.Bool("with-filename") {
		return usageErr("-h (--no-filename) and -H (--with-filename) do not go together")
	}
	if x.in.Bool("quiet") {
		// -q: nothing printed; the first match ends the search.
		o.Limit, o.Count, o.FilesWithMatches, o.OnlyMatching = 1, false, true, false
		res, err := ops.Grep(x.cx, x.sb, o)
		if err != nil {
			return err
		}
		if res.Count == 0 {
			return &sandbox.Error{Code: sandbox.CodeNoMatch, Msg: "no match"}
		}
		return nil
	}
	p := x.out
	var res ops.GrepResult
	if p.format == formatJSON {
		res, err = ops.Grep(x.cx, x.sb, o)
		if err != nil {
			return err
		}
		if err := p.emit(res, nil, nil, nil); err != nil {
			return err
		}
	} else {
		out, done := p.jsonOut() // C1 controls in ndjson escaped on a terminal
		defer done()
		bw := bufio.NewWriterSize(out, 64<<10)
		withPath := !ops.GrepNamesOneFile(x.sb, o.Paths)
		switch {
		case x.in.Bool("no-filename"):
			withPath = false
		case x.in.Bool("with-filename"):
			withPath = true
		}
		tp := &grepText{w: bw, color: p.color, safe: p.safe, safeName: p.safeName, numbered: x.in.Bool("numbered"), context: (o.Before > 0 || o.After > 0) && !o.OnlyMatching,
			withPath: withPath, maxColumns: int(x.in.Int("max-columns"))}
		enc := p.itemEncoder(bw)
		o.Sink = func(fr *ops.FileResult) error {
			switch {
			case p.format == formatNDJSON && o.Count:
				return enc.Encode(ops.FileCount{Path: fr.Path, Count: fr.Count})
			case p.format == formatNDJSON && o.FilesWithMatches:
				return enc.Encode(fr.Path)
			case p.format == formatNDJSON:
				for i := range fr.Matches {
					if err := enc.Encode(&fr.Matches[i]); err != nil {
						return err
					}
				}
				return nil
			case o.Count:
				tp.prefix(fr.Path, 0, ':')
				bw.WriteString(strconv.FormatInt(fr.Count, 10))
				return bw.WriteByte('\n')
			case o.FilesWithMatches:
				bw.WriteString(tp.paint(tp.textName(fr.Path), colorPath))
				return bw.WriteByte('\n')
			}
			tp.file(fr)
			return nil
		}
		res, err = ops.Grep(x.cx, x.sb, o)
		if err != nil {
			return err
		}
		p.trailer(bw, &res, &res.Truncation)
		if err := bw.Flush(); err != nil {
			return err
		}
	}
	if res.Count == 0 {
		return &sandbox.Error{Code: sandbox.CodeNoMatch, Msg: "no match"}
	}
	return nil
}

const (
	colorPath  = "\x1b[35m"
	colorLine  = "\x1b[32m"
	colorMatch = "\x1b[1;31m"
	colorReset = "\x1b[0m"
)

// grepText prints matches the way grep and ripgrep do in a pipeline.
type grepText struct {
	w        *bufio.Writer
	safe     func([]byte) []byte
	safeName func(string) string
	color    bool
	numbered bool
	context  bool
	withPath bool
	last     int64 // last line printed in the current file, for "--"
	printed  bool
	// maxColumns > 0: a line longer prints as a note (rg --max-columns).
	maxColumns int
}

func (t *grepText) paint(s, color string) string {
	if !t.color {
		return s
	}
	return color + s + colorReset
}

// textName is how the text form names a file: standard input is
// "<stdin>", as rg names it.
func (t *grepText) textName(path string) string {
	if path == sandbox.StdinPath {
		return "<stdin>"
	}
	return t.safeName(path)
}

func (t *grepText) prefix(path string, line int64, sep byte) {
	if t.withPath {
		t.w.WriteString(t.paint(t.textName(path), colorPath))
		t.w.WriteByte(sep)
	}
	if line > 0 && t.numbered {
		t.w.WriteString(t.paint(strconv.FormatInt(line, 10), colorLine))
		t.w.WriteByte(sep)
	}
}

func (t *grepText) file(fr *ops.FileResult) {
	t.last = 0
	for _, m := range fr.Matches {
		first := m.Line
		if len(m.BeforeRaw) > 0 {
			first = m.BeforeRaw[0].Line
		}
		if t.context && t.printed && (t.last == 0 || first > t.last+1) {
			t.w.WriteString("--\n")
		}
		for _, b := range m.BeforeRaw {
			t.prefix(m.Path, b.Line, '-')
			t.w.Write(t.safe(b.Raw))
			t.w.WriteByte('\n')
		}
		t.prefix(m.Path, m.Line, ':')
		t.w.Write(t.highlight(m))
		t.w.WriteByte('\n')
		t.last = m.Line
		for _, a := range m.AfterRaw {
			t.prefix(m.Path, a.Line, '-')
			t.w.Write(t.safe(a.Raw))
			t.w.WriteByte('\n')
			t.last = a.Line
		}
		t.printed = true
	}
}

// highlight colors the first match in the line (the column ops found).
func (t *grepText) highlight(m ops.Match) []byte {
	if t.maxColumns > 0 && len(m.Raw) > t.maxColumns {
		return []byte("[Omitted long line with " + strconv.Itoa(len(m.Raw)) + " bytes]")
	}
	if m.Only {
		return []byte(t.paint(string(t.safe(m.Raw)), colorMatch))
	}
	if !t.color || m.Column == 0 {
		return t.safe(m.Raw)
	}
	a, b := m.Column-1, m.Column-1+m.MatchLen
	return []byte(string(t.safe(m.Raw[:a])) + colorMatch + string(t.safe(m.Raw[a:b])) + colorReset + string(t.safe(m.Raw[b:])))
}
