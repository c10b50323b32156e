package ops

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
	"github.com/fsbox/fsbox/pkg/textio"
)

var grepOp = &spec.Op{
	Name: "grep", Class: spec.Read, Result: GrepResult{},
	Streams: true,
	Pages:   true,
	Summary: "search files and trees for an RE2 pattern, honouring .gitignore",
	Help:    "Searches each PATH (the workdir when none is given) for lines matching PATTERN, an RE2 regular expression. Directories are walked in path order, honouring .gitignore, .ignore and .git/info/exclude and leaving out hidden names; a file named on the command line is always searched. Binary files (a NUL byte) are skipped and counted in a walk; a binary file named on the command line is searched, its matching lines given without text (grep's \"binary file matches\"). No line is skipped however long: one past 256 KiB in a file is searched through a mapping (a literal passes it in one read), one past 16 MiB on a stream as it passes and given cut. A file of 32 MiB or more is searched through bounded windows mapped from the page cache, on every core; a file written over or truncated while it is read is a per-path conflict (one already being written when grep opens it can go unseen).",
	Args: []spec.Arg{
		{Name: "pattern", Meta: "PATTERN", Help: "an RE2 regular expression (a literal string with fixed_strings)", OmitWith: []string{"regexp", "file"}},
		{Name: "paths", Meta: "PATH", Help: "files or directories to search; - is standard input (the default on the command line when stdin is a pipe or a file, else the workdir)", Use: spec.ReadAny, Many: true, Optional: true, Stdin: true, Complete: spec.CompleteFiles},
	},
	Options: []spec.Option{
		{Name: "ignore-case", Short: "i", Type: spec.Bool, Help: "match case-insensitively"},
		{Name: "fixed-strings", Short: "F", Type: spec.Bool, Help: "PATTERN is a literal string"},
		{Name: "word-regexp", Short: "w", Type: spec.Bool, Help: "match whole words only"},
		{Name: "invert-match", Short: "v", Type: spec.Bool, Help: "select lines that do not match"},
		{Name: "regexp", Short: "e", Type: spec.Strings, Meta: "PATTERN", CLIOnly: true, Help: "a pattern (repeatable: a line matches when any does); PATTERN is then no argument"},
		{Name: "file", Short: "f", Type: spec.String, Meta: "FILE", CLIOnly: true, Complete: spec.CompleteFiles, Help: "read patterns from FILE, one a line (an empty file matches nothing); PATTERN is then no argument"},
		{Name: "line-regexp", Short: "x", Type: spec.Bool, Help: "match whole lines only"},
		{Name: "text", Short: "a", Type: spec.Bool, Help: "search binary files (a NUL byte) as text, as grep -a and rg -a do"},
		{Name: "only-matching", Short: "o", Type: spec.Bool, Help: "give each match alone: its text is the match, column where it starts (the line count stays)"},
		{Name: "quiet", Short: "q", Type: spec.Bool, CLIOnly: true, Help: "print nothing; exit 0 at the first match, 1 when there is none"},
		{Name: "extended-regexp", Short: "E", Type: spec.Bool, CLIOnly: true, Help: "accepted for GNU grep: patterns are always RE2, which is extended syntax"},
		{Name: "recursive", Short: "r", Type: spec.Bool, CLIOnly: true, Help: "accepted for GNU grep: directories are always searched recursively"},
		{Name: "dereference-recursive", Short: "R", Type: spec.Bool, CLIOnly: true, Help: "as GNU grep -R: recursive, following symlinks (the same as --follow)"},
		{Name: "max-columns", Type: spec.Int, Meta: "N", Min: min1, CLIOnly: true, Help: "in the text form, print a line longer than N bytes as a note, as rg does (JSON cuts at max_line_bytes)"},
		{Name: "numbered", Short: "n", Aliases: []string{"line-number"}, Type: spec.Bool, CLIOnly: true, Help: "prefix each line of the text form with its number (JSON always has it)"},
		{Name: "no-filename", Short: "h", Type: spec.Bool, CLIOnly: true, Help: "never prefix lines of the text form with the file name"},
		{Name: "with-filename", Short: "H", Type: spec.Bool, CLIOnly: true, Help: "always prefix lines of the text form with the file name"},
		{Name: "count", Short: "c", Type: spec.Bool, Help: "count matching lines per file instead of listing them"},
		{Name: "files-with-matches", Short: "l", Type: spec.Bool, Help: "list the files that match instead of the lines"},
		{Name: "after-context", Short: "A", Type: spec.Int, Meta: "N", Min: min0, Help: "show N lines after each match"},
		{Name: "before-context", Short: "B", Type: spec.Int, Meta: "N", Min: min0, Help: "show N lines before each match"},
		{Name: "context", Short: "C", Type: spec.Int, Meta: "N", Min: min0, Help: "show N lines before and after each match"},
		{Name: "max-count", Short: "m", Type: spec.Int, Meta: "N", Min: min0, DefaultText: "no limit", Help: "stop searching a file after N matching lines (0: print nothing, as GNU grep and rg)"},
		{Name: "limit", Type: spec.Int, Meta: "N", Unit: "matches", Min: min1, Narrows: "max_results", Help: "stop after N matches in all"},
		{Name: "glob", Short: "g", Type: spec.Strings, Meta: "GLOB", Help: "search only files matching GLOB; !GLOB leaves files out (repeatable)"},
		{Name: "hidden", Type: spec.Bool, Help: "search names starting with a dot"},
		{Name: "no-ignore", Type: spec.Bool, Help: "do not honour .gitignore, .ignore and .git/info/exclude"},
		{Name: "follow", Short: "L", Type: spec.Bool, Help: "follow symlinks (never out of their root, never in a loop)"},
	},
	Examples: []spec.Example{
		{Cmd: "grep -n TODO . --format text", Says: "every TODO under the workdir, as grep -rn prints it"},
		{Cmd: "grep -c -i todo src", Says: "matching lines per file, ignoring case"},
	},
	JSONNote: "-c gives counts[{path, count}] and -l paths[] in place of matches; exit 1 when nothing matches",
	Text:     "path:line:text with -n, path:text without (no path for one named file, or with -h), context lines with '-', groups split by '--'; -c path:count; -l one path a line; colors on a terminal",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		if err := begin(ctx, sb, "grep"); err != nil {
			return nil, err // before a pattern file is read
		}
		o, err := GrepInput(sb, in)
		if err != nil {
			return nil, err
		}
		if o.Paging, err = pagingOf(sb, in); err != nil {
			return nil, err
		}
		o.Exact = in.Exact
		if in.Bool("quiet") {
			// -q: nothing printed; the first match ends the search.
			o.Limit, o.Count, o.FilesWithMatches, o.OnlyMatching = 1, false, true, false
			r, err := Grep(ctx, sb, o)
			r.quiet = true
			return r, err
		}
		o.Sink = grepSink(in.Sink, sb, in, o)
		return Grep(ctx, sb, o)
	},
}

// GrepInput turns a grep input into options (Run adds the face's sink).
func GrepInput(sb *sandbox.Sandbox, in *spec.Input) (GrepOptions, error) {
	o := GrepOptions{Text: in.Bool("text"), LineRegexp: in.Bool("line-regexp"), OnlyMatching: in.Bool("only-matching"), Pattern: in.String("pattern"), Paths: in.Strings("paths"), IgnoreCase: in.Bool("ignore-case"), Fixed: in.Bool("fixed-strings"),
		Word: in.Bool("word-regexp"), Invert: in.Bool("invert-match"), Count: in.Bool("count"), FilesWithMatches: in.Bool("files-with-matches"),
		Before: int(in.Int("before-context")), After: int(in.Int("after-context")), Limit: in.Int("limit"),
		Globs: in.Strings("glob"), Hidden: in.Bool("hidden"), NoIgnore: in.Bool("no-ignore"), Follow: in.Bool("follow") || in.Bool("dereference-recursive")}
	if in.IsSet("regexp") || in.IsSet("file") {
		o.Patterns = append([]string{}, in.Strings("regexp")...)
		if in.IsSet("file") {
			f, err := openInput(sb, in.String("file"))
			if err != nil {
				return o, err
			}
			data, err := io.ReadAll(io.LimitReader(f, sb.Limits().MaxReadBytes+1))
			f.Close()
			if err != nil {
				return o, sandbox.AsError(err)
			}
			if int64(len(data)) > sb.Limits().MaxReadBytes {
				return o, sandbox.Errorf(sandbox.CodeTooLarge, in.String("file"), "the pattern file %s is over max_read_bytes = %d", in.String("file"), sb.Limits().MaxReadBytes)
			}
			for _, l := range strings.SplitAfter(string(data), "\n") {
				if l != "" {
					o.Patterns = append(o.Patterns, strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r"))
				}
			}
		}
		o.Pattern = strings.Join(o.Patterns, "\n")
	}
	if in.IsSet("max-count") {
		m := in.Int("max-count")
		o.MaxCount = &m
	}
	if in.IsSet("context") {
		if !in.IsSet("before-context") {
			o.Before = int(in.Int("context"))
		}
		if !in.IsSet("after-context") {
			o.After = int(in.Int("context"))
		}
	}
	if o.Count && o.FilesWithMatches {
		return o, usageErr("count and files-with-matches do not go together")
	}
	if in.Bool("no-filename") && in.Bool("with-filename") {
		return o, usageErr("no-filename and with-filename do not go together")
	}
	return o, nil
}

// GrepOptions are grep's inputs.
type GrepOptions struct {
	Pattern    string
	Paths      []string // files or directories; default "."
	IgnoreCase bool     // -i
	Text       bool     // -a: binary files are searched as text
	Fixed      bool     // -F
	Word       bool     // -w
	Invert     bool     // -v
	LineRegexp bool     // -x: the whole line must match
	// Patterns, when not nil, are the patterns (grep -e, -f): a line
	// matches when any does; an empty list matches nothing. Pattern is
	// then only what the result shows.
	Patterns []string
	// OnlyMatching (-o): each match is one Match whose Text is the match
	// itself; Count still counts lines.
	OnlyMatching     bool
	Count            bool     // -c: counts per file
	FilesWithMatches bool     // -l: paths only
	Before, After    int      // -B, -A (-C sets both)
	MaxCount         *int64   // -m: matching lines per file (0: none, as GNU grep and rg: nothing is read); nil: no limit
	Limit            int64    // --limit: matches in all; 0 = max_results
	Globs            []string // -g: include globs; "!GLOB" excludes
	Hidden           bool
	NoIgnore         bool
	Follow           bool
	// Sink, when set, receives each file's result in path order instead
	// of the result collecting them (streaming output).
	Sink func(fr *FileResult) error
	// Exact: Text and context lines are whole (the text form prints Raw);
	// otherwise they are cut at max_line_bytes.
	Exact bool
	// Paging is where the page starts (the call's --cursor) and how a
	// cut seals the next cursor (SPEC §2, Continuation).
	Paging

	geom *mapGeometry // tests: where mapped search puts its chunk edges
}

// Match is one matching line (or, with -v, one non-matching line).
type Match struct {
	Path string `json:"path"`
	Line int64  `json:"line"`
	// Column is the 1-based byte column of the first match; 0 with -v.
	// Column and Text are left out for a binary file's match (Binary).
	Column int    `json:"column" schema:"optional"`
	Text   string `json:"text" schema:"optional"`
	// TextTruncated: Text is max_line_bytes of a longer line, TextBytes
	// long (the text form prints the line whole).
	TextTruncated bool `json:"text_truncated,omitempty"`
	TextBytes     int  `json:"text_bytes,omitempty"`
	// TextOffset is where in the line Text starts: a cut line's text is
	// the window around its first match (SPEC §4, max_line_bytes).
	TextOffset int      `json:"text_offset,omitempty"`
	Before     []string `json:"before,omitempty"`
	After      []string `json:"after,omitempty"`
	// ContextTruncated: a line of Before or After was cut likewise.
	ContextTruncated bool `json:"context_truncated,omitempty"`
	// Binary: the line is in a binary file (a NUL byte) named explicitly
	// and searched without -a: it matched, and its text is not given, as
	// grep says only "binary file matches" (SPEC §5).
	Binary bool `json:"binary,omitempty"`
	// (jsonLen mirrors these fields: keep the two in step.)

	Raw       []byte    `json:"-"` // the line as the file has it, without "\n" (with -o, the match)
	Only      bool      `json:"-"` // -o: Text and Raw are the match, not the line
	MatchLen  int       `json:"-"` // bytes of the first match, from Column
	BeforeRaw []CtxLine `json:"-"`
	AfterRaw  []CtxLine `json:"-"`
}

// CtxLine is a context line with its number, for the text form.
type CtxLine struct {
	Line int64
	Raw  []byte
}

// FileCount is one file's number of matching lines (-c).
type FileCount struct {
	Path  string `json:"path"`
	Count int64  `json:"count"`
}

// FileResult is what searching one file found.
type FileResult struct {
	Path    string
	Matches []Match
	Count   int64
	Binary  bool

	named    bool                   // named on the command line: searched even if binary
	part     bool                   // some of a named file's matches; more follow
	prior    int64                  // matching lines of the file sent in parts before these
	flush    func(*FileResult) bool // sends a part (named files, streaming output)
	held     []*sandbox.Mapping     // mappings the matches' Raw lie in, until printed
	cutLines int64                  // lines of a stream over textio.MaxLine, kept cut
	firstCut int64                  // the first of them
	skipped  bool                   // a walked file that could not be opened (raced away, denied)
	skipErr  error                  // why, for skipped.denied or skipped.errors
	err      error                  // a named path that could not be opened, walked or read
	given    string                 // the named path, as given, for err
	walked   bool                   // err is a walked file's (it changed while read)

	// Where the file lies, for next_cursor: the index of the path
	// argument, the walk's Rel within it ("" for the argument itself),
	// and its identity when opened (size and mtime; stream: none).
	arg       int
	rel       string
	size      int64
	mtime     int64
	key       [2]uint64 // device and inode
	stream    bool
	restarted bool  // the cursor's file changed: searched from its start
	dropped   int   // leading matches the cursor gave already (resumed file)
	gone      int64 // matching lines counted in Count whose items were all given already
}

// GrepSkipped counts what grep passed over.
type GrepSkipped struct {
	sandbox.WalkSkipped
	Binary   int64 `json:"binary"`
	Special  int64 `json:"special"`  // FIFOs, sockets, devices: never opened
	Symlinks int64 `json:"symlinks"` // not followed without -L
	Globbed  int64 `json:"globbed"`  // left out by -g
}

// GrepResult is grep's answer. Exactly one of Matches, Counts and Paths
// is present, by mode.
type GrepResult struct {
	Pattern       string       `json:"pattern"`
	Matches       *[]Match     `json:"matches,omitempty"`
	Counts        *[]FileCount `json:"counts,omitempty"`
	Paths         *[]string    `json:"paths,omitempty"`
	Count         int64        `json:"count"`
	FilesSearched int64        `json:"files_searched"`
	FilesMatched  int64        `json:"files_matched"`
	Skipped       GrepSkipped  `json:"skipped"`
	// Restarted: the cursor's file changed since the page before; this
	// page gives it from its start (SPEC §2, Continuation).
	Restarted bool `json:"restarted,omitempty"`
	Truncation
	PathErrors

	quiet  bool     // -q: the command line prints nothing
	binary bool     // a match is a binary file's (MarshalJSON)
	notes  []string // for stderr in the text form (Notes)
}

// grepJob is a batch of files for one worker: batching keeps the hand-off
// cost (channel operations, goroutine wake-ups) off the per-file path.
type grepJob struct {
	entries []*sandbox.Entry // from a walk
	file    string           // or one path named on the command line
	err     error            // or a named path that failed before a search
	arg     int              // the index of the path argument the job's files are of
	resume  int              // 1 + the index of the cursor's file in entries (1 for file); 0: none
	out     chan []FileResult
	// part takes a named file's matches in batches as they are found,
	// before its result comes on out: its matches are printed as the
	// search goes, and never all held (flushAt).
	part    chan FileResult
	results []FileResult // kept for the next use of the job
}

const grepBatch = 16

// Grep searches files and directory trees. Directories are walked in path
// order with ignore rules; files are searched on every core and reported
// in path order. A file named explicitly is searched even if ignored or
// hidden, and a binary one is searched (its matches without text).
//
// It runs in three stages: walk (one goroutine lists the files in path
// order, in batches), search (a worker per core searches a batch) and
// collect (this goroutine takes the batches back in order, applies the
// limits and hands results to the sink). Once ctx is done no file is
// opened or read: past its deadline, what collect took by then is the
// result (truncated, limit "timeout"), returned without waiting for a
// worker still in a read (SPEC §5: by the deadline + 100 ms); cancelled,
// ctx's error is returned.
func Grep(ctx context.Context, sb *sandbox.Sandbox, o GrepOptions) (GrepResult, error) {
	if err := begin(ctx, sb, "grep"); err != nil {
		return GrepResult{}, err
	}
	if o.Before < 0 || o.After < 0 || (o.MaxCount != nil && *o.MaxCount < 0) || o.Limit < 0 {
		return GrepResult{}, usagef("", "context, max-count and limit must be 0 or more")
	}
	if o.OnlyMatching {
		o.Before, o.After = 0, 0 // -o prints no context, as grep
	}
	g := &grepRun{ctx: ctx, sb: sb, o: &o, stop: make(chan struct{}), done: make(chan struct{})}
	defer close(g.done)
	if err := g.compile(); err != nil {
		return GrepResult{}, err
	}
	if len(o.Paths) == 0 {
		o.Paths = []string{"."}
	}
	if o.MaxCount != nil && *o.MaxCount == 0 {
		// -m 0: no line of any file, so no file is read (GNU grep, rg);
		// the paths are still checked, each on its own (SPEC §2).
		var pe PathErrors
		for _, p := range o.Paths {
			if p == sandbox.StdinPath {
				continue
			}
			if _, err := statFollow(sb, p); err != nil {
				pe.add(sb, p, err, true)
			}
		}
		if err := pe.end(len(o.Paths)); err != nil {
			return GrepResult{}, err
		}
		g.order = make(chan *grepJob)
		close(g.order)
		res := g.collect()
		res.PathErrors = pe
		return res, nil
	}
	ahead := grepAhead
	if g.smallPage() {
		ahead = grepFrugal // a page: little is wanted, so little is searched ahead of it
	}
	g.ahead = sandbox.FrugalSlots(ahead, grepFrugal, g.done)
	g.walked = make(chan struct{})
	g.jobs = make(chan *grepJob, 16)
	g.order = make(chan *grepJob, 64)
	// Jobs go round: every fresh byte costs a page fault, so a job and its
	// slices are used again once their results are reported.
	g.free = make(chan *grepJob, cap(g.jobs)+cap(g.order)+runtime.GOMAXPROCS(0)+1)
	go g.walk()
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.search()
		}()
	}
	res := g.collect()
	if g.late {
		// Cut at the deadline: the workers and the walk finish on their
		// own (each stops at its next check of ctx; one stuck in the
		// kernel, when it returns), and what they still hand over is
		// released, never printed.
		go g.drain(g.pending)
		if err := res.PathErrors.end(len(o.Paths)); err != nil {
			return GrepResult{}, err
		}
		return res, nil
	}
	wg.Wait()
	if g.sinkErr == nil && timedOut(ctx, ctx.Err()) {
		// The deadline passed as the queue ran out (collect took the
		// closed queue first): what it took is the result, cut there.
		g.cutByDeadline(&res)
		if err := res.PathErrors.end(len(o.Paths)); err != nil {
			return GrepResult{}, err
		}
		return res, nil
	}
	switch {
	case g.walkErr != nil:
		return GrepResult{}, g.walkErr
	case g.sinkErr != nil:
		return GrepResult{}, g.sinkErr
	}
	if err := ctx.Err(); err != nil {
		return GrepResult{}, err
	}
	if err := res.PathErrors.end(len(o.Paths)); err != nil {
		return GrepResult{}, err // a malformed path, or every path failed: the call fails as a whole
	}
	return res, nil
}

// grepRun is one call of Grep: its options, compiled, and the channels
// between its stages.
type grepRun struct {
	ctx        context.Context
	sb         *sandbox.Sandbox
	o          *GrepOptions
	s          *searcher
	incl, excl globMatcher
	// pg cuts the list: at max_results (or --limit), counted in matching
	// lines (-o's several matches of a line are one), and at
	// max_result_bytes, counted in every item's JSON.
	pg pager
	// rs searches the cursor's file on a resumed page: it leaves out the
	// items the page before gave (nil: no such file).
	rs *searcher
	// countAll: a counting mode (-c, -l) under the policy's max_results,
	// which caps the items listed (counts[], paths[]) while the numbers
	// count everything (SPEC §2, Counts).
	countAll    bool
	listCut     bool    // under countAll: the list is cut, the counting goes on
	pos         grepPos // the last item given (at first, the input cursor's)
	jobs, order chan *grepJob
	ahead       chan struct{} // a slot for every job not yet searched (send)
	done        chan struct{} // closed when Grep returns
	free        chan *grepJob
	stop        chan struct{} // closed by collect when it wants no more
	walkErr     error         // set by walk before it closes order
	walked      chan struct{} // closed when walk returns: its counts are then whole
	late        bool          // collect stopped at the call's deadline
	pending     *grepJob      // the job collect was taking then, for drain
	sinkErr     error
	skipped     GrepSkipped // walk's counts (read by collect after order closes)
	readDenied  int64       // walked files that could not be opened
	readErrors  int64       // or read
	stopped     bool
	skipDir     bool   // keep left out a directory: walk skips it
	noted       string // the last file said to be binary
}

// compile builds the matcher, the globs and the limits.
func (g *grepRun) compile() error {
	o := g.o
	patterns := o.Patterns
	if o.Patterns == nil {
		patterns = []string{o.Pattern}
	}
	m, err := newMatcherOf(patterns, o.Fixed, o.IgnoreCase, o.Word, o.LineRegexp)
	if err != nil {
		return err
	}
	var incl, excl []string
	for _, p := range o.Globs {
		if len(p) > 0 && p[0] == '!' {
			excl = append(excl, p[1:])
		} else {
			incl = append(incl, p)
		}
	}
	if g.incl, err = newGlobs(incl); err != nil {
		return err
	}
	if g.excl, err = newGlobs(excl); err != nil {
		return err
	}
	g.pg = newPager(g.sb, o.Limit)
	max := g.pg.max
	s := &searcher{ctx: g.ctx, m: m, o: o, cut: lineCut(g.sb, o.Exact), rawOnly: o.Exact && o.Sink != nil,
		before: int(min(int64(o.Before), max)), after: int(min(int64(o.After), max))}
	if o.MaxCount != nil {
		s.perFile = *o.MaxCount
	}
	g.countAll = (o.Count || o.FilesWithMatches) && g.pg.capName == "max_results"
	switch {
	case g.countAll && o.MaxCount == nil:
		s.perFile = math.MaxInt64
	case g.countAll:
	case o.MaxCount == nil || s.perFile > satAdd(max, 1):
		s.perFile = satAdd(max, 1)
	}
	if o.FilesWithMatches {
		s.perFile = 1
	}
	s.geom = mapGeom
	if o.geom != nil {
		s.geom = *o.geom
		if s.geom.huge == 0 {
			s.geom.huge = mapGeom.huge
		}
	}
	g.s = s
	if c := o.From; c != nil {
		g.pos = grepPos{c: *c}
		if !o.Count && !o.FilesWithMatches && (c.N > 0 || c.Skip > 0) {
			// The cursor's file is searched from its start (its lines
			// before the cursor decide -m and the context) by a searcher
			// that drops the items given already (up to item Skip of line
			// N), and may take N more lines than a file's share.
			rs := *s
			rs.drop = &grepDrop{line: c.N, skip: c.Skip, id: c.ID, whole: s}
			rs.perFile = satAdd(s.perFile, c.N)
			if o.MaxCount != nil {
				rs.perFile = min(rs.perFile, *o.MaxCount)
			}
			g.rs = &rs
		}
	}
	return nil
}

func (g *grepRun) newJob() *grepJob {
	select {
	case j := <-g.free:
		return j
	default:
		return &grepJob{out: make(chan []FileResult, 1), part: make(chan FileResult)}
	}
}

// send queues a job for a worker and for collect; false once collect has
// stopped (the job's entries are released). A job holds its entries'
// directories open until it is searched, so the jobs not yet searched are
// counted (g.ahead): few until the descriptor table has grown (see
// sandbox.GrowDescriptors), as the walk's own read-ahead is.
func (g *grepRun) send(j *grepJob) bool {
	select {
	case g.ahead <- struct{}{}:
	default:
		if !g.smallPage() {
			sandbox.GrowDescriptors() // the queue is full: a large search
		}
		select {
		case g.ahead <- struct{}{}:
		case <-g.stop:
			for _, e := range j.entries {
				e.Release()
			}
			return false
		}
	}
	select {
	case g.order <- j:
	case <-g.stop:
		for _, e := range j.entries {
			e.Release()
		}
		<-g.ahead
		return false
	}
	g.jobs <- j
	return true
}

// grepAhead is how many jobs may wait to be searched; grepFrugal, until
// the descriptor table has grown, and for a small page.
const grepAhead, grepFrugal = 80, 4

// smallPage: the list stops early (a byte budget or item cap a context
// window sets, not a bound on a whole search), so whatever the workers
// search ahead of the cut is waste: they stay a few batches ahead.
func (g *grepRun) smallPage() bool {
	return !g.countAll && (g.pg.budget <= 1<<20 || g.pg.max <= 4096)
}

// walk is the first stage: it lists the files of every path in path
// order, in batches of grepBatch, and queues them.
func (g *grepRun) walk() {
	defer close(g.order)
	defer close(g.jobs)
	defer close(g.walked)
	o, sb := g.o, g.sb
	from := o.From
	pending := g.newJob()
	flush := func() bool {
		if len(pending.entries) == 0 {
			return true
		}
		j := pending
		pending = g.newJob()
		pending.arg = j.arg
		return g.send(j)
	}
	for i, p := range o.Paths {
		// at: the argument the cursor is in (the ones before it are done).
		at := from != nil && int64(i) == from.Arg
		if from != nil && int64(i) < from.Arg {
			continue
		}
		pending.arg = i
		// named: a file named by the argument itself, on a resumed page:
		// skipped when the cursor is past it, searched by g.rs when the
		// cursor is in it.
		named := func(j *grepJob) bool {
			if !at {
				return true
			}
			switch {
			case from.Key != "": // a position inside it: it sorts before
				return false
			case from.N == 0 && from.Skip == 0: // nothing of it given
			case o.Count || o.FilesWithMatches: // given whole
				return false
			default:
				j.resume = 1
			}
			return true
		}
		if p == sandbox.StdinPath {
			j := g.newJob()
			j.file, j.arg = p, i
			if !named(j) {
				continue
			}
			if !g.send(j) {
				return
			}
			continue
		}
		info, err := sb.Lstat(p)
		if err == nil && info.Type == "symlink" {
			info, err = statFollow(sb, p)
		}
		if err == nil && info.Type == "other" {
			err = &sandbox.Error{Code: sandbox.CodeDenied, Rule: sandbox.RuleSpecialFile, Path: p,
				Msg: p + " is a special file; FIFOs, sockets and devices are never opened"}
		}
		if err != nil {
			// One bad path never sinks the rest: it is reported in its
			// place (SPEC §2), after what came before it.
			if !flush() {
				return
			}
			j := g.newJob()
			j.file, j.err, j.arg = p, err, i
			if !g.send(j) {
				return
			}
			continue
		}
		if info.Type != "dir" {
			j := g.newJob()
			j.file, j.arg = p, i
			if !named(j) {
				continue
			}
			if !g.send(j) {
				return
			}
			continue
		}
		// In the cursor's argument, the walk resumes at the cursor's
		// file (Key): After, Key's directory, spares the walk the
		// directories before it; what is left before Key in that
		// directory is passed over here, unopened, in walk order
		// (sandbox.WalkCompare), and Key itself is searched again when
		// the cursor is in it (listing modes) or passed (-c, -l).
		key, after := "", ""
		if at {
			key = from.Key
			if k := strings.LastIndexByte(key, '/'); k > 0 {
				after = key[:k]
			}
		}
		var flushErr bool
		waiting := func() {
			// The walk may wait here (a directory not listed yet): the
			// files it found go to the search now, not when a batch
			// fills, so a hang is no reason to hold them past the
			// deadline.
			if !flushErr && len(pending.entries) > 0 && !flush() {
				flushErr = true
			}
		}
		ws, err := sb.Walk(g.ctx, p, sandbox.WalkOptions{Hidden: o.Hidden, NoIgnore: o.NoIgnore, Follow: o.Follow, MaxDepth: -1, Waiting: waiting, After: after},
			func(e *sandbox.Entry) error {
				if flushErr {
					e.Release()
					return errStop
				}
				resume := false
				if key != "" {
					switch c := sandbox.WalkCompare(e.Rel, key); {
					case c < 0:
						e.Release()
						if e.Type == "dir" && !(strings.HasPrefix(key, e.Rel) && key[len(e.Rel)] == '/') {
							return sandbox.SkipDir // wholly before the cursor
						}
						return nil
					case c == 0 && e.Type != "dir":
						key = "" // every entry after it is after the cursor
						switch {
						case from.N == 0 && from.Skip == 0:
						case o.Count || o.FilesWithMatches:
							e.Release()
							return nil
						default:
							resume = true
						}
					case c > 0:
						key = ""
					}
				}
				if !g.keep(e) {
					e.Release()
					if e.Type == "dir" && g.skipDir {
						g.skipDir = false
						return sandbox.SkipDir
					}
					return nil
				}
				if resume {
					pending.resume = len(pending.entries) + 1
				}
				pending.entries = append(pending.entries, e)
				if len(pending.entries) == grepBatch && !flush() {
					return errStop
				}
				return nil
			})
		g.skipped.WalkSkipped.Add(ws)
		if err == nil && (flushErr || !flush()) {
			err = errStop
		}
		if err != nil {
			for _, e := range pending.entries {
				e.Release()
			}
			pending.entries = pending.entries[:0]
			if errors.Is(err, errStop) || g.ctx.Err() != nil {
				if !errors.Is(err, errStop) {
					g.walkErr = err
				}
				return
			}
			j := g.newJob() // the directory could not be walked: its error in its place
			j.file, j.err, j.arg = p, err, i
			if !g.send(j) {
				return
			}
		}
	}
}

// keep decides whether a walked entry is searched, counting what it
// leaves out; an excluded directory sets skipDir.
func (g *grepRun) keep(e *sandbox.Entry) bool {
	sk := &g.skipped
	switch {
	case e.Type == "dir":
		if len(g.excl) > 0 && g.excl.match(e.Rel, true) {
			sk.Globbed++
			g.skipDir = true
		}
		return false
	case e.Type == "symlink":
		sk.Symlinks++
	case e.Type == "other":
		sk.Special++
	case (len(g.excl) > 0 && g.excl.match(e.Rel, false)) || (len(g.incl) > 0 && !g.incl.match(e.Rel, false)):
		sk.Globbed++
	default:
		return true
	}
	return false
}

// search is the second stage, one per core: it searches each batch and
// hands the results back on the job's own channel.
func (g *grepRun) search() {
	buf := make([]byte, searchBuf)
	var f sandbox.File // reused: opening a walked file allocates nothing
	for j := range g.jobs {
		out := slices.Grow(j.results[:0], len(j.entries)+1)[:len(j.entries)]
		if g.halted() {
			// Collect wants no more (a limit cut the list): what is
			// still queued is let go unsearched, so the page is printed
			// without paying for the read-ahead.
			for _, e := range j.entries {
				e.Release()
			}
			<-g.ahead
			j.out <- out
			continue
		}
		switch {
		case j.err != nil:
			out = append(out, FileResult{err: j.err, given: j.file})
		case j.file != "":
			s := g.s
			if j.resume == 1 && g.rs != nil {
				s = g.rs
			}
			out = append(out, s.searchFile(g.sb, j.file, &buf, g.flusher(j)))
			out[len(out)-1].arg = j.arg
		}
		for i, e := range j.entries {
			s, rel := g.s, e.Rel // e is released by the search
			if j.resume == i+1 && g.rs != nil {
				s = g.rs
			}
			s.searchEntry(e, &f, &out[i], &buf)
			out[i].arg, out[i].rel = j.arg, rel
		}
		<-g.ahead // searched: its directories are released
		j.out <- out
	}
}

// flushAt is how many matches of one named file are held before they go
// to collect.
const flushAt = 4096

// flusher hands a named file's matches so far to collect, which takes
// them once the files before it are done; false once collect wants no
// more (the search then stops).
func (g *grepRun) flusher(j *grepJob) func(fr *FileResult) bool {
	if g.o.Sink == nil {
		return nil // the result collects every match anyway
	}
	return func(fr *FileResult) bool {
		fr.arg = j.arg
		select {
		case j.part <- *fr:
			return true
		case <-g.stop:
			fr.release()
			return false
		}
	}
}

// halted reports whether collect has stopped taking results.
func (g *grepRun) halted() bool {
	select {
	case <-g.stop:
		return true
	default:
		return false
	}
}

func (g *grepRun) halt(err error) {
	if !g.stopped {
		g.sinkErr, g.stopped = err, true
		close(g.stop)
	}
}

// collect is the last stage: it takes the batches back in path order,
// counts, applies max_results (or limit) and feeds the sink or the result.
func (g *grepRun) collect() GrepResult {
	o := g.o
	res := GrepResult{Pattern: o.Pattern}
	switch {
	case o.Count:
		res.Counts = &[]FileCount{}
	case o.FilesWithMatches:
		res.Paths = &[]string{}
	default:
		res.Matches = &[]Match{}
	}
	// The deadline: collect takes nothing more and returns (timeUp).
	// A cancel is heard by take, as before: the search stops and its
	// error is the call's.
	deadline := g.ctx.Done()
	for !g.late {
		var j *grepJob
		select {
		case next, ok := <-g.order:
			if !ok {
				res.Skipped = g.skipped
				res.Skipped.Denied += g.readDenied
				res.Skipped.Errors += g.readErrors
				return res
			}
			j = next
		case <-deadline:
			if !g.timeUp(&res) {
				deadline = nil
			}
			continue
		}
		var out []FileResult
	parts:
		for {
			select {
			case fr := <-j.part: // a named file's matches so far
				if !g.stopped {
					g.take(&res, &fr)
				}
				fr.release()
			case out = <-j.out:
				break parts
			case <-deadline:
				if !g.timeUp(&res) {
					deadline = nil
				}
			}
			if g.late {
				g.pending = j // its results are drain's
				return g.cutShort(res)
			}
		}
		for i := range out {
			if !g.stopped {
				g.take(&res, &out[i])
			}
			out[i].release() // printed, or never to be
		}
		clear(out)
		clear(j.entries)
		j.results, j.entries, j.file, j.err, j.arg, j.resume = out[:0], j.entries[:0], "", nil, 0, 0
		select {
		case g.free <- j:
		default:
		}
	}
	return g.cutShort(res)
}

// timeUp is collect's answer to ctx ending: past the call's deadline the
// result is cut there (limit "timeout", unless a limit cut it first) and
// collect takes no more (late); true. A cancel is no cut: false.
func (g *grepRun) timeUp(res *GrepResult) bool {
	if !timedOut(g.ctx, g.ctx.Err()) {
		return false
	}
	if !g.late {
		g.late = true
		g.cutByDeadline(res)
		g.halt(nil) // the walk and the named files' flushers stop handing over
	}
	return true
}

// grepWalkGrace is how long a search cut at the deadline waits for its
// walk to stop (it checks ctx between entries), so that its skipped
// counts are whole; a walk stuck in the kernel leaves them out.
const grepWalkGrace = 20 * time.Millisecond

// cutShort ends collect at the deadline: the counts are those of the
// files taken, and the walk's when it stopped within grepWalkGrace.
func (g *grepRun) cutShort(res GrepResult) GrepResult {
	walked := g.walked == nil // -m 0 runs no walk
	if !walked {
		t := time.NewTimer(grepWalkGrace)
		select {
		case <-g.walked:
			walked = true
		case <-t.C:
		}
		t.Stop()
	}
	if walked {
		res.Skipped = g.skipped // walk's counts: final once walked is closed
	} else {
		res.Skipped = GrepSkipped{Binary: g.skipped.Binary} // only collect's own
	}
	res.Skipped.Denied += g.readDenied
	res.Skipped.Errors += g.readErrors
	return res
}

// drain takes what the stages still hand over after a cut at the
// deadline, releasing it unprinted (its mappings, its directories), until
// the walk has closed the queue.
func (g *grepRun) drain(j *grepJob) {
	if j != nil {
		g.drainJob(j)
	}
	for j := range g.order {
		g.drainJob(j)
	}
}

func (g *grepRun) drainJob(j *grepJob) {
	for {
		select {
		case fr := <-j.part:
			fr.release()
		case out := <-j.out:
			for i := range out {
				out[i].release()
			}
			return
		}
	}
}

// take adds one file's result.
func (g *grepRun) take(res *GrepResult, fr *FileResult) {
	o := g.o
	switch {
	case g.ctx.Err() != nil:
		if !g.timeUp(res) {
			g.halt(g.ctx.Err()) // cancelled: the call's error
		}
		return
	case fr.skipped:
		if fr.skipErr != nil && sandbox.AsError(fr.skipErr).Code == sandbox.CodeDenied {
			g.readDenied++
		} else if fr.skipErr != nil {
			g.readErrors++
		}
		return
	case fr.err != nil:
		res.PathErrors.add(g.sb, fr.given, fr.err, !fr.walked)
		return
	}
	if !fr.part {
		res.FilesSearched++
	}
	if fr.Binary && !fr.named {
		g.skipped.Binary++ // a walk skips a binary file
		return
	}
	if fr.cutLines > 0 {
		res.notes = append(res.notes, cutLinesNote(fr))
	}
	if fr.restarted && fr.prior == 0 {
		res.Restarted = true
		g.pos.c.N, g.pos.c.Skip = 0, 0 // its lines count from its start again
	}
	if fr.Count == 0 {
		return
	}
	if fr.Binary && !o.Count && !o.FilesWithMatches {
		res.binary = true
		if g.noted != fr.Path { // once a file, whatever parts it came in
			g.noted = fr.Path
			res.notes = append(res.notes, grepName(fr.Path)+": binary file matches")
		}
	}
	if g.countAll {
		// Every file is counted; only the list stops at its cut.
		res.Count += fr.Count
		res.FilesMatched++ // -c and -l send no parts
		if g.listCut {
			return
		}
		if limit := g.pg.admit(g.fileItemLen(fr)); limit != "" {
			g.listCut = true
			res.cut(limit, g.nextCursor())
			return
		}
		g.givenFile(fr)
		g.list(res, fr)
		return
	}
	if o.Count || o.FilesWithMatches {
		// Under --limit: the cap counts matching lines (-c's counts in
		// all), the byte budget the items; the search stops at the cut.
		limit := ""
		switch {
		case g.pg.n >= g.pg.max:
			limit = g.pg.capName
		case g.pg.n > 0 && g.fileItemLen(fr)+1 > g.pg.budget-g.pg.used:
			limit = "max_result_bytes"
		}
		if limit == "" && g.pg.n+fr.Count > g.pg.max {
			fr.Count = g.pg.max - g.pg.n
			limit = g.pg.capName
		} else if limit != "" {
			fr.Count = 0
		}
		if fr.Count > 0 {
			g.pg.n += fr.Count
			g.pg.used += g.fileItemLen(fr) + 1
			res.Count += fr.Count
			res.FilesMatched++
			g.givenFile(fr)
			g.list(res, fr)
		}
		if limit != "" {
			res.cut(limit, g.nextCursor())
			g.halt(nil)
		}
		return
	}
	// Listing: each match is an item, admitted in order; a line's first
	// counts against the cap (-o's matches of one line are one line).
	// Each file is searched for up to max+1 lines, so a cut is only
	// reported when something really was left out.
	limit, cut := "", len(fr.Matches)
	for i := range fr.Matches {
		m := &fr.Matches[i]
		size := g.s.itemLen(m)
		switch {
		case g.pg.n > 0 && !m.Binary && g.sameLine(fr, m):
			// Another item of the line given last (-o): bytes only.
			if g.pg.n > 0 && size+1 > g.pg.budget-g.pg.used {
				limit = "max_result_bytes"
			} else {
				g.pg.used += size + 1
			}
		default:
			limit = g.pg.admit(size)
		}
		if limit != "" {
			cut = i
			break
		}
		g.given(fr, m)
	}
	if limit != "" {
		fr.Matches = fr.Matches[:cut]
		fr.Count = linesOf(fr.Matches)
		res.cut(limit, g.nextCursor())
		if fr.Count == 0 {
			g.halt(nil)
			return
		}
	}
	res.Count += fr.Count
	if fr.prior == 0 {
		res.FilesMatched++ // its first matches
	}
	g.list(res, fr)
	if limit != "" {
		g.halt(nil)
	}
}

// grepPos is the last item a page gave, for its next_cursor: the
// cursor's position, with its file's identity (ID is made only at the
// cut).
type grepPos struct {
	c           Cursor
	size, mtime int64
	key         [2]uint64
	identified  bool // size and mtime say the file's identity (else c.ID does)
}

// fileID is a file's identity in a cursor: its device, inode, size and
// modification time when opened (size and mtime are what grep's "changed
// while read" check compares); a stream has none.
func fileID(size, mtime int64, key [2]uint64, stream bool) string {
	if stream {
		return ""
	}
	return strconv.FormatUint(key[0], 36) + ":" + strconv.FormatUint(key[1], 36) + ":" +
		strconv.FormatInt(size, 36) + ":" + strconv.FormatInt(mtime, 36)
}

// given records that m, an item of fr, is on the page.
func (g *grepRun) given(fr *FileResult, m *Match) {
	p := &g.pos
	switch {
	case m.Binary:
		// A binary file's line is one item, whatever -o found in it.
		p.c.Skip = math.MaxInt64
	case g.sameLine(fr, m):
		p.c.Skip++
	default:
		p.c.Skip = 1
	}
	p.c.Arg, p.c.Key, p.c.N = int64(fr.arg), fr.rel, m.Line
	p.size, p.mtime, p.key, p.identified = fr.size, fr.mtime, fr.key, !fr.stream
	if fr.stream {
		p.c.ID = ""
	}
}

// sameLine reports whether m is of the line the last item given is of.
func (g *grepRun) sameLine(fr *FileResult, m *Match) bool {
	p := &g.pos.c
	return p.N == m.Line && p.Skip > 0 && p.Arg == int64(fr.arg) && p.Key == fr.rel
}

// givenFile records that fr's item (-c, -l) is on the page: the position
// is the file's.
func (g *grepRun) givenFile(fr *FileResult) {
	g.pos = grepPos{c: Cursor{Arg: int64(fr.arg), Key: fr.rel, Skip: 1}}
}

// nextCursor is the next_cursor of a cut now: after the last item given
// (or where the page began, when it gave none).
func (g *grepRun) nextCursor() string {
	c := g.pos.c
	if g.pos.identified {
		c.ID = fileID(g.pos.size, g.pos.mtime, g.pos.key, false)
	}
	return g.o.next(c)
}

// cutByDeadline cuts res at the deadline (unless a limit cut it first):
// the next page starts after the last item given.
func (g *grepRun) cutByDeadline(res *GrepResult) {
	if !res.Truncated {
		cutByDeadline(&res.Truncation)
		res.NextCursor = g.nextCursor()
	}
}

// linesOf is how many lines ms's matches are of.
func linesOf(ms []Match) int64 {
	n := int64(0)
	for i := range ms {
		if i == 0 || ms[i].Line != ms[i-1].Line {
			n++
		}
	}
	return n
}

// fileItemLen is the JSON length of fr's item in -c (a count) or -l (a
// path).
func (g *grepRun) fileItemLen(fr *FileResult) int64 {
	if g.o.Count {
		return FileCount{Path: fr.Path, Count: fr.Count}.jsonLen()
	}
	return jsonStrLen(fr.Path)
}

// itemLen is the size of a match as an item of the result: its JSON
// length, or in the text form (whose items hold no JSON text) about the
// length of its lines.
func (s *searcher) itemLen(m *Match) int64 {
	if s.rawOnly && !m.Binary {
		n := int64(len(m.Path) + len(m.Raw) + 40)
		for _, c := range m.BeforeRaw {
			n += int64(len(m.Path) + len(c.Raw) + 20)
		}
		for _, c := range m.AfterRaw {
			n += int64(len(m.Path) + len(c.Raw) + 20)
		}
		return n
	}
	return m.jsonLen()
}

// jsonLen is the length of m's JSON as the result prints it (a binary
// file's match as binaryMatch), computed without marshalling it: the
// fields in Match's order, with its omitempty rules.
func (m *Match) jsonLen() int64 {
	if m.Binary {
		// {"path":P,"line":L,"binary":true}
		return 8 + jsonStrLen(m.Path) + 8 + intLen(m.Line) + 14 + 1
	}
	// {"path":P,"line":L,"column":C,"text":T}
	n := 8 + jsonStrLen(m.Path) + 8 + intLen(m.Line) + 10 + intLen(int64(m.Column)) + 8 + jsonStrLen(m.Text) + 1
	if m.TextTruncated {
		n += 22 // ,"text_truncated":true
	}
	if m.TextBytes != 0 {
		n += 14 + intLen(int64(m.TextBytes)) // ,"text_bytes":N
	}
	if m.TextOffset != 0 {
		n += 15 + intLen(int64(m.TextOffset)) // ,"text_offset":N
	}
	if len(m.Before) > 0 {
		n += 10 + jsonRowLen(m.Before) // ,"before":[...]
	}
	if len(m.After) > 0 {
		n += 9 + jsonRowLen(m.After) // ,"after":[...]
	}
	if m.ContextTruncated {
		n += 25 // ,"context_truncated":true
	}
	return n
}

// jsonLen is the length of c's JSON.
func (c FileCount) jsonLen() int64 {
	// {"path":P,"count":N}
	return 8 + jsonStrLen(c.Path) + 9 + intLen(c.Count) + 1
}

// intLen is the length of n in decimal.
func intLen(n int64) int64 {
	l := int64(1)
	if n < 0 {
		l++
		if n == math.MinInt64 {
			return 20
		}
		n = -n
	}
	for n >= 10 {
		n /= 10
		l++
	}
	return l
}

// list sends one file's findings to the sink, or collects them.
func (g *grepRun) list(res *GrepResult, fr *FileResult) {
	o := g.o
	if o.Sink != nil {
		var err error
		if len(fr.held) > 0 {
			// Lines printed from a mapping: a file truncated since
			// faults, which GuardFaults makes an error.
			err = sandbox.GuardFaults(fr.Path, func() error { return o.Sink(fr) })
		} else {
			err = o.Sink(fr)
		}
		if err != nil {
			g.halt(err)
		}
		return
	}
	switch {
	case o.Count:
		*res.Counts = append(*res.Counts, FileCount{Path: fr.Path, Count: fr.Count})
	case o.FilesWithMatches:
		*res.Paths = append(*res.Paths, fr.Path)
	default:
		*res.Matches = append(*res.Matches, fr.Matches...)
	}
}

func statFollow(sb *sandbox.Sandbox, p string) (sandbox.Info, error) {
	d, err := sb.OpenDir(p)
	if err == nil {
		defer d.Close()
		return d.Info, nil
	}
	if sandbox.AsError(err).Code == sandbox.CodeDenied {
		return sandbox.Info{}, err // a link to a denied directory: say so, not "not a file"
	}
	f, err := sb.Open(p)
	if err != nil {
		return sandbox.Info{}, err
	}
	defer f.Close()
	return f.Info, nil
}

// searcher searches one file at a time; it is shared by the workers and
// holds no per-file state.
type searcher struct {
	ctx     context.Context
	m       *matcher
	o       *GrepOptions
	perFile int64
	cut     int // where JSON text ends (lineCut); 0: whole
	// rawOnly: the face prints Raw (the text form's sink): no JSON text
	// is built, and a long line in a mapping stays mapped until printed
	// rather than be copied.
	rawOnly bool
	// before and after are -B and -A, at most max_results lines each: a
	// context list never holds more lines than a result may.
	before, after int
	geom          mapGeometry // mapped search's windows
	// drop, on a resumed page, is the cursor's place in its file: this
	// searcher (a copy made for that one file) leaves out the items up
	// to it. nil: none.
	drop *grepDrop
}

// grepDrop is where in its file a cursor resumes: after item skip of
// line line. The file is searched from its start, so that -m counts and
// the context lines are those of the whole search, and the items up to
// the cursor are dropped as they are found (at most one line's are held
// at a time); a file whose identity is not id (it changed) is searched
// by whole, as a new file.
type grepDrop struct {
	line, skip int64
	id         string
	whole      *searcher
}

// binary reports whether b makes its file binary: a NUL byte, unless -a
// (--text) searches every file as text.
func (s *searcher) binary(b []byte) bool {
	return !s.o.Text && bytes.IndexByte(b, 0) >= 0
}

// searchEntry searches a walked file into fr, through f (closed, and
// reused from one file to the next).
func (s *searcher) searchEntry(e *sandbox.Entry, f *sandbox.File, fr *FileResult, buf *[]byte) {
	if err := s.ctx.Err(); err != nil {
		e.Release()
		*fr = FileResult{skipped: true} // never opened: collect returns the context's error
		return
	}
	err := e.OpenInto(f)
	e.Release()
	if err != nil {
		*fr = FileResult{skipped: true, skipErr: err} // raced away, or denied on a closer look
		return
	}
	fr.Path = f.Info.Path
	fr.size, fr.mtime, fr.key = f.Info.Size, f.Info.ModTime.UnixNano(), f.Info.Key()
	if s.drop != nil && s.drop.id != fileID(fr.size, fr.mtime, fr.key, false) {
		fr.restarted = true // changed since the cursor was made
		s = s.drop.whole
	}
	err = s.searchOpen(f, f.Info.Size, fr, buf)
	f.Close()
	switch {
	case err != nil && sandbox.AsError(err).Code == sandbox.CodeConflict:
		// Changed while read: reported in errors[], not counted away.
		*fr = FileResult{err: err, given: fr.Path, walked: true}
	case err != nil:
		*fr = FileResult{skipped: true, skipErr: err}
	}
}

func (s *searcher) searchFile(sb *sandbox.Sandbox, path string, buf *[]byte, flush func(*FileResult) bool) FileResult {
	if err := s.ctx.Err(); err != nil {
		return FileResult{err: err}
	}
	f, err := openInput(sb, path)
	if err != nil {
		return FileResult{err: err, given: path}
	}
	defer f.Close()
	fr := FileResult{Path: f.Info.Path, named: true, flush: flush, size: f.Info.Size, mtime: f.Info.ModTime.UnixNano(), key: f.Info.Key(), stream: f.Stream()}
	if s.drop != nil && s.drop.id != fileID(fr.size, fr.mtime, fr.key, fr.stream) {
		fr.restarted = true // changed since the cursor was made
		s = s.drop.whole
	}
	size := f.Info.Size
	if size < 0 {
		size = math.MaxInt64 // standard input: read to its end
	}
	if err := s.searchOpen(f, size, &fr, buf); err != nil {
		if e := sandbox.AsError(err); e.Code == sandbox.CodeConflict && fr.prior > 0 {
			// Some of it was printed already.
			err = sandbox.Errorf(sandbox.CodeConflict, path, "%s changed while it was read: the lines given of it may mix two versions", path)
		}
		return FileResult{err: sandbox.AsError(err), given: path}
	}
	fr.binaryMatches()
	fr.Count -= fr.prior // the lines not sent in parts
	return fr
}

// binaryMatches gives a binary file's matches without their text.
func (fr *FileResult) binaryMatches() {
	if fr.Binary {
		// A binary file's matches say where, not what (SPEC §5): one a
		// line, with -o too.
		fr.release()
		ms := fr.Matches[:0]
		for _, m := range fr.Matches {
			if len(ms) == 0 || ms[len(ms)-1].Line != m.Line {
				ms = append(ms, Match{Path: fr.Path, Line: m.Line, Binary: true})
			}
		}
		fr.Matches = ms
	}
}

// sendPart hands fr's matches so far to collect when they are many and
// none waits for after-context; false when the search is to stop.
func (s *searcher) sendPart(fr *FileResult, lc *lineCtx) bool {
	if fr.flush == nil || len(fr.Matches) < flushAt || (lc != nil && lc.afterLeft > 0) {
		return true
	}
	s.dropGiven(fr)
	s.contextText(fr, lc != nil)
	fr.binaryMatches()
	part := FileResult{Path: fr.Path, Matches: fr.Matches, Count: fr.Count - fr.gone - fr.prior, Binary: fr.Binary, named: true, part: true, prior: fr.prior, held: fr.held,
		size: fr.size, mtime: fr.mtime, key: fr.key, stream: fr.stream, restarted: fr.restarted}
	fr.prior, fr.held, fr.Matches = fr.Count-fr.gone, nil, nil
	return fr.flush(&part)
}

// hold keeps win mapped until fr is released: a line the text form is to
// print lies in it.
func (fr *FileResult) hold(win *sandbox.Mapping) {
	if !fr.holds(win) {
		fr.held = append(fr.held, win)
	}
}

// holds reports whether win is the mapping fr took last.
func (fr *FileResult) holds(win *sandbox.Mapping) bool {
	n := len(fr.held)
	return n > 0 && fr.held[n-1] == win
}

// release unmaps what fr holds: its matches' Raw must not be read after.
func (fr *FileResult) release() {
	for _, w := range fr.held {
		w.Unmap()
	}
	fr.held = nil
}

// grepName is how grep names a file in a note: standard input is
// "<stdin>", as rg names it.
func grepName(path string) string {
	if path == sandbox.StdinPath {
		return "<stdin>"
	}
	return path
}

// cutLinesNote says that a stream's lines over textio.MaxLine were kept
// cut (SPEC §4, Hostile sizes).
func cutLinesNote(fr *FileResult) string {
	if fr.cutLines == 1 {
		return fmt.Sprintf("%s: line %d is longer than %d MiB: only its first %d MiB are given", grepName(fr.Path), fr.firstCut, textio.MaxLine>>20, textio.MaxLine>>20)
	}
	return fmt.Sprintf("%s: %d lines (the first: line %d) are longer than %d MiB: only the first %d MiB of each are given", grepName(fr.Path), fr.cutLines, fr.firstCut, textio.MaxLine>>20, textio.MaxLine>>20)
}

// GrepNamesOneFile reports whether paths name exactly one file (not a
// directory), in which case the text form leaves the path out, as grep does.
func GrepNamesOneFile(sb *sandbox.Sandbox, paths []string) bool {
	if len(paths) != 1 {
		return false
	}
	if paths[0] == sandbox.StdinPath {
		return true
	}
	info, err := statFollow(sb, paths[0])
	return err == nil && info.Type == "file"
}

// grepSink sends each searched file's findings: as items (its count,
// its path, or its matches, by the mode chosen once), or as grep's text
// form.
func grepSink(s any, sb *sandbox.Sandbox, in *spec.Input, o GrepOptions) func(*FileResult) error {
	switch s := s.(type) {
	case spec.ItemSink:
		switch {
		case o.Count:
			return func(fr *FileResult) error { return s(FileCount{Path: fr.Path, Count: fr.Count}) }
		case o.FilesWithMatches:
			return func(fr *FileResult) error { return s(fr.Path) }
		}
		return func(fr *FileResult) error {
			for i := range fr.Matches {
				var item any = &fr.Matches[i]
				if fr.Matches[i].Binary {
					item = binaryMatch(fr.Matches[i])
				}
				if err := s(item); err != nil {
					return err
				}
			}
			return nil
		}
	case spec.TextWriter:
		// Lines name their file unless one file is searched, as grep
		// does; -h and -H say otherwise.
		withPath := !GrepNamesOneFile(sb, o.Paths)
		switch {
		case in.Bool("no-filename"):
			withPath = false
		case in.Bool("with-filename"):
			withPath = true
		}
		t := &grepText{w: s, numbered: in.Bool("numbered"), context: (o.Before > 0 || o.After > 0) && !o.OnlyMatching,
			withPath: withPath, maxColumns: int(in.Int("max-columns")), painted: s.Paint("", spec.PaintMatch) != ""}
		switch {
		case o.Count:
			return func(fr *FileResult) error {
				t.prefix(fr.Path, 0, ':')
				s.WriteString(strconv.FormatInt(fr.Count, 10))
				return s.WriteByte('\n')
			}
		case o.FilesWithMatches:
			return func(fr *FileResult) error {
				s.WriteString(s.Paint(t.name(fr.Path), spec.PaintPath))
				return s.WriteByte('\n')
			}
		}
		return t.file
	}
	return nil
}

// Paints: grep's text form passes every name and line through the
// writer, and may colour paths, line numbers and matches.
func (r GrepResult) Paints() {}

// Notes are what the text form says on stderr after the output: that a
// binary file matches, as GNU grep says it, and that a stream's lines
// over textio.MaxLine were given cut.
func (r GrepResult) Notes() []string { return r.notes }

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

// Matched: grep exits 1 on the command line when nothing matched.
func (r GrepResult) Matched() bool { return r.Count > 0 }

// Silent: grep -q prints nothing.
func (r GrepResult) Silent() bool { return r.quiet }

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
		t.w.WriteByte(sep)
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
