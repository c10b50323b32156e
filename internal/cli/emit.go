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
	format string
	pretty bool
	color  bool
}

// textFunc renders the text form.
type textFunc func(w *bufio.Writer) error

// emit prints one result object (json), its items one per line (ndjson,
// when items is a slice; a trailer line follows when tr says a limit cut
// the list), or the text form.
func (p *printer) emit(v any, items any, tr *ops.Truncation, text textFunc) error {
	var buf bytes.Buffer
	bw := bufio.NewWriterSize(&buf, 64<<10)
	switch {
	case p.format == formatText && text != nil:
		if err := text(bw); err != nil {
			return err
		}
	case p.format == formatNDJSON && items != nil:
		rv := reflect.ValueOf(items)
		enc := newEncoder(bw, false)
		for i := 0; i < rv.Len(); i++ {
			if err := enc.Encode(rv.Index(i).Interface()); err != nil {
				return err
			}
		}
		if tr != nil && tr.Truncated {
			if err := enc.Encode(tr); err != nil {
				return err
			}
		}
	default:
		if err := newEncoder(bw, p.pretty && p.format == formatJSON).Encode(v); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := p.w.Write(buf.Bytes())
	return err
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
