package ops

import (
	"context"
	"errors"
	"io"
	"math"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
	"github.com/fsbox/fsbox/pkg/textio"
)

var sliceOp = &spec.Op{
	Name: "slice", Class: spec.Read, Result: SliceResult{},
	Streams: true,
	Summary: "select lines START to END, as Python's lines[START:END] (negatives count from the end)",
	Help:    "Selects the lines from START (0-based) up to, not including, END. A negative START or END counts from the end of the file: slice f -10 is tail -n 10.",
	Args: []spec.Arg{
		stdinArg("the file to take lines from (standard input takes non-negative bounds only)"),
		{Name: "start", Meta: "START", Type: spec.Int, Optional: true, Flag: true, Help: "first line, 0-based; negative counts from the end"},
		{Name: "end", Meta: "END", Type: spec.Int, Optional: true, Flag: true, Help: "line to stop before; negative counts from the end"},
	},
	Examples: []spec.Example{{Cmd: "slice notes.txt -2 --format text", Says: "the last two lines, as tail -n 2"}},
	Text:     "the lines exactly as the file holds them",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		o := SliceInput(in)
		o.Sink = lineSink(in.Sink)
		o.Exact = in.Exact
		return Slice(ctx, sb, o)
	},
}

// SliceInput turns a slice input into options.
func SliceInput(in *spec.Input) SliceOptions {
	o := SliceOptions{Path: in.String("path")}
	if in.IsSet("start") {
		v := in.Int("start")
		o.Start = &v
	}
	if in.IsSet("end") {
		v := in.Int("end")
		o.End = &v
	}
	return o
}

// LineSink receives each selected line with its terminator, exactly as the
// file has it. The slice is valid only during the call.
type LineSink func(line []byte) error

// SliceOptions are slice's inputs: Python's lines[Start:End].
type SliceOptions struct {
	Path  string
	Start *int64 // nil: 0
	End   *int64 // nil: to the end
	Sink  LineSink
	// Exact: lines go out whole (the text form); otherwise their text is
	// cut at max_line_bytes.
	Exact bool
}

// SliceResult holds the selected lines.
type SliceResult struct {
	Path  string `json:"path"`
	Start int64  `json:"start"`
	End   *int64 `json:"end"`
	// Total is the file's line count when the slice read the file from its
	// start to its end; null when it did not need to (a negative START reads
	// only the end of the file, a positive END stops reading there).
	Total *int64 `json:"total"`
	// Line is the 1-based number of the first returned line when known.
	Line  *int64   `json:"line"`
	Lines []string `json:"lines"`
	Count int64    `json:"count"`
	Truncation
}

// Slice selects lines[Start:End] with Python's semantics: negative bounds
// count from the end, out-of-range bounds clamp. A negative bound is found
// by scanning backwards from the end of the file, so `-10` reads only the
// tail; a non-negative window stops reading at End.
func Slice(ctx context.Context, sb *sandbox.Sandbox, o SliceOptions) (SliceResult, error) {
	if err := begin(ctx, sb, "slice"); err != nil {
		return SliceResult{}, err
	}
	f, err := openInput(sb, o.Path)
	if err != nil {
		return SliceResult{}, err
	}
	defer f.Close()
	var start int64
	if o.Start != nil {
		start = *o.Start
	}
	stream := f.Stream() // standard input: read forward only
	if stream && (start < 0 || (o.End != nil && *o.End < 0)) {
		return SliceResult{}, usagef(o.Path, "a negative bound counts from the end, which standard input only reaches by reading all of it: give non-negative bounds, or slice a file")
	}
	res := SliceResult{Path: f.Info.Path, Start: start, End: o.End}
	sink := o.Sink
	if sink == nil {
		sink = collectLines(&res.Lines)
	}
	max := sb.Limits().Items()
	size := f.Info.Size
	buf := make([]byte, 64<<10)

	// offsetOf finds where line i starts (negative i from the end).
	offsetOf := func(i int64) (int64, error) {
		if i < 0 {
			k := -i
			if k < 0 { // -MinInt64 overflows: further back than any file reaches
				k = math.MaxInt64
			}
			return textio.LineStartFromEnd(f, size, k, buf)
		}
		r := textio.NewReader(textio.WithContext(ctx, io.NewSectionReader(f, 0, size)), 0)
		r.SkipLines(i)
		return r.Offset(), r.Err()
	}

	// One forward pass when both bounds are non-negative (or END absent):
	// skip START lines, stop after END. Otherwise find each bound's byte
	// offset (backwards for a negative one) and stream the range between.
	forward := start >= 0 && (o.End == nil || *o.End >= 0)
	from, to, limit := int64(0), size, int64(-1)
	if forward {
		if o.End != nil {
			limit = max64(*o.End-start, 0)
		}
	} else {
		if from, err = offsetOf(start); err != nil {
			return SliceResult{}, sandbox.AsError(err)
		}
		if o.End != nil {
			if to, err = offsetOf(*o.End); err != nil {
				return SliceResult{}, sandbox.AsError(err)
			}
		}
		if to < from {
			to = from
		}
	}
	var in io.Reader = io.NewSectionReader(f, from, to-from)
	if stream {
		in = f
	}
	r := textio.NewReader(textio.WithContext(ctx, in), 0)
	var skipped int64
	if forward {
		skipped = r.SkipLines(start)
	}
	if start >= 0 {
		res.Line = ptr(start + 1)
	}
	cut := lineCut(sb, o.Exact)
	for limit < 0 || res.Count < limit {
		line, n, err := r.ReadLineMax(holdFor(cut))
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return SliceResult{}, sandbox.AsError(err)
		}
		if res.Count >= max {
			res.Truncated, res.Limit = true, "max_results"
			break
		}
		var lineNo int64 // known when counting from the start
		if start >= 0 {
			lineNo = start + res.Count + 1
		}
		if line, err = fitLine(line, n, cut, &res.Truncation, o.Path, lineNo); err != nil {
			return SliceResult{}, err
		}
		if err := sink(line); err != nil {
			return SliceResult{}, err
		}
		res.Count++
	}
	if forward && !res.Truncated && r.AtEOF() {
		res.Total = ptr(skipped + res.Count)
	}
	if res.Count == 0 {
		res.Line = nil
	}
	return res, nil
}

func ptr[T any](v T) *T { return &v }

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
