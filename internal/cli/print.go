package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/spec"
)

// Printer prints one call's result in the format picked once for the
// call, as restic's ls prints through one lsPrinter: a json, ndjson or
// text printer (print_json.go, print_ndjson.go, print_text.go). A
// streaming operation (Op.Streams) sends its items to the printer's Sink
// as Run finds them: as values (json, ndjson) or as its text form (text);
// once Run has returned, Done prints the rest.
type Printer interface {
	// Sink is where a streaming call's items go as Run finds them; nil
	// when the result collects them, and Done prints them with the rest.
	Sink() *spec.Sink
	// Done prints the result Run returned: after streamed items, what
	// follows them; else the whole result. The text form's printer also
	// says the outcome's cut, notes and failing paths on stderr.
	Done(r spec.Result, o spec.Outcome) error
}

// printerFor picks the call's printer from the format: streams says the
// operation streams its items in this call (Op.StreamsWith).
func (p *output) printerFor(op *spec.Op, streams bool) Printer {
	switch p.format {
	case formatNDJSON:
		return newNDJSONPrinter(p, streams)
	case formatText:
		return newTextPrinter(p, op, streams)
	}
	return newJSONPrinter(p, op, streams)
}

// stream is a streaming printer's stdout: a 64 KiB buffer over the writer
// its format writes through, whose done passes on what that writer holds.
// A call that fails after items were sent leaves stdout with what the
// buffer had passed on by then (nothing, for a short list).
type stream struct {
	bw   *bufio.Writer
	done func() error
}

func newStream(w io.Writer, done func() error) *stream {
	return &stream{bw: bufio.NewWriterSize(w, 64<<10), done: done}
}

// sink is the spec.Sink that writes items (item) or the text form (text)
// through s. Where stdout's reader reads as fsbox writes (live), the
// sink's Idle passes on what the buffer holds when the operation waits:
// `fsbox grep x | head -1` ends at the first match. A walk waits at
// nearly every directory, so a flush follows the last one by at least
// idleFlushGap: a pipe then carries a few large writes, not one per
// directory (800 writes for the bench's tree made find under sh -c 15 %
// slower), and what was found is held no longer than that before a wait.
func (s *stream) sink(p *output, item func(any) error, text spec.TextWriter) *spec.Sink {
	k := &spec.Sink{Item: item, Text: text}
	if p.live {
		var last time.Time
		k.Idle = func() {
			if s.bw.Buffered() == 0 {
				return
			}
			if now := time.Now(); now.Sub(last) >= idleFlushGap {
				last = now
				s.bw.Flush() // a failure sticks: the next write reports it
			}
		}
	}
	return k
}

// idleFlushGap is the least time between two flushes an operation's
// waits ask for.
const idleFlushGap = 10 * time.Millisecond

// end passes on the rest once it is written.
func (s *stream) end() error {
	if err := s.bw.Flush(); err != nil {
		return err
	}
	return s.done()
}

// whole prints a collected result v as one JSON document, as every
// format does a result it has no other form for: shaped by --fields and
// --jq (json); a string tagged big (spec.BigString) written in place;
// else encoded, indented with --pretty in json. json.Encoder marshals
// all of it before its one Write, so a failure leaves stdout empty
// without a copy of ours (each fresh page of a copy costs a fault; read's
// 1 MiB content would cost about 2 MiB more).
func (p *output) whole(v any) error {
	if p.shape != nil && p.format == formatJSON {
		out, _ := p.jsonOut()
		cx := p.cx
		if cx == nil {
			cx = context.Background()
		}
		return p.shape.write(cx, out, v, p.pretty, p.change)
	}
	if big := spec.BigString(v); big != nil && p.shape == nil {
		return p.emitWithString(v, big) // the big string is written in place, not copied
	}
	return p.document(v)
}

// document prints v as one JSON document, indented with --pretty in json.
func (p *output) document(v any) error {
	out, _ := p.jsonOut() // one whole document: nothing is held back
	return newEncoder(out, p.pretty && p.format == formatJSON).Encode(v)
}

// exitOf is the call's end once its result is printed (SPEC §2): the
// first failing path's class, when paths failed (the result reports
// them); then a list result a policy limit cut exits 9 (truncated; a cut
// the caller asked for, --limit or -m, is no failure); then a result
// that finds things (grep) and found nothing exits 1, as grep does.
func exitOf(o spec.Outcome) error {
	if f := o.Failures; f != nil {
		return printed{fserr.AsError(f.First)} // reported in the result
	}
	if c := o.Cut; c != nil && policyCut(c.Limit) {
		what := "the " + c.Limit + " limit"
		if c.Limit == "timeout" {
			what = "the call's deadline"
		}
		return &fserr.Error{Code: fserr.CodeTruncated, Msg: what + " cut the output"}
	}
	if o.NoMatch {
		return &fserr.Error{Code: fserr.CodeNoMatch, Msg: "no match"}
	}
	return nil
}

// quietEnd is the end of a call that prints nothing (grep -q): any match
// is success, whatever else happened.
func quietEnd(o spec.Outcome) error {
	if !o.NoMatch {
		return nil
	}
	return exitOf(o)
}

// policyCut: the limit that cut a list is the policy's (max_results,
// [store] max_requests) or the call's deadline (timeout: max_call_seconds,
// or --timeout, which only lowers it, so exits as the policy's would), not
// the caller's own cut (--limit, -m); a read page at max_read_bytes is no
// cut of a list.
func policyCut(limit string) bool {
	return limit == "max_results" || limit == "timeout" || limit == "max_result_bytes" || limit == "max_requests"
}

// printed is the outcome of a call whose result is printed and already
// reports the error (errors[] of several paths): its class is the exit
// status, and nothing more is printed.
type printed struct{ e *fserr.Error }

func (p printed) Error() string { return p.e.Error() }

// Unwrap gives the error itself (its code, for the audit record).
func (p printed) Unwrap() error { return p.e }

// summary ends a list in NDJSON: exactly one last line {"summary":{...}},
// the result without its lists (spec.ListKeys: count, truncated, limit,
// skipped, files_searched, ...), for every list command.
func summary(bw *bufio.Writer, result any) {
	b, err := json.Marshal(result)
	var fields map[string]json.RawMessage
	if err != nil || json.Unmarshal(b, &fields) != nil {
		fields = map[string]json.RawMessage{}
	}
	for _, k := range spec.ListKeys(result) {
		delete(fields, k)
	}
	newEncoder(bw, false).Encode(struct {
		Summary map[string]json.RawMessage `json:"summary"`
	}{fields})
}

// sayCut is the text form's note on stderr when a limit cut the list (c,
// nil when none did), once what bw holds is out; none when stdout is
// gone (a closed pipe).
func (p *output) sayCut(bw *bufio.Writer, c *spec.Cut, lines *lineCounter) {
	if c == nil || bw.Flush() != nil {
		return
	}
	what := func(limit string) string {
		v := ""
		if p.limitValue != nil {
			v = p.limitValue(limit)
		}
		switch {
		case limit == "limit" && v != "":
			return "--limit " + v
		case limit == "limit":
			return "--limit"
		case limit == "timeout" && v != "":
			return "deadline (" + v + ": max_call_seconds, --timeout)"
		case limit == "timeout":
			return "deadline (max_call_seconds, --timeout)"
		case v != "":
			return limit + " limit (" + v + ")"
		}
		return limit + " limit"
	}
	// The text form prints an item a line (a grep match with its
	// context, a file's content: its lines): what the reader has.
	after := fmt.Sprintf(" after %d %s", lines.n, plural(lines.n, "line", "lines"))
	if n := len(c.Cuts); n > 1 {
		// A count's list cut first, then the deadline stopped the
		// counting (SPEC §2, Counts): the counts are partial.
		fmt.Fprintf(p.errw, "fsbox: truncated: the %s cut the list%s, then the %s stopped the count: the counts are of the files before the cut\n", what(c.Cuts[0]), after, what(c.Cuts[n-1]))
	} else {
		fmt.Fprintf(p.errw, "fsbox: truncated: the %s cut the output%s\n", what(c.Limit), after)
	}
	if c.NextCursor != "" {
		// The text form has no field for it: the next page's flag goes
		// on a hint line (SPEC §3), ready to paste.
		fmt.Fprintf(p.errw, "fsbox:   the rest: the same command with --cursor %s\n", c.NextCursor)
	}
}

// sayFailures writes each failing path of a text form's call on stderr,
// as fsbox: CODE: message lines, and how many more there were.
func (p *output) sayFailures(f *spec.Failures) {
	if f == nil {
		return
	}
	for _, e := range f.Shown {
		printError(p.errw, formatText, e)
	}
	if f.More > 0 {
		fmt.Fprintf(p.errw, "fsbox: and %d more failing paths\n", f.More)
	}
}

// sayNotes writes a text form's notes on stderr, a line each (a name in
// one cannot forge a line, nor reach a terminal raw).
func (p *output) sayNotes(notes []string) {
	for _, n := range notes {
		n = oneLine(n)
		if isTerminal(p.errw) {
			n = string(escapeControls([]byte(n), true))
		}
		fmt.Fprintf(p.errw, "fsbox: %s\n", n)
	}
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
