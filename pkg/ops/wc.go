package ops

import (
	"context"
	"fmt"
	"strconv"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
	"github.com/fsbox/fsbox/pkg/textio"
)

var wcOp = &spec.Op{
	Name: "wc", Class: spec.Read, Result: WcResult{},
	Pages:   true,
	Summary: "count lines, words, bytes and characters",
	Help:    "Counts each file's lines, words (runs of non-space), bytes and UTF-8 characters, as wc -lwmc, with a total. When the deadline stops it, files[] and total are those of the files counted to the end (partial), and next_cursor resumes at the first file not counted; one path cut in its middle fails with timeout.",
	Args:    []spec.Arg{{Name: "paths", Meta: "PATH", Help: "the files to count; - is standard input (the default on the command line when stdin is a pipe or a file)", Use: sandbox.NeedReadFile, Many: true, Stdin: true, Complete: spec.CompleteFiles}},
	Options: []spec.Option{
		{Name: "lines", Short: "l", Type: spec.Bool, CLIOnly: true, Help: "the text form prints the line count (JSON always has all four)"},
		{Name: "words", Short: "w", Type: spec.Bool, CLIOnly: true, Help: "the text form prints the word count"},
		{Name: "chars", Short: "m", Type: spec.Bool, CLIOnly: true, Help: "the text form prints the character count"},
		{Name: "bytes", Short: "c", Type: spec.Bool, CLIOnly: true, Help: "the text form prints the byte count"},
	},
	Examples: []spec.Example{{Cmd: "wc main.go notes.txt --format text", Says: "lines words chars bytes per file, and a total"}},
	Text:     "lines words chars bytes path (or only those -l -w -m -c select, in that order), one line per file, and a total line for several; columns padded as GNU wc 9.1",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		pg, err := pagingOf(sb, in)
		if err != nil {
			return nil, err
		}
		r, err := Wc(ctx, sb, WcOptions{Paths: in.Strings("paths"), Paging: pg})
		// -l -w -m -c select what the text form prints, in wc's order.
		for _, n := range []string{"lines", "words", "chars", "bytes"} {
			if in.Bool(n) {
				r.show = append(r.show, n)
			}
		}
		return r, err
	},
}

// WcOptions are wc's inputs.
type WcOptions struct {
	Paths []string
	// Paging: a page starts at the path argument From.Arg (the index,
	// in Paths, of the first path the page before it did not count).
	Paging
}

// WcFile is one file's counts.
type WcFile struct {
	Path string `json:"path"`
	textio.Counts
}

// WcResult holds each file's counts and their sum.
type WcResult struct {
	Files []WcFile      `json:"files" fsbox:"list"`
	Total textio.Counts `json:"total"`
	// Truncated (limit "timeout"): the call's deadline passed before
	// every path was counted; files and total hold the ones before
	// (Partial), and NextCursor resumes at the first one not counted.
	Truncated  bool     `json:"truncated,omitempty"`
	Limit      string   `json:"limit,omitempty"`
	Partial    bool     `json:"partial,omitempty"`
	NextCursor string   `json:"next_cursor,omitempty"`
	Cuts       []string `json:"cuts,omitempty"`
	PathErrors
	show []string // the counts the text form prints (all when none is picked)
}

// Outcome: only the deadline cuts wc (exit 9); no item limit does. The
// text form notes the cut on stderr, with the next page's cursor; the
// paths that failed are in errors[].
func (r WcResult) Outcome() spec.Outcome {
	t := Truncation{Truncated: r.Truncated, Limit: r.Limit, NextCursor: r.NextCursor, Cuts: r.Cuts}
	return spec.Outcome{Cut: t.outcomeCut(), Failures: r.PathErrors.failures()}
}

// Wc counts lines, words, bytes and characters of each file in one
// streaming pass, in memory that does not grow with the file.
func Wc(ctx context.Context, sb *sandbox.Sandbox, o WcOptions) (WcResult, error) {
	if err := begin(ctx, sb, "wc"); err != nil && !(timedOut(ctx, err) && len(o.Paths) > 1) {
		return WcResult{}, err // several paths past the deadline already: the empty partial result, as a moment later
	}
	res := WcResult{Files: []WcFile{}}
	buf := make([]byte, textio.DefaultBufSize)
	// A page after a cursor starts at the path argument it names (an
	// index, compared with the call's own arguments, which the cursor is
	// bound to).
	base, paths := int64(0), o.Paths
	if o.From != nil {
		base = min(o.From.Arg, int64(len(paths)))
		paths = paths[base:]
	}
	cut := func(i int) {
		// The paths before are counted; the one the deadline caught is
		// not: the next page starts at it.
		var t Truncation
		cutByDeadline(ctx, &t)
		res.Truncated, res.Limit, res.Cuts, res.Partial = t.Truncated, t.Limit, t.Cuts, true
		res.NextCursor = o.next(Cursor{Arg: base + int64(i)})
	}
	for i, p := range paths {
		if err := ctx.Err(); err != nil {
			if timedOut(ctx, err) && len(o.Paths) > 1 {
				cut(i)
				break
			}
			return WcResult{}, err
		}
		f, err := openInput(sb, p)
		if err == nil {
			var c textio.Counts
			c, err = textio.Count(textio.WithContext(ctx, f), buf)
			f.Close()
			if err == nil {
				res.Files = append(res.Files, WcFile{Path: f.Info.Path, Counts: c})
				res.Total.Add(c)
				continue
			}
		}
		if timedOut(ctx, ctx.Err()) && len(o.Paths) > 1 {
			cut(i)
			break
		}
		if ctx.Err() != nil {
			return WcResult{}, ctx.Err()
		}
		// One bad path never sinks the rest (SPEC §2).
		res.PathErrors.add(sb, p, err, true)
	}
	if err := res.PathErrors.end(len(o.Paths)); err != nil {
		return WcResult{}, err
	}
	return res, nil
}

// Text is wc's: the picked counts (all four by default) of each file and
// their total, each padded, as GNU wc 9.1 pads them, to the width of the
// files' total size (one count of one file is not padded).
func (r WcResult) Text(w spec.TextWriter) error {
	picked := r.show
	if len(picked) == 0 {
		picked = []string{"lines", "words", "chars", "bytes"}
	}
	n := len(strconv.FormatInt(r.Total.Bytes, 10))
	if len(picked) == 1 && len(r.Files) == 1 {
		n = 1
	}
	row := func(c textio.Counts, name string) {
		for i, p := range picked {
			if i > 0 {
				w.WriteByte(' ')
			}
			fmt.Fprintf(w, "%*d", n, countOf(c, p))
		}
		fmt.Fprintf(w, " %s\n", name)
	}
	for _, f := range r.Files {
		row(f.Counts, w.Name(f.Path))
	}
	if len(r.Files) > 1 {
		row(r.Total, "total")
	}
	return nil
}

func countOf(c textio.Counts, name string) int64 {
	switch name {
	case "lines":
		return c.Lines
	case "words":
		return c.Words
	case "chars":
		return c.Chars
	}
	return c.Bytes
}
