// grep's search of one file: opening, binary detection, the result of a
// file and its held mappings.

package ops

import (
	"bytes"
	"context"
	"fmt"
	"math"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/textio"
)

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
	case err != nil && fserr.AsError(err).Code == fserr.CodeConflict:
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
		if e := fserr.AsError(err); e.Code == fserr.CodeConflict && fr.prior > 0 {
			// Some of it was printed already.
			err = fserr.Errorf(fserr.CodeConflict, path, "%s changed while it was read: the lines given of it may mix two versions", path)
		}
		return FileResult{err: fserr.AsError(err), given: path}
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
