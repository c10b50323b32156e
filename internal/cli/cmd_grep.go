package cli

import (
	"bufio"
	"strconv"

	ucli "github.com/urfave/cli/v2"

	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

func init() {
	register(&command{
		name:      "grep",
		usage:     "search files and trees for an RE2 pattern, honouring .gitignore",
		argsUsage: "PATTERN [PATH...]",
		minArgs:   1, maxArgs: -1,
		flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "ignore-case", Aliases: []string{"i"}, Usage: "match case-insensitively"},
			&ucli.BoolFlag{Name: "fixed-strings", Aliases: []string{"F"}, Usage: "PATTERN is a literal string"},
			&ucli.BoolFlag{Name: "word-regexp", Aliases: []string{"w"}, Usage: "match whole words only"},
			&ucli.BoolFlag{Name: "invert-match", Aliases: []string{"v"}, Usage: "select lines that do not match"},
			&ucli.BoolFlag{Name: "numbered", Aliases: []string{"n", "line-number"}, Usage: "text form: prefix line numbers"},
			&ucli.BoolFlag{Name: "count", Aliases: []string{"c"}, Usage: "count matching lines per file"},
			&ucli.BoolFlag{Name: "files-with-matches", Aliases: []string{"l"}, Usage: "list the files that match"},
			&ucli.IntFlag{Name: "after-context", Aliases: []string{"A"}, Usage: "lines of context after each match"},
			&ucli.IntFlag{Name: "before-context", Aliases: []string{"B"}, Usage: "lines of context before each match"},
			&ucli.IntFlag{Name: "context", Aliases: []string{"C"}, Usage: "lines of context around each match"},
			&ucli.Int64Flag{Name: "max-count", Aliases: []string{"m"}, Usage: "stop a file after N matching lines"},
			&ucli.Int64Flag{Name: "limit", Usage: "at most N matches in all (lowers max_results)"},
			&ucli.StringSliceFlag{Name: "glob", Aliases: []string{"g"}, Usage: "search only files matching GLOB; !GLOB excludes (repeatable)"},
			&ucli.BoolFlag{Name: "hidden", Usage: "search names starting with a dot"},
			&ucli.BoolFlag{Name: "no-ignore", Usage: "do not honour .gitignore, .ignore and .git/info/exclude"},
			&ucli.BoolFlag{Name: "follow", Aliases: []string{"L"}, Usage: "follow symlinks (never out of their root, never in a loop)"},
		},
		run: runGrep,
	})
}

func runGrep(x *call) error {
	c := x.ctx
	o := ops.GrepOptions{Pattern: x.args[0], Paths: x.args[1:], IgnoreCase: c.Bool("ignore-case"), Fixed: c.Bool("fixed-strings"),
		Word: c.Bool("word-regexp"), Invert: c.Bool("invert-match"), Count: c.Bool("count"), FilesWithMatches: c.Bool("files-with-matches"),
		Before: c.Int("before-context"), After: c.Int("after-context"), MaxCount: c.Int64("max-count"), Limit: c.Int64("limit"),
		Globs: c.StringSlice("glob"), Hidden: c.Bool("hidden"), NoIgnore: c.Bool("no-ignore"), Follow: c.Bool("follow"),
		Exact: x.out.exact()}
	if c.IsSet("context") {
		if !c.IsSet("before-context") {
			o.Before = c.Int("context")
		}
		if !c.IsSet("after-context") {
			o.After = c.Int("context")
		}
	}
	if o.Before < 0 || o.After < 0 || o.MaxCount < 0 || o.Limit < 0 {
		return usageErr("-A, -B, -C, --max-count and --limit take 0 or more")
	}
	if c.IsSet("limit") && o.Limit == 0 {
		return usageErr("--limit must be 1 or more")
	}
	if o.Count && o.FilesWithMatches {
		return usageErr("--count and --files-with-matches do not go together")
	}
	p := x.out
	var res ops.GrepResult
	var err error
	if p.format == formatJSON {
		res, err = ops.Grep(x.sb, o)
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
		tp := &grepText{w: bw, color: p.color, safe: p.safe, safeName: p.safeName, numbered: c.Bool("numbered"), context: o.Before > 0 || o.After > 0,
			withPath: !ops.GrepNamesOneFile(x.sb, o.Paths)}
		enc := newEncoder(bw, false)
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
				bw.WriteString(tp.paint(p.safeName(fr.Path), colorPath))
				return bw.WriteByte('\n')
			}
			tp.file(fr)
			return nil
		}
		res, err = ops.Grep(x.sb, o)
		if err != nil {
			return err
		}
		p.trailer(bw, &res.Truncation)
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
}

func (t *grepText) paint(s, color string) string {
	if !t.color {
		return s
	}
	return color + s + colorReset
}

func (t *grepText) prefix(path string, line int64, sep byte) {
	if t.withPath {
		t.w.WriteString(t.paint(t.safeName(path), colorPath))
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
	if !t.color || m.Column == 0 {
		return t.safe(m.Raw)
	}
	a, b := m.Column-1, m.Column-1+m.MatchLen
	return []byte(string(t.safe(m.Raw[:a])) + colorMatch + string(t.safe(m.Raw[a:b])) + colorReset + string(t.safe(m.Raw[b:])))
}
