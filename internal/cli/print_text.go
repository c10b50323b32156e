package cli

import (
	"bufio"
	"bytes"
	"io"

	"github.com/fsbox/fsbox/pkg/spec"
)

// textPrinter prints --format text: the operation's text form (as its
// items come, for a streaming operation; else the result's spec.Texter),
// then on stderr the note of a cut, the notes and the failing paths. A
// result without a text form is printed as JSON.
type textPrinter struct {
	p  *output
	op *spec.Op
	// paints: names are coloured by type, and the lines go out past the
	// terminal escaper (textWriter has escaped them first, so only our SGR
	// codes get through): on a colour terminal, for an operation whose
	// text form promises it (Op.Paints). A streaming operation's text form
	// is its stream: what it prints whole (--type-list) is another's.
	paints bool
	s      *stream // set while items stream
	// lines counts the lines the text form wrote, for the note of a cut
	// ("after N lines").
	lines lineCounter
}

func newTextPrinter(p *output, op *spec.Op, streams bool) *textPrinter {
	t := &textPrinter{p: p, op: op, paints: p.color && op.Paints && (streams || !op.Streams)}
	if streams {
		t.s = newStream(t.out())
	}
	return t
}

// out is where the text form goes: past the terminal escaper when it is
// painted, else through it.
func (t *textPrinter) out() (io.Writer, func() error) {
	var w io.Writer
	var done func() error
	if t.paints {
		w, done = t.p.jsonOut()
	} else {
		w, done = t.p.textOut()
	}
	t.lines.w = w
	return &t.lines, done
}

// lineCounter passes writes on to w and counts the newlines in them.
type lineCounter struct {
	w io.Writer
	n int64
}

func (c *lineCounter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(bytes.Count(b[:n], []byte{'\n'}))
	return n, err
}

// writer is the text form's writer over bw.
func (t *textPrinter) writer(bw *bufio.Writer) textWriter {
	w := textWriter{Writer: bw, p: t.p}
	if t.paints {
		colors := t.p.typeColors()
		w.colors = &colors
	}
	return w
}

func (t *textPrinter) Sink() *spec.Sink {
	if t.s == nil {
		return nil
	}
	return t.s.sink(t.p, nil, t.writer(t.s.bw))
}

// Done ends the streamed text form, or prints the result's; then, on
// stderr, a cut's note (after the output, once it is out), the notes
// (grep's "binary file matches") and the failing paths, whatever became
// of stdout.
func (t *textPrinter) Done(r spec.Result, o spec.Outcome) error {
	defer t.p.sayFailures(o.Failures)
	defer t.p.sayNotes(o.Notes)
	if t.s != nil {
		t.p.sayCut(t.s.bw, o.Cut, &t.lines)
		return t.s.end()
	}
	tx, ok := r.(spec.Texter)
	if !ok {
		return t.p.whole(r)
	}
	cut := o.Cut
	if _, list := spec.Items(r); !list && !t.op.Pages {
		cut = nil // no list: no note (a list command's cut is still noted: history)
	}
	// The result is complete before it is printed: stream it out.
	out, done := t.out()
	bw := bufio.NewWriterSize(out, 64<<10)
	if err := tx.Text(t.writer(bw)); err != nil {
		return err
	}
	t.p.sayCut(bw, cut, &t.lines)
	if err := bw.Flush(); err != nil {
		return err
	}
	return done()
}
