// grep's output: the sink each face prints through, JSON and the text form.

package ops

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// GrepNamesOneFile reports whether paths name exactly one file (not a
// directory), in which case the text form leaves the path out, as grep does.
func GrepNamesOneFile(sb *sandbox.Sandbox, paths []string) bool {
	if len(paths) != 1 {
		return false
	}
	if paths[0] == sandbox.StdinPath {
		return true
	}
	info, err := sb.Named(paths[0])
	return err == nil && info.Type == "file"
}

// grepSink sends each searched file's findings: as items (its count,
// its path, or its matches, by the mode chosen once), or as grep's text
// form; nil without a sink.
func grepSink(s *spec.Sink, sb *sandbox.Sandbox, in *spec.Input, o GrepOptions) func(*FileResult) error {
	switch {
	case s == nil:
		return nil
	case s.Text != nil:
		return grepTextSink(s.Text, sb, in, o)
	}
	item := s.Item
	switch {
	case o.Count:
		return func(fr *FileResult) error { return item(FileCount{Path: fr.Path, Count: fr.Count}) }
	case o.FilesWithMatches:
		return func(fr *FileResult) error { return item(fr.Path) }
	}
	return func(fr *FileResult) error {
		for i := range fr.Matches {
			var v any = &fr.Matches[i]
			if fr.Matches[i].Binary {
				v = binaryMatch(fr.Matches[i])
			}
			if err := item(v); err != nil {
				return err
			}
		}
		return nil
	}
}

// grepTextSink writes each searched file's findings as grep's text form.
func grepTextSink(w spec.TextWriter, sb *sandbox.Sandbox, in *spec.Input, o GrepOptions) func(*FileResult) error {
	// Lines name their file unless one file is searched, as grep does;
	// -h and -H say otherwise.
	withPath := !GrepNamesOneFile(sb, o.Paths)
	switch {
	case in.Bool("no-filename"):
		withPath = false
	case in.Bool("with-filename"):
		withPath = true
	}
	t := &grepText{w: w, numbered: in.Bool("numbered"), context: (o.Before > 0 || o.After > 0) && !o.OnlyMatching,
		withPath: withPath, maxColumns: int(in.Int("max-columns")), painted: w.Paint("", spec.PaintMatch) != "", null: in.Bool("null")}
	switch {
	case o.Count:
		return func(fr *FileResult) error {
			t.prefix(fr.Path, 0, ':')
			w.WriteString(strconv.FormatInt(fr.Count, 10))
			return w.WriteByte('\n')
		}
	case o.FilesWithMatches:
		return func(fr *FileResult) error {
			w.WriteString(w.Paint(t.name(fr.Path), spec.PaintPath))
			return w.WriteByte(t.after('\n'))
		}
	}
	return t.file
}

// Outcome: a limit's cut, the paths that failed, what the text form says
// on stderr after the output (that a binary file matches, as GNU grep
// says it, and that a stream's lines over textio.MaxLine were given
// cut), no match (grep exits 1 on the command line when nothing
// matched), and -q's silence.
func (r GrepResult) Outcome() spec.Outcome {
	return spec.Outcome{Cut: r.Truncation.outcomeCut(), Failures: r.PathErrors.failures(), Notes: r.notes, NoMatch: r.Count == 0, Quiet: r.quiet}
}

// binaryMatch is a binary file's match in JSON: where, not what.
type binaryMatch Match

func (m binaryMatch) MarshalJSON() ([]byte, error) {
	return marshalJSON(struct {
		Path   string `json:"path"`
		Line   int64  `json:"line"`
		Binary bool   `json:"binary"`
	}{m.Path, m.Line, true})
}

// MarshalJSON gives a binary file's matches without column and text; a
// result without any is marshalled as it is. Neither escapes HTML, as
// every fsbox JSON does not.
func (r GrepResult) MarshalJSON() ([]byte, error) {
	type plain GrepResult
	if !r.binary || r.Matches == nil {
		return marshalJSON(plain(r))
	}
	ms := make([]any, len(*r.Matches))
	for i := range *r.Matches {
		ms[i] = &(*r.Matches)[i]
		if (*r.Matches)[i].Binary {
			ms[i] = binaryMatch((*r.Matches)[i])
		}
	}
	// Pattern and matches first, as plain has them; the rest in order.
	return marshalJSON(struct {
		Pattern string `json:"pattern"`
		Matches []any  `json:"matches"`
		plain
	}{r.Pattern, ms, plain(r)})
}

// marshalJSON is json.Marshal without HTML escapes.
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// grepText is grep's text form, as grep and ripgrep print matches in a
// pipeline: path:line:text (the path and number as asked), context lines
// with '-', groups split by "--".
type grepText struct {
	w        spec.TextWriter
	numbered bool
	context  bool
	withPath bool
	last     int64 // last line printed in the current file, for "--"
	printed  bool
	// maxColumns > 0: a line longer prints as a note (rg --max-columns).
	maxColumns int
	painted    bool // the writer colours: a match is written apart
	null       bool // -0: a NUL follows each file name, in place of its separator
}

// after is the byte that follows a file name in place of sep.
func (t *grepText) after(sep byte) byte {
	if t.null {
		return 0
	}
	return sep
}

// name is how the text form names a file: standard input is "<stdin>",
// as rg names it.
func (t *grepText) name(path string) string {
	if path == sandbox.StdinPath {
		return "<stdin>"
	}
	return t.w.Name(path)
}

func (t *grepText) prefix(path string, line int64, sep byte) {
	if t.withPath {
		t.w.WriteString(t.w.Paint(t.name(path), spec.PaintPath))
		t.w.WriteByte(t.after(sep))
	}
	if line > 0 && t.numbered {
		t.w.WriteString(t.w.Paint(strconv.FormatInt(line, 10), spec.PaintLine))
		t.w.WriteByte(sep)
	}
}

func (t *grepText) file(fr *FileResult) error {
	t.last = 0
	for _, m := range fr.Matches {
		if m.Binary {
			break // grep's note says it on stderr (Notes)
		}
		first := m.Line
		if len(m.BeforeRaw) > 0 {
			first = m.BeforeRaw[0].Line
		}
		if t.context && t.printed && (t.last == 0 || first > t.last+1) {
			t.w.WriteString("--\n")
		}
		for _, b := range m.BeforeRaw {
			t.prefix(m.Path, b.Line, '-')
			t.w.Write(t.w.Content(b.Raw))
			t.w.WriteByte('\n')
		}
		t.prefix(m.Path, m.Line, ':')
		t.highlight(m)
		t.w.WriteByte('\n')
		t.last = m.Line
		for _, a := range m.AfterRaw {
			t.prefix(m.Path, a.Line, '-')
			t.w.Write(t.w.Content(a.Raw))
			t.w.WriteByte('\n')
			t.last = a.Line
		}
		t.printed = true
	}
	return nil
}

// highlight writes the line with its first match (the column grep found)
// painted.
func (t *grepText) highlight(m Match) {
	switch {
	case t.maxColumns > 0 && len(m.Raw) > t.maxColumns:
		t.w.WriteString("[Omitted long line with " + strconv.Itoa(len(m.Raw)) + " bytes]")
	case m.Only:
		t.w.WriteString(t.w.Paint(string(t.w.Content(m.Raw)), spec.PaintMatch))
	case m.Column == 0 || !t.painted || m.Column-1+m.MatchLen > len(m.Raw):
		t.w.Write(t.w.Content(m.Raw))
	default:
		a, b := m.Column-1, m.Column-1+m.MatchLen
		t.w.Write(t.w.Content(m.Raw[:a]))
		t.w.WriteString(t.w.Paint(string(t.w.Content(m.Raw[a:b])), spec.PaintMatch))
		t.w.Write(t.w.Content(m.Raw[b:]))
	}
}
