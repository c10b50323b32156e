package ops

import (
	"cmp"
	"context"
	"io"
	"math"
	"strings"
	"sync"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

var grepOp = &spec.Op{
	Name: "grep", Class: spec.Read, Result: GrepResult{},
	Streams: true,
	Pages:   true,
	NoMatch: true,
	Summary: "search files and trees for an RE2 pattern, honouring .gitignore",
	Help:    "Searches each PATH (the workdir when none is given) for lines matching PATTERN, an RE2 regular expression. Directories are walked in path order, honouring .ignore everywhere and, inside a git repository (a .git in the tree, or above its root), .gitignore and .git/info/exclude, and leaving out hidden names; a file named on the command line is always searched, whatever its type or ignore rules. Binary files (a NUL byte) are skipped and counted in a walk; a binary file named on the command line is searched, its matching lines given without text (grep's \"binary file matches\"). No line is skipped however long: one past 256 KiB in a file is searched through a mapping (a literal passes it in one read), one past 16 MiB on a stream as it passes and given cut. A file of 32 MiB or more is searched through bounded windows mapped from the page cache, on every core; a file written over or truncated while it is read is a per-path conflict (one already being written when grep opens it can go unseen). \\w, \\d and \\s are Unicode classes, as rg's, and -w's word characters are \\w's; \\b, \\B and the POSIX classes ([[:word:]]) stay ASCII.",
	Args: []spec.Arg{
		{Name: "pattern", Meta: "PATTERN", Help: "an RE2 regular expression (a literal string with -F/--fixed-strings)", OmitWith: []string{"regexp", "file", "type-list"}},
		{Name: "paths", Meta: "PATH", Help: "files or directories to search; - is standard input (the default on the command line when stdin is a pipe or a file, else the workdir)", Use: sandbox.NeedReadAny, Many: true, Optional: true, Stdin: true, Complete: spec.CompleteFiles},
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
		noRequireGitOption,
		{Name: "follow", Short: "L", Type: spec.Bool, Help: "follow symlinks (never out of their root, never in a loop)"},
		{Name: "type", Short: "t", Type: spec.Strings, Meta: "NAME", Values: typeNames(), Help: "search only files of this type, by rg's type names: c, cpp, go, py, rust, js, ts, md, make, sh, ... (repeatable: any of them; --type-list lists them)"},
		typeNotOption,
		typeListOption,
		{Name: "null", Short: "0", Type: spec.Bool, CLIOnly: true, Help: "in the text form, follow each file name with a NUL byte in place of ':' or the newline (-l: one name a NUL), as grep -Z and rg -0"},
	},
	Examples: []spec.Example{
		{Cmd: "grep -n TODO . --format text", Says: "every TODO under the workdir, as grep -rn prints it"},
		{Cmd: "grep -t go -l TODO --format text", Says: "the Go sources that hold a TODO, by rg's type name, as rg -t go -l"},
		{Cmd: "grep -c -i todo src", Says: "matching lines per file, ignoring case"},
	},
	JSONNote:      "-c gives counts[{path, count}] and -l paths[] in place of matches; exit 1 when nothing matches",
	Text:          "path:line:text with -n, path:text without (no path for one named file, or with -h), context lines with '-', groups split by '--'; -c path:count; -l one path a line; colors on a terminal",
	StreamsUnless: []string{"type-list"},
	Paints:        true,
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		if in.Bool("type-list") {
			return TypeList(), nil
		}
		if err := beginWalk(ctx, sb, "grep"); err != nil {
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
		o.Idle = idleOf(in.Sink)
		return Grep(ctx, sb, o)
	},
}

// GrepInput turns a grep input into options (Run adds the face's sink).
func GrepInput(sb *sandbox.Sandbox, in *spec.Input) (GrepOptions, error) {
	o := GrepOptions{Text: in.Bool("text"), LineRegexp: in.Bool("line-regexp"), OnlyMatching: in.Bool("only-matching"), Pattern: in.String("pattern"), Paths: in.Strings("paths"), IgnoreCase: in.Bool("ignore-case"), Fixed: in.Bool("fixed-strings"),
		Word: in.Bool("word-regexp"), Invert: in.Bool("invert-match"), Count: in.Bool("count"), FilesWithMatches: in.Bool("files-with-matches"),
		Before: int(in.Int("before-context")), After: int(in.Int("after-context")), Limit: in.Int("limit"),
		Globs: in.Strings("glob"), Hidden: in.Bool("hidden"), NoIgnore: in.Bool("no-ignore"), NoRequireGit: in.Bool("no-require-git"), Follow: in.Bool("follow") || in.Bool("dereference-recursive"),
		Types: in.Strings("type"), TypesNot: in.Strings("type-not")}
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
				return o, fserr.AsError(err)
			}
			if int64(len(data)) > sb.Limits().MaxReadBytes {
				return o, fserr.Errorf(fserr.CodeTooLarge, in.String("file"), "the pattern file %s is over max_read_bytes = %d", in.String("file"), sb.Limits().MaxReadBytes)
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
	NoRequireGit     bool // --no-require-git: .gitignore applies outside a git repository too
	Follow           bool
	// Types and TypesNot (-t, -T) select walked files by rg's type names;
	// a file named on the command line is searched whatever its type.
	Types, TypesNot []string
	// Sink, when set, receives each file's result in path order instead
	// of the result collecting them (streaming output); Idle, when set,
	// is called (on Sink's goroutine) when the search is about to wait
	// for the next result: the face passes on what Sink wrote.
	Sink func(fr *FileResult) error
	Idle func()
	// Exact: Text and context lines are whole (the text form prints Raw);
	// otherwise they are cut at max_line_bytes.
	Exact bool
	// Paging is where the page starts (the call's --cursor) and how a
	// cut seals the next cursor (SPEC §2, Continuation).
	Paging

	geom   *mapGeometry                   // tests: where mapped search puts its chunk edges
	onTake func(rel string, listCut bool) // tests: called after collect took a walked file
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
	Pattern string       `json:"pattern"`
	Matches *[]Match     `json:"matches,omitempty" fsbox:"items"`
	Counts  *[]FileCount `json:"counts,omitempty" fsbox:"items"`
	Paths   *[]string    `json:"paths,omitempty" fsbox:"items"`
	Count   int64        `json:"count"`
	// Partial: the deadline stopped a counting mode (-c, -l): count,
	// the counts and files_searched are those of the files read to the
	// end, and next_cursor resumes at the first file not finished
	// (SPEC §2, Counts).
	Partial       bool        `json:"partial,omitempty"`
	FilesSearched int64       `json:"files_searched"`
	FilesMatched  int64       `json:"files_matched"`
	Skipped       GrepSkipped `json:"skipped"`
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
	if err := beginWalk(ctx, sb, "grep"); err != nil {
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
			if _, err := sb.Named(p); err != nil {
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
	if g.counting() && len(o.Paths) == 1 {
		g.typed = make(chan struct{})
	}
	g.jobs = make(chan *grepJob, 16)
	g.order = make(chan *grepJob, 64)
	// Jobs go round: every fresh byte costs a page fault, so a job and its
	// slices are used again once their results are reported.
	workers := g.sb.Parallelism(o.Paths...) // one per core; [store] concurrency on an object root
	g.free = make(chan *grepJob, cap(g.jobs)+cap(g.order)+workers+1)
	go g.walk()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.search()
		}()
	}
	res := g.collect()
	if g.late {
		// Cut at the deadline, or cancelled: the workers and the walk
		// finish on their own (each stops at its next check of ctx; one
		// stuck in the kernel, when it returns), and what they still
		// hand over is released, never printed.
		go g.drain(g.pending)
		if err := ctx.Err(); g.sinkErr != nil || !timedOut(ctx, err) {
			return GrepResult{}, cmp.Or(g.sinkErr, err)
		}
		return g.partial(res)
	}
	wg.Wait()
	res.notes = append(res.notes, g.walkNotes...) // the walk is done: collect took its closed queue
	if g.sinkErr == nil && timedOut(ctx, ctx.Err()) {
		// The deadline passed as the queue ran out (collect took the
		// closed queue first): what it took is the result, cut there.
		g.cutByDeadline(&res)
		return g.partial(res)
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

// partial is the result of a search the deadline cut: what collect
// took by then, unless the one path searched is a file, whose count
// would be of part of it: the call then fails with timeout (SPEC §2,
// Counts), as wc of one file does.
func (g *grepRun) partial(res GrepResult) (GrepResult, error) {
	if g.typed != nil {
		<-g.typed // the walk says what the path is before it reads it
		switch {
		case g.oneFile && res.FilesSearched == 0 && len(res.Errors) == 0:
			return GrepResult{}, g.ctx.Err()
		case g.oneFile:
			// Taken whole before the deadline was heard: nothing was cut.
			res.Truncation, res.Partial = Truncation{}, false
		}
	}
	if err := res.PathErrors.end(len(g.o.Paths)); err != nil {
		return GrepResult{}, err
	}
	return res, nil
}

// counting reports whether grep counts (-c, -l) rather than lists.
func (g *grepRun) counting() bool { return g.o.Count || g.o.FilesWithMatches }

// grepTally is a counting mode's numbers at one point of the search.
type grepTally struct{ count, searched, matched int64 }

// grepRun is one call of Grep: its options, compiled, and the channels
// between its stages.
type grepRun struct {
	ctx        context.Context
	sb         *sandbox.Sandbox
	o          *GrepOptions
	s          *searcher
	incl, excl globMatcher
	types      typeFilter // -t, -T
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
	countAll bool
	listCut  bool      // under countAll: the list is cut, the counting goes on
	atCut    grepTally // under countAll: the numbers of the files before the list's cut
	// typed, in a counting mode with one path, is closed by the walk once
	// it knows what the path is: oneFile, a file (or standard input)
	// rather than a directory.
	typed       chan struct{}
	oneFile     bool
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
	skipDir     bool     // keep left out a directory: walk skips it
	noted       string   // the last file said to be binary
	walkNotes   []string // set by walk (read once it is done): a tree ignore rules left empty
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
	if g.types, err = newTypeFilter(o.Types, o.TypesNot); err != nil {
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
