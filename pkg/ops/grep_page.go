// grep's collect stage: results taken back in path order, the limits,
// the page and its cursor.

package ops

import (
	"math"
	"strconv"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

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
	// The deadline, or a cancel: collect takes nothing more and returns
	// (timeUp).
	deadline := g.ctx.Done()
	for !g.late {
		var j *grepJob
		if len(g.order) == 0 {
			g.idle() // the walk is behind
		}
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
			g.timeUp(&res)
			continue
		}
		var out []FileResult
	parts:
		for {
			if len(j.out) == 0 {
				g.idle() // the search is behind
			}
			select {
			case fr := <-j.part: // a named file's matches so far
				if !g.stopped {
					g.take(&res, &fr)
				}
				fr.release()
			case out = <-j.out:
				break parts
			case <-deadline:
				g.timeUp(&res)
			}
			if g.late {
				g.pending = j // its results are drain's
				return g.cutShort(res)
			}
		}
		for i := range out {
			if !g.stopped {
				g.take(&res, &out[i])
				if o.onTake != nil {
					o.onTake(out[i].rel, g.listCut)
				}
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

// idle tells the face that collect is about to wait: what the sink
// wrote goes to the reader now, not when its buffer fills.
func (g *grepRun) idle() {
	if g.o.Idle != nil && !g.stopped {
		g.o.Idle()
	}
}

// timeUp is collect's answer to ctx ending: it takes no more (late) and
// returns without waiting for a worker still in a read (one on a pipe
// that never ends, a hard NFS mount). Past the call's deadline the
// result is cut there (limit "timeout", unless a limit cut it first); a
// cancel (an MCP client's, or the reader of stdout gone) is no cut, but
// the call's error.
func (g *grepRun) timeUp(res *GrepResult) {
	if g.late {
		return
	}
	g.late = true
	if timedOut(g.ctx, g.ctx.Err()) {
		g.cutByDeadline(res)
		g.halt(nil) // the walk and the named files' flushers stop handing over
	} else {
		g.halt(g.ctx.Err())
	}
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
		g.timeUp(res)
		return
	case fr.skipped:
		if fr.skipErr != nil && fserr.AsError(fr.skipErr).Code == fserr.CodeDenied {
			g.readDenied++
		} else if fr.skipErr != nil {
			g.readErrors++
		}
		g.passed(fr)
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
		g.passed(fr)
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
		g.passed(fr)
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
			// A deadline that stops the counting later falls back to
			// these numbers: the files before the cut, all given.
			g.atCut = grepTally{count: res.Count - fr.Count, searched: res.FilesSearched - 1, matched: res.FilesMatched - 1}
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
		return
	}
	g.passed(fr)
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

// wholeFile, as a listing's cursor's line, says that the cursor's file
// was searched to its end and its items given: the next page starts
// after it, without reading it again.
const wholeFile = math.MaxInt64

// passed records that fr, a file taken whole, needs no other page: the
// next one starts after it, whatever it found (SPEC §2, Counts:
// next_cursor resumes at the first file not finished), until the list
// is cut (the next page starts at the cut). A page the deadline stops
// thus always moves on, even where nothing matches.
func (g *grepRun) passed(fr *FileResult) {
	switch {
	case g.listCut || g.stopped || fr.err != nil || fr.part:
	case g.counting():
		g.givenFile(fr)
	default:
		g.pos = grepPos{c: Cursor{Arg: int64(fr.arg), Key: fr.rel, N: wholeFile, Skip: wholeFile}}
	}
}

// cutByDeadline cuts res at the deadline: a listing after the last item
// given, unless a limit cut it first (and so stopped it); a count (-c,
// -l) is partial, its numbers those of the files taken whole, and
// limit is timeout whatever cut its list before (SPEC §2, Counts).
func (g *grepRun) cutByDeadline(res *GrepResult) {
	switch {
	case g.counting() && g.listCut:
		// The list was cut first and the counting went on: the count
		// falls back to the files before the list's cut, where the next
		// page starts, so that the pages' counts add up to the total and
		// their lists to the whole list.
		stoppedByDeadline(g.ctx, &res.Truncation)
		res.Count, res.FilesSearched, res.FilesMatched = g.atCut.count, g.atCut.searched, g.atCut.matched
		res.Partial = true
	case res.Truncated:
		// A limit cut the list and stopped the search: the deadline cut nothing.
	case g.counting():
		cutByDeadline(g.ctx, &res.Truncation)
		res.NextCursor = g.nextCursor()
		res.Partial = true
	default:
		cutByDeadline(g.ctx, &res.Truncation)
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
