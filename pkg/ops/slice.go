package ops

import (
	"context"
	"errors"
	"io"
	"math"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
	"github.com/fsbox/fsbox/pkg/textio"
)

var sliceOp = &spec.Op{
	Name: "slice", Class: spec.Read, Result: SliceResult{},
	Streams: true,
	Pages:   true,
	Summary: "select lines START to END, as Python's lines[START:END] (negatives count from the end)",
	Help:    "Selects the lines from START (0-based) up to, not including, END. A negative START or END counts from the end of the file: slice f -10 is tail -n 10.",
	Args: []spec.Arg{
		stdinArg("the file to take lines from (on standard input a negative bound holds only the lines it needs)"),
		{Name: "start", Meta: "START", Type: spec.Int, Optional: true, Flag: true, Help: "first line, 0-based; negative counts from the end"},
		{Name: "end", Meta: "END", Type: spec.Int, Optional: true, Flag: true, Help: "line to stop before; negative counts from the end"},
	},
	Examples: []spec.Example{{Cmd: "slice notes.txt -2 --format text", Says: "the last two lines, as tail -n 2"}},
	Text:     "the lines exactly as the file holds them",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		return SliceLines(ctx, sb, in, lineSink(in.Sink))
	},
}

// SliceLines is slice's Run with each line sent to sink as the file has
// it (nil: collected into the result): the operation's own form of its
// items, for a face that shapes them itself (the reference MCP profile's
// tail).
func SliceLines(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input, sink LineSink) (SliceResult, error) {
	o := SliceInput(in)
	o.Sink = sink
	o.Exact = in.Exact
	var err error
	if o.Paging, err = pagingOf(sb, in); err != nil {
		return SliceResult{}, err
	}
	return Slice(ctx, sb, o)
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
	// Paging: a page gives the lines after the first From.N of the
	// slice (its position is the number of lines given so far).
	Paging
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
	Lines []string `json:"lines" fsbox:"items"`
	Count int64    `json:"count"` // the lines on this page
	Truncation
}

// pageLine fits a line read by ReadLineMax(holdFor(cut)) (whole length n)
// and admits it to pg: the line as it goes out, or lim, the limit that
// cuts the list before it. Its size is the JSON of its text as an item
// holds it; in the text form (cut 0), where lines go out whole, the
// cheap len(line)+2, which reads none of its bytes. A line's cut at
// max_line_bytes is counted in tr only once it is on the page.
func pageLine(pg *pager, line []byte, n int64, cut int, tr *Truncation, path string, lineNo int64) (out []byte, lim string, err error) {
	if cut == 0 {
		if lim := pg.admit(int64(len(line)) + 2); lim != "" {
			return nil, lim, nil
		}
		out, err := fitLine(line, n, 0, tr, path, lineNo)
		return out, "", err
	}
	var t Truncation
	out, _ = fitLine(line, n, cut, &t, path, lineNo) // never an error in JSON
	if lim := pg.admit(jsonBytesLen(textio.TrimEOL(out))); lim != "" {
		return nil, lim, nil
	}
	if t.TextTruncated {
		tr.TextTruncated = true
		tr.CutLines++
	}
	return out, "", nil
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
		return sliceStream(ctx, sb, o, f, start)
	}
	res := SliceResult{Path: f.Info.Path, Start: start, End: o.End}
	sink := o.Sink
	if sink == nil {
		sink = collectLines(&res.Lines)
	}
	// A page after a cursor re-reads the slice up to it and drops the
	// first From.N lines: a line count is all the cursor holds (no
	// offset to trust or check), so the page is exactly the suffix of
	// the slice as the file reads now; skipping lines costs a count of
	// newlines, not the work of giving them.
	var from0 int64
	if o.From != nil {
		from0 = o.From.N
	}
	pg := newPager(sb, 0)
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
			return SliceResult{}, fserr.AsError(err)
		}
		if o.End != nil {
			if to, err = offsetOf(*o.End); err != nil {
				return SliceResult{}, fserr.AsError(err)
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
		skipped = r.SkipLines(satAdd(start, from0))
		if limit >= 0 {
			limit = max64(limit-from0, 0)
		}
	} else {
		r.SkipLines(from0)
	}
	first := satAdd(start, from0) // 0-based number of the page's first line, when start >= 0
	if start >= 0 {
		res.Line = ptr(first + 1)
	}
	cut := lineCut(sb, o.Exact)
	for limit < 0 || res.Count < limit {
		line, n, err := r.ReadLineMax(holdFor(cut))
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return SliceResult{}, fserr.AsError(err)
		}
		var lineNo int64 // known when counting from the start
		if start >= 0 {
			lineNo = first + res.Count + 1
		}
		line, lim, err := pageLine(&pg, line, n, cut, &res.Truncation, o.Path, lineNo)
		if err != nil {
			return SliceResult{}, err
		}
		if lim != "" {
			res.cut(lim, o.next(Cursor{N: from0 + res.Count}))
			break
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

// sliceStream is Slice of standard input with a negative bound: read
// forward to the end (nothing else reaches it), holding only the lines a
// negative bound may still need — the last -START of them, or the -END
// that might be the end — as tail -n and head -n -N do. Its memory is
// those lines (never more than MaxHold bytes), not the input.
func sliceStream(ctx context.Context, sb *sandbox.Sandbox, o SliceOptions, f *sandbox.File, start int64) (SliceResult, error) {
	res := SliceResult{Path: f.Info.Path, Start: start, End: o.End}
	sink := o.Sink
	if sink == nil {
		sink = collectLines(&res.Lines)
	}
	cut := lineCut(sb, o.Exact)
	pg := newPager(sb, 0)
	var from0 int64 // lines of the slice given before this page: dropped, as Slice does
	if o.From != nil {
		from0 = o.From.N
	}
	var dropped int64
	// keep is how many of the latest lines are held: the last -START,
	// or, for START >= 0 with a negative END, the last -END (a delay).
	keep := -start
	if start >= 0 {
		keep = -*o.End
	}
	if keep < 0 { // -MinInt64
		keep = math.MaxInt64
	}
	type held struct {
		b []byte
		n int64
	}
	var ring []held
	head, heldBytes := 0, int64(0) // ring[head] is the oldest once full
	var total int64
	emit := func(h held, lineNo int64) (bool, error) {
		if dropped < from0 {
			dropped++
			return true, nil
		}
		line, lim, err := pageLine(&pg, h.b, h.n, cut, &res.Truncation, o.Path, lineNo)
		if err != nil {
			return false, err
		}
		if lim != "" {
			res.cut(lim, o.next(Cursor{N: from0 + res.Count}))
			return false, nil
		}
		if err := sink(line); err != nil {
			return false, err
		}
		res.Count++
		return true, nil
	}
	r := textio.NewReader(textio.WithContext(ctx, f), 0)
	for {
		line, n, err := r.ReadLineMax(holdFor(cut))
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return SliceResult{}, fserr.AsError(err)
		}
		total++
		if start >= 0 && total <= start {
			continue // before START
		}
		if keep == 0 {
			continue // END -0 ... nothing is kept: lines[s:-0] is empty
		}
		if int64(len(ring)) < keep {
			heldBytes += int64(len(line))
			if heldBytes > MaxHold {
				return SliceResult{}, fserr.Errorf(fserr.CodeTooLarge, o.Path, "the last %d lines of standard input are over %d bytes, more than slice holds", keep, int64(MaxHold))
			}
			ring = append(ring, held{append([]byte(nil), line...), n})
			continue
		}
		// Full: the oldest leaves. With START >= 0 it is before END's
		// reach, so it is printed; with a negative START it is dropped.
		old := &ring[head]
		if start >= 0 && !res.Truncated {
			if ok, err := emit(*old, total-keep); err != nil {
				return SliceResult{}, err
			} else if !ok {
				start = -1 // stop printing; still read on for the count
			}
		}
		heldBytes += int64(len(line)) - int64(len(old.b))
		old.b, old.n = append(old.b[:0], line...), n
		head = (head + 1) % len(ring)
	}
	res.Total = ptr(total)
	if start < 0 && !res.Truncated {
		// The ring holds the last lines, oldest at head: lines[START:END].
		first := total - int64(len(ring)) // 0-based number of ring's oldest
		from := max64(total+*o.Start, 0)
		to := total
		if o.End != nil {
			to = *o.End
			if to < 0 {
				to = max64(total+to, 0)
			}
			to = min(to, total)
		}
		for i := from; i < to; i++ {
			if i < first {
				continue
			}
			if ok, err := emit(ring[(head+int(i-first))%len(ring)], i+1); err != nil {
				return SliceResult{}, err
			} else if !ok {
				break
			}
		}
		if res.Count > 0 {
			res.Line = ptr(from + from0 + 1)
		}
	} else if o.Start != nil && *o.Start >= 0 && res.Count > 0 {
		res.Line = ptr(*o.Start + from0 + 1)
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
