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
	q := &grepQueue{g: g, pending: g.newJob(), typed: g.typed}
	defer q.saw(false)
	for i, p := range g.o.Paths {
		if from := g.o.From; from != nil && int64(i) < from.Arg {
			continue // before the cursor's argument: done
		}
		q.pending.arg = i
		if !q.arg(i, p) {
			return
		}
	}
}

// grepQueue is the walk's side of the queue: the batch it is filling.
type grepQueue struct {
	g       *grepRun
	pending *grepJob
	stalled bool          // a hand-over while the walk waited failed: collect wants no more
	typed   chan struct{} // g.typed until saw closes it
}

// saw tells collect what the one path of a counting search is (a file:
// cut in its middle, it is a timeout, not a partial count), once.
func (q *grepQueue) saw(file bool) {
	if q.typed != nil {
		q.g.oneFile = file
		close(q.typed)
		q.typed = nil
	}
}

// flush queues the batch being filled, if any; false once collect has
// stopped.
func (q *grepQueue) flush() bool {
	if len(q.pending.entries) == 0 {
		return true
	}
	j := q.pending
	q.pending = q.g.newJob()
	q.pending.arg = j.arg
	return q.g.send(j)
}

// one queues a job of its own: a named file (resume 1: the cursor's,
// searched by g.rs), or a path argument's error in its place.
func (q *grepQueue) one(i int, file string, err error, resume int) bool {
	j := q.g.newJob()
	j.file, j.err, j.arg, j.resume = file, err, i, resume
	return q.g.send(j)
}

// arg queues the files of path argument i: a file named by it, or those
// of the tree it names; false once the walk must stop.
func (q *grepQueue) arg(i int, p string) bool {
	g := q.g
	at := g.o.From != nil && int64(i) == g.o.From.Arg // the argument the cursor is in
	if p == sandbox.StdinPath {
		q.saw(true)
		return q.named(i, p, at)
	}
	info, err := g.sb.Named(p) // the door says what it is (a special file is refused there)
	switch {
	case err != nil:
		// One bad path never sinks the rest: it is reported in its place
		// (SPEC §2), after what came before it.
		return q.flush() && q.one(i, p, err, 0)
	case info.Type != "dir":
		q.saw(true)
		return q.named(i, p, at)
	}
	return q.tree(i, p, at)
}

// named queues a file named by the argument itself; on a resumed page
// (at: the cursor is in this argument) it is skipped when the cursor is
// past it, and searched by g.rs when the cursor is in it.
func (q *grepQueue) named(i int, p string, at bool) bool {
	resume := 0
	if at {
		from, o := q.g.o.From, q.g.o
		switch {
		case from.Key != "": // a position inside it: it sorts before
			return true
		case from.N == 0 && from.Skip == 0: // nothing of it given
		case o.Count || o.FilesWithMatches || from.N == wholeFile: // given whole
			return true
		default:
			resume = 1
		}
	}
	return q.one(i, p, nil, resume)
}

// tree walks the directory of path argument i and queues its files in
// batches; false once the walk must stop.
func (q *grepQueue) tree(i int, p string, at bool) bool {
	g, o := q.g, q.g.o
	c := &grepResume{}
	var after string
	if at {
		c.from, c.key = o.From, o.From.Key
		if k := strings.LastIndexByte(c.key, '/'); k > 0 {
			after = c.key[:k]
		}
	}
	q.stalled = false
	wo := walkOptions(o.Hidden, o.NoIgnore, o.NoRequireGit, o.Follow, -1)
	wo.After, wo.Waiting = after, q.waiting
	ws, err := g.sb.Walk(g.ctx, p, wo, func(e *sandbox.Entry) error { return q.entry(e, c) })
	g.skipped.WalkSkipped.Add(ws)
	if ws.AllIgnored() {
		g.walkNotes = append(g.walkNotes, ignoredNote(p, ws, "searches"))
	}
	if err == nil && (q.stalled || !q.flush()) {
		err = errStop
	}
	if err == nil {
		return true
	}
	for _, e := range q.pending.entries {
		e.Release()
	}
	q.pending.entries = q.pending.entries[:0]
	if errors.Is(err, errStop) || g.ctx.Err() != nil {
		if !errors.Is(err, errStop) {
			g.walkErr = err
		}
		return false
	}
	return q.one(i, p, err, 0) // the directory could not be walked: its error in its place
}

// waiting is told when the walk is about to wait (a directory not listed
// yet): the files it found go to the search now, not when a batch fills,
// so a hang is no reason to hold them past the deadline.
func (q *grepQueue) waiting() {
	if !q.stalled && len(q.pending.entries) > 0 && !q.flush() {
		q.stalled = true
	}
}

// entry takes one walked entry: past what the cursor says is done, and
// kept by g.keep, it joins the batch.
func (q *grepQueue) entry(e *sandbox.Entry, c *grepResume) error {
	g := q.g
	if q.stalled {
		e.Release()
		return errStop
	}
	done, resume, err := c.done(e, g.o)
	if done {
		e.Release()
		return err
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
		q.pending.resume = len(q.pending.entries) + 1
	}
	q.pending.entries = append(q.pending.entries, e)
	if len(q.pending.entries) == grepBatch && !q.flush() {
		return errStop
	}
	return nil
}

// grepResume is where a resumed page starts in the tree of the cursor's
// argument: at the cursor's file (key). The walk starts at key's
// directory (WalkOptions.After), so what is left before key in that
// directory is passed over here, unopened, in walk order
// (sandbox.WalkCompare); key itself is searched again when the cursor is
// in it (listing modes) or passed (-c, -l).
type grepResume struct {
	from *Cursor
	key  string // "" once the walk is past it (or no cursor)
}

// done reports whether the cursor says e is done (and what the walk's
// callback returns for it: SkipDir for a directory wholly before the
// cursor), or else whether e is the cursor's file, resumed.
func (c *grepResume) done(e *sandbox.Entry, o *GrepOptions) (done, resume bool, err error) {
	if c.key == "" {
		return false, false, nil
	}
	switch cmp := sandbox.WalkCompare(e.Rel, c.key); {
	case cmp < 0:
		if e.Type == "dir" && !(strings.HasPrefix(c.key, e.Rel) && c.key[len(e.Rel)] == '/') {
			return true, false, sandbox.SkipDir // wholly before the cursor
		}
		return true, false, nil
	case cmp == 0 && e.Type != "dir":
		c.key = "" // every entry after it is after the cursor
		switch {
		case c.from.N == 0 && c.from.Skip == 0:
		case o.Count || o.FilesWithMatches || c.from.N == wholeFile:
			return true, false, nil
		default:
			return false, true, nil
		}
	case cmp > 0:
		c.key = ""
	}
	return false, false, nil
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
	case (len(g.excl) > 0 && g.excl.match(e.Rel, false)) || (len(g.incl) > 0 && !g.incl.match(e.Rel, false)),
		g.types.on() && !g.types.keep(e.Name):
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
