package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/ops"
)

// Formats.
const (
	formatJSON   = "json"
	formatNDJSON = "ndjson"
	formatText   = "text"
)

// output is where one call prints, and how: its format and the rest of
// what the global flags and the terminal say. The call's Printer (picked
// once, from the format) writes through it.
type output struct {
	w        io.Writer
	errw     io.Writer // for the text form's truncation note
	format   string
	pretty   bool
	color    bool
	tty      bool   // stdout is a terminal: the text form escapes control bytes
	shape    *shape // --fields, --jq: nil for the output as it is
	lsColors string // LS_COLORS
	// cx is the call's context, whose deadline --jq runs under (nil: no
	// deadline); change says the call may have changed something, so a
	// --jq out of time prints the result unshaped rather than nothing.
	cx     context.Context
	change bool
	// live: stdout's reader reads as fsbox writes (a pipe, a socket, a
	// terminal): a streaming command's output is passed on whenever its
	// search waits (spec.Sink.Idle), not only when 64 KiB are held.
	live bool
	// limitValue says the value of a limit that cut a list, for the text
	// form's note ("" when it cannot tell): the policy's, the call's
	// --limit, the deadline.
	limitValue func(limit string) string
}

// typeColors are the colours of entry types for ls and find.
func (p *output) typeColors() typeColors { return newTypeColors(p.lsColors) }

// exact reports whether lines go out whole: the text form prints them as
// the file has them; JSON and NDJSON cut them at max_line_bytes.
func (p *output) exact() bool { return p.format == formatText }

// safe returns content for the text form: as is in a pipeline; on a
// terminal, escaped by escapeControls' rule for content. (Every text
// printer's stdout already passes through a ttyWriter, which applies the
// same rule: safe is for output written around it, such as grep's.)
func (p *output) safe(b []byte) []byte {
	if !p.tty {
		return b
	}
	return escapeControls(b, false)
}

// safeName is safe for a name, path or other one-line field, where a
// newline (and a CR before it) is escaped too, so a name cannot forge
// another line of output.
func (p *output) safeName(s string) string {
	if !p.tty {
		return s
	}
	return string(escapeControls([]byte(s), true))
}

// escapeControls shows as \xNN, byte by byte, whatever a terminal could
// take for a control: C0 control bytes (all below 0x20 but tab, newline and
// a CR ending a line; for a name, newline and CR always) and DEL, C1
// controls (U+0080 to U+009F, which some terminals obey as ESC-sequences:
// U+009B is CSI) and bytes that are not valid UTF-8 (a lone 0x9B is CSI to
// a terminal in an 8-bit mode). Valid UTF-8 text, tabs and line ends are
// kept. It allocates only when something is escaped, and its output is
// plain ASCII where it escaped, so escaping twice changes nothing.
func escapeControls(b []byte, name bool) []byte {
	var out []byte
	start := func(i int) {
		if out == nil {
			out = append(make([]byte, 0, len(b)+16), b[:i]...)
		}
	}
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 || c == 0x7f) && !keepControl(b, i, name) {
				start(i)
				out = appendHex(out, c)
			} else if out != nil {
				out = append(out, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if (r == utf8.RuneError && size == 1) || (r >= 0x80 && r <= 0x9f) {
			start(i)
			for _, x := range b[i : i+size] {
				out = appendHex(out, x)
			}
		} else if out != nil {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	if out == nil {
		return b
	}
	return out
}

// keepControl says whether control byte b[i] is layout the text form
// keeps: a tab; in content, a newline and a CR that ends a line.
func keepControl(b []byte, i int, name bool) bool {
	switch b[i] {
	case '\t':
		return true
	case '\n':
		return !name
	case '\r':
		return !name && i+1 < len(b) && b[i+1] == '\n'
	}
	return false
}

func appendHex(dst []byte, c byte) []byte {
	const hex = "0123456789abcdef"
	return append(dst, '\\', 'x', hex[c>>4], hex[c&0xf])
}

// ttyWriter is the one writer every text printer's stdout passes through
// on a terminal: it applies escapeControls' content rule to whatever is
// written, however the bytes are split between writes (a CR or the start
// of a UTF-8 sequence at the end of one write waits for the next, to see
// what follows). Names get the stricter rule from safeName as well, for
// their newlines; everything else (numbers, types, modes, link targets,
// reasons, fields) is covered here without a call per field. close
// writes what is held.
type ttyWriter struct {
	w    io.Writer
	held []byte // a lone trailing CR, or the first 1 to 3 bytes of a UTF-8 sequence
	buf  []byte
}

func (t *ttyWriter) Write(p []byte) (int, error) {
	data := p
	if len(t.held) > 0 {
		t.buf = append(append(t.buf[:0], t.held...), p...)
		data = t.buf
	}
	keep := len(data) - heldTail(data)
	out := escapeControls(data[:keep], false)
	t.held = append(t.held[:0], data[keep:]...)
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// close escapes and writes what Write held back: at the end of the
// output a lone CR or a cut UTF-8 sequence is escaped.
func (t *ttyWriter) close() error {
	if len(t.held) == 0 {
		return nil
	}
	out := escapeControls(t.held, false)
	t.held = t.held[:0]
	_, err := t.w.Write(out)
	return err
}

// heldTail is how many bytes at the end of b cannot be escaped until the
// next bytes are known: a final CR (it is kept before a newline), or an
// incomplete but so far valid UTF-8 sequence.
func heldTail(b []byte) int {
	n := len(b)
	if n == 0 {
		return 0
	}
	if b[n-1] == '\r' {
		return 1
	}
	for i := n - 1; i >= 0 && i >= n-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(b[i]) {
			if b[i] >= 0xc0 && !utf8.FullRune(b[i:]) {
				return n - i
			}
			break
		}
	}
	return 0
}

// textOut is where the text form writes stdout: p.w in a pipeline, a
// ttyWriter over it on a terminal. done flushes what the ttyWriter holds.
func (p *output) textOut() (w io.Writer, done func() error) {
	if !p.tty {
		return p.w, func() error { return nil }
	}
	t := &ttyWriter{w: p.w}
	return t, t.close
}

// jsonOut is where JSON (and grep's text, which escapes for itself and
// colors) goes: p.w in a pipeline, a c1Writer over it on a terminal.
func (p *output) jsonOut() (w io.Writer, done func() error) {
	if !p.tty {
		return p.w, func() error { return nil }
	}
	c := &c1Writer{w: p.w}
	return c, c.close
}

// c1Writer writes JSON to a terminal with its C1 controls escaped:
// encoding/json escapes C0 controls and replaces invalid UTF-8, but leaves
// U+0080 to U+009F raw inside strings, and some terminals obey them
// (U+009B is CSI). In JSON they can only stand inside a string, where
// \u009b means the same character, so a parser reads the same document.
type c1Writer struct {
	w    io.Writer
	held bool // the last write ended in 0xC2, the lead byte of every C1
	buf  []byte
}

func (c *c1Writer) Write(p []byte) (int, error) {
	data := p
	if c.held {
		c.buf = append(append(c.buf[:0], 0xc2), p...)
		data = c.buf
	}
	c.held = len(data) > 0 && data[len(data)-1] == 0xc2
	if c.held {
		data = data[:len(data)-1]
	}
	if _, err := c.w.Write(escapeC1(data)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *c1Writer) close() error {
	if !c.held {
		return nil
	}
	c.held = false
	_, err := c.w.Write([]byte{0xc2})
	return err
}

// escapeC1 rewrites each UTF-8 C1 control (0xC2 0x80 to 0xC2 0x9F) as
// \u0080 to \u009f; it allocates only when there is one.
func escapeC1(b []byte) []byte {
	const hex = "0123456789abcdef"
	var out []byte
	last := 0
	for i := bytes.IndexByte(b, 0xc2); i >= 0 && i+1 < len(b); {
		if c := b[i+1]; c >= 0x80 && c <= 0x9f {
			if out == nil {
				out = make([]byte, 0, len(b)+16)
			}
			out = append(append(out, b[last:i]...), '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			last = i + 2
		}
		j := bytes.IndexByte(b[i+1:], 0xc2)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// itemEncoder encodes NDJSON items, each shaped by --fields (its keys
// kept in their order), a line each.
func (p *output) itemEncoder(w io.Writer) func(v any) error {
	if p.shape == nil || p.shape.fields == nil {
		// A line or a path (most items) is quoted directly, as
		// encoding/json would (appendJSONString).
		enc := newEncoder(w, false)
		var buf []byte
		return func(v any) error {
			if s, ok := v.(string); ok {
				buf = append(appendJSONString(buf[:0], s), '\n')
				_, err := w.Write(buf)
				return err
			}
			return enc.Encode(v)
		}
	}
	return func(v any) error {
		raw, err := marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(append(p.shape.keepJSON(raw), '\n'))
		return err
	}
}

func newEncoder(w io.Writer, pretty bool) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if pretty {
		enc.SetIndent("", "  ")
	}
	return enc
}

// ErrorJSON is err as the CLI prints it in JSON: {"error":{code, message,
// path, rule}} (tool.ErrorOf, its hint spelled as a flag), without the
// newline.
func ErrorJSON(err error) []byte {
	return tool.ErrorJSON(err, FlagSpelling)
}

// FlagSpelling spells a hint's option as the command line takes it:
// --name, or -x where the command line usually gives it short (rm -r);
// and a setting as the command line makes it (settingWords).
func FlagSpelling(h *fserr.Hint) string {
	if h.Setting != "" {
		return settingWords(h.Setting)
	}
	if h.Short {
		for _, op := range ops.Registry.Ops() {
			for _, o := range op.Options {
				if o.Name == h.Option && o.Short != "" {
					return "-" + o.Short
				}
			}
		}
	}
	return "--" + h.Option
}

// printError writes err to w in the chosen format and returns the exit code.
func printError(w io.Writer, format string, err error) int {
	var said printed
	if errors.As(err, &said) {
		return tool.ExitCode(said.e.Code) // the result on stdout reports it
	}
	e := fserr.AsError(err)
	if e.Code == fserr.CodeNoMatch || e.Code == fserr.CodeTruncated {
		return tool.ExitCode(e.Code) // the result is already on stdout (and a text form's note on stderr)
	}
	if format == formatText {
		// The message and its hint (what to pass instead) go out a line
		// each, the hint under "fsbox:   ", so every stderr line says
		// where it came from; a newline in either is shown as \n.
		msg, hint := e.Parts(FlagSpelling)
		lines := []string{oneLine(msg)} // a name in it cannot forge a line
		if hint != "" {
			lines = append(lines, oneLine(hint))
		}
		for i, msg := range lines {
			if isTerminal(w) {
				// The message names paths as given: escaped as a name is.
				msg = string(escapeControls([]byte(msg), true))
			}
			if i == 0 {
				fmt.Fprintf(w, "fsbox: %s: %s\n", e.Code, msg)
			} else {
				fmt.Fprintf(w, "fsbox:   %s\n", msg)
			}
		}
	} else {
		pretty := false
		if isTerminal(w) {
			// For a person: indented, as --pretty is the default for
			// stdout on a terminal; still one JSON document.
			w, pretty = &c1Writer{w: w}, true // one whole document: nothing is held back
		}
		newEncoder(w, pretty).Encode(tool.ErrorOf(e, FlagSpelling))
	}
	return tool.ExitCode(e.Code)
}

// oneLine keeps a message on one line in the text form.
func oneLine(s string) string {
	return strings.ReplaceAll(s, "\n", `\n`)
}
