// grep's walk and scheduling: the walk lists files in path order, in
// batches; a worker per core searches a batch.

package ops

import (
	"errors"
	"slices"
	"strings"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

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
	typed := g.typed
	saw := func(file bool) { // what the one path of a counting search is (partial)
		if typed != nil {
			g.oneFile = file
			close(typed)
			typed = nil
		}
	}
	defer saw(false)
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
			case o.Count || o.FilesWithMatches || from.N == wholeFile: // given whole
				return false
			default:
				j.resume = 1
			}
			return true
		}
		if p == sandbox.StdinPath {
			saw(true)
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
			saw(true)
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
						case o.Count || o.FilesWithMatches || from.N == wholeFile:
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
