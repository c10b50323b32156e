package ops

import (
	"errors"
	"runtime"
	"slices"
	"sync"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// GrepOptions are grep's inputs.
type GrepOptions struct {
	Pattern          string
	Paths            []string // files or directories; default "."
	IgnoreCase       bool     // -i
	Fixed            bool     // -F
	Word             bool     // -w
	Invert           bool     // -v
	Count            bool     // -c: counts per file
	FilesWithMatches bool     // -l: paths only
	Before, After    int      // -B, -A (-C sets both)
	MaxCount         int64    // -m: matching lines per file; 0 = no limit
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
}

// Match is one matching line (or, with -v, one non-matching line).
type Match struct {
	Path   string `json:"path"`
	Line   int64  `json:"line"`
	Column int    `json:"column"` // 1-based byte column of the first match; 0 with -v
	Text   string `json:"text"`
	// TextTruncated: Text is the first max_line_bytes of a longer line,
	// TextBytes long (the text form prints the line whole).
	TextTruncated bool     `json:"text_truncated,omitempty"`
	TextBytes     int      `json:"text_bytes,omitempty"`
	Before        []string `json:"before,omitempty"`
	After         []string `json:"after,omitempty"`
	// ContextTruncated: a line of Before or After was cut likewise.
	ContextTruncated bool `json:"context_truncated,omitempty"`

	Raw       []byte    `json:"-"` // the line as the file has it, without "\n"
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
	// LongLine: a line over textio.MaxLine, which grep does not hold: the
	// file was skipped.
	LongLine bool

	skipped bool  // a walked file that could not be opened (raced away, denied)
	skipErr error // why, for skipped.denied or skipped.errors
	err     error // a named file that could not be opened or read
}

// GrepSkipped counts what grep passed over.
type GrepSkipped struct {
	sandbox.WalkSkipped
	Binary   int64 `json:"binary"`
	Special  int64 `json:"special"`  // FIFOs, sockets, devices: never opened
	Symlinks int64 `json:"symlinks"` // not followed without -L
	Globbed  int64 `json:"globbed"`  // left out by -g
	// LongLines counts files skipped for a line over textio.MaxLine (64
	// MiB): grep holds a line whole to match it, and never more than that.
	LongLines int64 `json:"long_lines"`
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
	BinaryFiles   []string     `json:"binary_files,omitempty"`    // named files skipped as binary
	LongLineFiles []string     `json:"long_line_files,omitempty"` // named files skipped for a line over 64 MiB
	Skipped       GrepSkipped  `json:"skipped"`
	Truncation
}

// grepJob is a batch of files for one worker: batching keeps the hand-off
// cost (channel operations, goroutine wake-ups) off the per-file path.
type grepJob struct {
	entries []*sandbox.Entry // from a walk
	file    string           // or one path named on the command line
	out     chan []FileResult
	results []FileResult // kept for the next use of the job
}

const grepBatch = 16

// Grep searches files and directory trees. Directories are walked in path
// order with ignore rules; files are searched on every core and reported
// in path order. A file named explicitly is searched even if ignored or
// hidden; a binary one is listed in binary_files.
func Grep(sb *sandbox.Sandbox, o GrepOptions) (GrepResult, error) {
	m, err := newMatcher(o.Pattern, o.Fixed, o.IgnoreCase, o.Word)
	if err != nil {
		return GrepResult{}, err
	}
	var incl, excl []string
	for _, g := range o.Globs {
		if len(g) > 0 && g[0] == '!' {
			excl = append(excl, g[1:])
		} else {
			incl = append(incl, g)
		}
	}
	inclG, err := newGlobs(incl)
	if err != nil {
		return GrepResult{}, err
	}
	exclG, err := newGlobs(excl)
	if err != nil {
		return GrepResult{}, err
	}
	if o.Before < 0 || o.After < 0 || o.MaxCount < 0 || o.Limit < 0 {
		return GrepResult{}, usagef("", "context, --max-count and --limit must be 0 or more")
	}
	max := sb.Limits().MaxResults
	limitName := "max_results"
	if o.Limit > 0 && o.Limit < max {
		max, limitName = o.Limit, "limit"
	}
	if len(o.Paths) == 0 {
		o.Paths = []string{"."}
	}
	res := GrepResult{Pattern: o.Pattern}
	switch {
	case o.Count:
		res.Counts = &[]FileCount{}
	case o.FilesWithMatches:
		res.Paths = &[]string{}
	default:
		res.Matches = &[]Match{}
	}
	s := &searcher{m: m, o: &o, perFile: o.MaxCount, cut: lineCut(sb, o.Exact),
		before: int(min(int64(o.Before), max)), after: int(min(int64(o.After), max))}
	if s.perFile == 0 || s.perFile > satAdd(max, 1) {
		s.perFile = satAdd(max, 1)
	}
	if o.FilesWithMatches {
		s.perFile = 1
	}

	// Pipeline: one goroutine walks in path order and hands out jobs;
	// workers search; this goroutine takes results back in order.
	jobs := make(chan *grepJob, 16)
	order := make(chan *grepJob, 64)
	// Jobs go round: every fresh byte costs a page fault, so a job and its
	// slices are used again once their results are reported.
	free := make(chan *grepJob, cap(jobs)+cap(order)+runtime.GOMAXPROCS(0)+1)
	newJob := func() *grepJob {
		select {
		case j := <-free:
			return j
		default:
			return &grepJob{out: make(chan []FileResult, 1)}
		}
	}
	stop := make(chan struct{})
	var walkErr error
	var skipped GrepSkipped
	go func() {
		defer close(order)
		defer close(jobs)
		send := func(j *grepJob) bool {
			select {
			case order <- j:
			case <-stop:
				for _, e := range j.entries {
					e.Release()
				}
				return false
			}
			jobs <- j
			return true
		}
		pending := newJob()
		flush := func() bool {
			if len(pending.entries) == 0 {
				return true
			}
			j := pending
			pending = newJob()
			return send(j)
		}
		for _, p := range o.Paths {
			info, err := sb.Lstat(p)
			if err == nil && info.Type == "symlink" {
				info, err = statFollow(sb, p)
			}
			if err != nil {
				walkErr = err
				return
			}
			if info.Type != "dir" {
				if info.Type == "other" {
					walkErr = &sandbox.Error{Code: sandbox.CodeDenied, Rule: sandbox.RuleSpecialFile, Path: p,
						Msg: p + " is a special file; FIFOs, sockets and devices are never opened"}
					return
				}
				j := newJob()
				j.file = p
				if !send(j) {
					return
				}
				continue
			}
			ws, err := sb.Walk(p, sandbox.WalkOptions{Hidden: o.Hidden, NoIgnore: o.NoIgnore, Follow: o.Follow, MaxDepth: -1},
				func(e *sandbox.Entry) error {
					switch {
					case e.Type == "dir":
						e.Release()
						if len(exclG) > 0 && exclG.match(e.Rel) {
							skipped.Globbed++
							return sandbox.SkipDir
						}
						return nil
					case e.Type == "symlink":
						skipped.Symlinks++
					case e.Type == "other":
						skipped.Special++
					case (len(exclG) > 0 && exclG.match(e.Rel)) || (len(inclG) > 0 && !inclG.match(e.Rel)):
						skipped.Globbed++
					default:
						pending.entries = append(pending.entries, e)
						if len(pending.entries) == grepBatch && !flush() {
							return errStop
						}
						return nil
					}
					e.Release()
					return nil
				})
			skipped.WalkSkipped.Add(ws)
			if err == nil && !flush() {
				err = errStop
			}
			if err != nil {
				for _, e := range pending.entries {
					e.Release()
				}
				if !errors.Is(err, errStop) {
					walkErr = err
				}
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, searchBuf)
			var f sandbox.File // reused: opening a walked file allocates nothing
			for j := range jobs {
				out := slices.Grow(j.results[:0], len(j.entries)+1)[:len(j.entries)]
				if j.file != "" {
					out = append(out, s.searchFile(sb, j.file, &buf))
				}
				for i, e := range j.entries {
					s.searchEntry(e, &f, &out[i], &buf)
				}
				j.out <- out
			}
		}()
	}
	var sinkErr error
	var readDenied, readErrors int64 // walked files that could not be opened or read
	stopped := false
	halt := func(err error) {
		if !stopped {
			sinkErr, stopped = err, true
			close(stop)
		}
	}
	for j := range order {
		out := <-j.out
		for i := range out {
			fr := &out[i]
			named := j.file != ""
			switch {
			case stopped:
				continue
			case fr.skipped:
				if fr.skipErr != nil && sandbox.AsError(fr.skipErr).Code == sandbox.CodeDenied {
					readDenied++
				} else if fr.skipErr != nil {
					readErrors++
				}
				continue
			case fr.err != nil:
				halt(fr.err)
				continue
			}
			res.FilesSearched++
			if fr.Binary {
				skipped.Binary++
				if named {
					res.BinaryFiles = append(res.BinaryFiles, fr.Path)
				}
				continue
			}
			if fr.LongLine {
				skipped.LongLines++
				if named {
					res.LongLineFiles = append(res.LongLineFiles, fr.Path)
				}
				continue
			}
			if fr.Count == 0 {
				continue
			}
			// Each file is searched for up to max+1 lines, so a cut is only
			// reported when something really was left out.
			cut := res.Count+fr.Count > max
			if cut {
				fr.Count = max - res.Count
				if int64(len(fr.Matches)) > fr.Count {
					fr.Matches = fr.Matches[:fr.Count]
				}
				res.Truncated, res.Limit = true, limitName
				if fr.Count == 0 {
					halt(nil)
					continue
				}
			}
			res.Count += fr.Count
			res.FilesMatched++
			if o.Sink != nil {
				if err := o.Sink(fr); err != nil {
					halt(err)
					continue
				}
			} else {
				switch {
				case o.Count:
					*res.Counts = append(*res.Counts, FileCount{Path: fr.Path, Count: fr.Count})
				case o.FilesWithMatches:
					*res.Paths = append(*res.Paths, fr.Path)
				default:
					*res.Matches = append(*res.Matches, fr.Matches...)
				}
			}
			if cut {
				halt(nil)
			}
		}
		clear(out)
		clear(j.entries)
		j.results, j.entries, j.file = out[:0], j.entries[:0], ""
		select {
		case free <- j:
		default:
		}
	}
	wg.Wait()
	if walkErr != nil {
		return GrepResult{}, walkErr
	}
	if sinkErr != nil {
		return GrepResult{}, sinkErr
	}
	res.Skipped = skipped
	res.Skipped.Denied += readDenied
	res.Skipped.Errors += readErrors
	return res, nil
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
	m       *matcher
	o       *GrepOptions
	perFile int64
	cut     int // where JSON text ends (lineCut); 0: whole
	// before and after are -B and -A, at most max_results lines each: a
	// context list never holds more lines than a result may.
	before, after int
}

// searchEntry searches a walked file into fr, through f (closed, and
// reused from one file to the next).
func (s *searcher) searchEntry(e *sandbox.Entry, f *sandbox.File, fr *FileResult, buf *[]byte) {
	err := e.OpenInto(f)
	e.Release()
	if err != nil {
		*fr = FileResult{skipped: true, skipErr: err} // raced away, or denied on a closer look
		return
	}
	fr.Path = f.Info.Path
	err = s.search(f, f.Info.Size, fr, buf)
	f.Close()
	if err != nil {
		*fr = FileResult{skipped: true, skipErr: err}
	}
}

func (s *searcher) searchFile(sb *sandbox.Sandbox, path string, buf *[]byte) FileResult {
	f, err := sb.Open(path)
	if err != nil {
		return FileResult{err: err}
	}
	defer f.Close()
	fr := FileResult{Path: f.Info.Path}
	if err := s.search(f, f.Info.Size, &fr, buf); err != nil {
		return FileResult{err: sandbox.AsError(err)}
	}
	return fr
}

// GrepNamesOneFile reports whether paths name exactly one file (not a
// directory), in which case the text form leaves the path out, as grep does.
func GrepNamesOneFile(sb *sandbox.Sandbox, paths []string) bool {
	if len(paths) != 1 {
		return false
	}
	info, err := statFollow(sb, paths[0])
	return err == nil && info.Type == "file"
}
