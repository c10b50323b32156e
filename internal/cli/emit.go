package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"

	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/textio"
)

// Formats.
const (
	formatJSON   = "json"
	formatNDJSON = "ndjson"
	formatText   = "text"
)

// printer writes a command's result in the chosen format. It buffers, so a
// command that fails half way leaves stdout empty (SPEC §3).
type printer struct {
	w      io.Writer
	errw   io.Writer // for the text form's truncation note
	format string
	pretty bool
	color  bool
	tty    bool // stdout is a terminal: the text form escapes control bytes
}

// safe returns content for the text form: as is in a pipeline; on a
// terminal, control bytes that could move the cursor or start an escape
// sequence (all below 0x20 but tab, newline and a CR ending a line, and
// DEL) are shown as \xNN, so file contents cannot drive the terminal.
func (p *printer) safe(b []byte) []byte {
	if !p.tty {
		return b
	}
	return escapeControls(b, false)
}

// safeName is safe for a name or path, where a newline is escaped too.
func (p *printer) safeName(s string) string {
	if !p.tty {
		return s
	}
	return string(escapeControls([]byte(s), true))
}

func escapeControls(b []byte, name bool) []byte {
	keep := func(i int) bool {
		switch c := b[i]; {
		case c == '\t':
			return true
		case c == '\n':
			return !name
		case c == '\r':
			return !name && i+1 < len(b) && b[i+1] == '\n'
		}
		return false
	}
	var out []byte
	for i, c := range b {
		if (c < 0x20 || c == 0x7f) && !keep(i) {
			if out == nil {
				out = append(make([]byte, 0, len(b)+8), b[:i]...)
			}
			out = append(out, fmt.Sprintf("\\x%02x", c)...)
		} else if out != nil {
			out = append(out, c)
		}
	}
	if out == nil {
		return b
	}
	return out
}

// textFunc renders the text form.
type textFunc func(w *bufio.Writer) error

// emit prints one result object (json), its items one per line (ndjson,
// when items is a slice; a trailer line follows when tr says a limit cut
// the list), or the text form.
func (p *printer) emit(v any, items any, tr *ops.Truncation, text textFunc) error {
	if p.format == formatText && text != nil {
		// The result is complete before it is printed: stream it out.
		bw := bufio.NewWriterSize(p.w, 64<<10)
		if err := text(bw); err != nil {
			return err
		}
		p.trailer(bw, tr) // a note on stderr, as lines() gives
		return bw.Flush()
	}
	if p.format != formatNDJSON || items == nil {
		// One document: json.Encoder marshals all of it before its one
		// Write, so a failure leaves stdout empty without a copy of ours
		// (each fresh page of a copy costs a fault; read's 1 MiB content
		// would cost about 2 MiB more).
		return newEncoder(p.w, p.pretty && p.format == formatJSON).Encode(v)
	}
	var buf bytes.Buffer
	bw := bufio.NewWriterSize(&buf, 64<<10)
	rv := reflect.ValueOf(items)
	enc := newEncoder(bw, false)
	for i := 0; i < rv.Len(); i++ {
		if err := enc.Encode(rv.Index(i).Interface()); err != nil {
			return err
		}
	}
	p.trailer(bw, tr)
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := p.w.Write(buf.Bytes())
	return err
}

// lines runs a command whose items are lines. In json the op collects
// them and one object is printed. In ndjson and text they stream as the op
// produces them, in constant memory: a JSON string per line, or the bytes
// exactly as the file has them. A limit that cut the list is reported by a
// trailer line (ndjson) or a note on stderr (text). An error before the
// first line leaves stdout empty; one after it cannot take back what was
// already written.
func (p *printer) lines(run func(sink ops.LineSink) (any, *ops.Truncation, error)) error {
	return stream(p, run, func(bw *bufio.Writer) ops.LineSink {
		if p.format == formatText {
			return func(line []byte) error { _, err := bw.Write(p.safe(line)); return err }
		}
		enc := newEncoder(bw, false)
		return func(line []byte) error { return enc.Encode(string(textio.TrimEOL(line))) }
	})
}

// rows is lines for commands whose items are rows of fields (cut): an
// array per row in ndjson; in text, the fields joined by text's function.
func (p *printer) rows(run func(sink ops.RowSink) (any, *ops.Truncation, error), text func(w *bufio.Writer, fields [][]byte, eol []byte) error) error {
	return stream(p, run, func(bw *bufio.Writer) ops.RowSink {
		if p.format == formatText {
			return func(fields [][]byte, eol []byte) error { return text(bw, fields, eol) }
		}
		enc := newEncoder(bw, false)
		var row []string
		return func(fields [][]byte, _ []byte) error {
			row = row[:0]
			for _, f := range fields {
				row = append(row, string(f))
			}
			return enc.Encode(row)
		}
	})
}

// stream runs a list-producing op: in json the op collects (its sink is
// nil) and one object is printed; in ndjson and text the sink sinkFor
// makes writes each item as it comes, and a trailer reports a cut.
func stream[S any](p *printer, run func(S) (any, *ops.Truncation, error), sinkFor func(*bufio.Writer) S) error {
	if p.format != formatNDJSON && p.format != formatText {
		var collect S
		v, _, err := run(collect)
		if err != nil {
			return err
		}
		return p.emit(v, nil, nil, nil)
	}
	bw := bufio.NewWriterSize(p.w, 64<<10)
	_, tr, err := run(sinkFor(bw))
	if err != nil {
		return err
	}
	p.trailer(bw, tr)
	return bw.Flush()
}

// paths is lines for commands whose items are paths (find, grep -l): a
// JSON string per path in ndjson, one path a line in text.
func (p *printer) paths(run func(sink func(string) error) (any, *ops.Truncation, error)) error {
	return p.lines(func(sink ops.LineSink) (any, *ops.Truncation, error) {
		if sink == nil {
			return run(nil)
		}
		var buf []byte
		return run(func(s string) error {
			if p.format == formatText {
				s = p.safeName(s)
			}
			buf = append(append(buf[:0], s...), '\n')
			return sink(buf)
		})
	})
}

// trailer reports a truncated list after its items.
func (p *printer) trailer(bw *bufio.Writer, tr *ops.Truncation) {
	if tr == nil || !tr.Truncated {
		return
	}
	if p.format == formatText {
		bw.Flush()
		what := tr.Limit + " limit"
		if tr.Limit == "limit" {
			what = "--limit"
		}
		fmt.Fprintf(p.errw, "fsbox: truncated: the %s cut the output\n", what)
		return
	}
	newEncoder(bw, false).Encode(tr)
}

func newEncoder(w io.Writer, pretty bool) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if pretty {
		enc.SetIndent("", "  ")
	}
	return enc
}

// errorEnvelope is the one line stderr gets on failure.
type errorEnvelope struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Code    sandbox.Code `json:"code"`
	Message string       `json:"message"`
	Path    string       `json:"path,omitempty"`
	Rule    sandbox.Rule `json:"rule,omitempty"`
}

// printError writes err to w in the chosen format and returns the exit code.
func printError(w io.Writer, format string, err error) int {
	e := sandbox.AsError(err)
	if e.Code == sandbox.CodeNoMatch {
		return sandbox.ExitCode(e.Code) // grep's result is already on stdout
	}
	if format == formatText {
		fmt.Fprintf(w, "fsbox: %s: %s\n", e.Code, oneLine(e.Msg))
	} else {
		newEncoder(w, false).Encode(errorEnvelope{errorBody{Code: e.Code, Message: e.Msg, Path: e.Path, Rule: e.Rule}})
	}
	return sandbox.ExitCode(e.Code)
}

// oneLine keeps a message on one line in the text form.
func oneLine(s string) string {
	return string(bytes.ReplaceAll([]byte(s), []byte("\n"), []byte(`\n`)))
}
