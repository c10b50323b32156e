package ops

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/textio"
)

// Searching a large file through mapped windows.
//
// Copying a 1 GiB file out of the page cache is most of what a search for
// a rare literal costs; ripgrep maps the file instead. A file of at least
// 32 MiB is searched in chunks of 8 MiB, each through its own mapped
// window (sandbox.File.MapAt), on GOMAXPROCS workers that take chunks in
// order, and the chunks' results are joined in file order. Each chunk owns the lines that
// start in it, and its window reaches up to 1 MiB past the chunk to finish
// its last line. Memory stays bounded: at most GOMAXPROCS windows are
// mapped at once in the whole process (mapSlots; their touched pages
// count as resident), and at most 2*GOMAXPROCS chunks' matches per file
// (each capped at the per-file count) wait to be joined.
//
// A file truncated under a window faults; sandbox.GuardFaults makes that
// an io error. A file written during the search is an io error too
// (sandbox.File.Unchanged), never results from two versions of it; one
// that grew is searched as it was when opened.

// mapGeometry is where a mapped search cuts a file.
type mapGeometry struct {
	min   int64 // smaller files are read: mapping costs more than it saves
	chunk int64 // the bytes one worker searches per window
	reach int64 // how far past its chunk a window looks for the end of its last line
	piece int   // a chunk is checked for NUL and searched in pieces this big, cache-warm
	// huge is the longest line mapped whole for a count or for JSON: a
	// longer one is read past as on a stream, so that the pages it
	// touches (which count in the resident memory while mapped) stay
	// bounded. The text form (which prints a line whole) and -o map any
	// line whole.
	huge int64
	// mapped, in tests, runs once chunk k is mapped, before it is read
	mapped func(k int64)
}

// mapGeom is the geometry of every search; tests shrink it through
// GrepOptions.geom to put chunk edges where they like.
var mapGeom = mapGeometry{min: 32 << 20, chunk: 8 << 20, reach: 1 << 20, piece: 256 << 10, huge: 32 << 20}

// errUnmappable says that the file could not be mapped (a FUSE file
// system with direct I/O, say): it is read instead, from its start.
var errUnmappable = errors.New("the file cannot be mapped")

// mapped reports whether a search of f goes through mapped windows: a
// large regular file, and a search without context or -v (whose lines
// depend on the lines before them).
func (s *searcher) mapped(f *sandbox.File) bool {
	o := s.o
	// The cursor's file on a resumed page is read: its items up to the
	// cursor are dropped as the lines go by (s.drop).
	return f.Info.Size >= s.geom.min && !o.Invert && o.Before == 0 && o.After == 0 && f.Mappable() && s.drop == nil
}

// searchOpen searches an open file into fr: through mapped windows when
// it is large, else by reading it.
func (s *searcher) searchOpen(f *sandbox.File, size int64, fr *FileResult, buf *[]byte) (err error) {
	defer func() {
		if err != nil {
			fr.release() // the caller reports the error instead
		}
	}()
	if s.mapped(f) {
		err := s.searchMapped(f, fr)
		if !errors.Is(err, errUnmappable) && !errors.Is(err, errHugeLine) {
			return err
		}
		fr.release()
		*fr = FileResult{Path: fr.Path, named: fr.named, size: fr.size, mtime: fr.mtime, key: fr.key, stream: fr.stream, restarted: fr.restarted}
	}
	err = s.search(f, size, fr, buf)
	if err == nil && s.drop != nil {
		// The items the cursor gave are gone, and their lines with them.
		s.dropGiven(fr)
		fr.Count -= fr.gone
		fr.gone = 0
	}
	if err != nil || f.Stream() {
		return err
	}
	if afterRead != nil {
		afterRead(f)
	}
	// A writer that changed the file while it was read: its result could
	// mix two versions (SPEC §5, Concurrent writers).
	return f.UnchangedSinceOpen()
}

// afterRead, set by tests only, runs once a file has been read and
// before the check that it is unchanged: the seam that changes a file
// mid-search without a timed race.
var afterRead func(f *sandbox.File)

// chunkResult is what one chunk found: fr's matches are numbered from the
// chunk's first line as line 1, and lines is how many lines it holds
// (counted only when matches are kept).
type chunkResult struct {
	fr    FileResult
	lines int64
	err   error
}

// searchMapped searches f (s.mapped(f)) into fr. errUnmappable and
// errHugeLine mean f is to be read instead (fr is then started again).
func (s *searcher) searchMapped(f *sandbox.File, fr *FileResult) error {
	stamp, err := f.Stamp()
	if err != nil {
		return err
	}
	size := f.Info.Size
	needLines := !s.o.Count && !s.o.FilesWithMatches
	workers := int64(max(1, runtime.GOMAXPROCS(0)))
	chunks := (size + s.geom.chunk - 1) / s.geom.chunk
	lineNo := int64(1)
	var searched int64 // bytes of the chunks joined, for the audit
	done := func(err error) error {
		if errors.Is(err, errUnmappable) || errors.Is(err, errHugeLine) {
			return err // read instead: that counts what it reads
		}
		f.CountRead(searched)
		if err != nil {
			return err
		}
		return f.Unchanged(stamp)
	}
	// Workers take chunks in order and search up to `ahead` of them
	// beyond the one being joined (a credit each); chunk k's result goes
	// to slot k%ahead, which the credits keep free for it.
	ahead := 2 * workers
	slots := make([]chan chunkResult, ahead)
	for i := range slots {
		slots[i] = make(chan chunkResult, 1)
	}
	credits := make(chan struct{}, ahead)
	for range ahead {
		credits <- struct{}{}
	}
	var next atomic.Int64
	quit := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(quit)
		wg.Wait()
		for _, c := range slots { // results never joined: their mappings go
			select {
			case r := <-c:
				r.fr.release()
			default:
			}
		}
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-credits:
				case <-quit:
					return
				}
				k := next.Add(1) - 1
				if k >= chunks {
					return
				}
				r := s.searchChunk(f, k, needLines, fr.named)
				select {
				case slots[k%ahead] <- r:
				case <-quit:
					return
				}
			}
		}()
	}
	for k := int64(0); k < chunks; k++ {
		var r chunkResult
		select {
		case r = <-slots[k%ahead]:
		case <-s.ctx.Done():
			return done(s.ctx.Err())
		}
		credits <- struct{}{}
		if r.err != nil {
			return done(r.err)
		}
		lo := k * s.geom.chunk
		searched += min(size, lo+s.geom.chunk) - lo
		fr.held = append(fr.held, r.fr.held...)
		if r.fr.Binary && !fr.Binary && s.stopBinary(fr) {
			return done(nil)
		}
		if s.join(fr, &r.fr, lineNo-1) {
			return done(nil)
		}
		if !s.sendPart(fr, nil) {
			return done(errStop)
		}
		lineNo += r.lines
	}
	return done(nil)
}

// mapSlots bounds the windows mapped at once in the whole process: a
// tree search runs a searcher per core, and each may be in a large file.
var mapSlots = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))

// join appends a chunk's matching lines to fr, their numbers moved on by
// base, up to s.perFile lines; it reports whether fr is full.
func (s *searcher) join(fr, c *FileResult, base int64) bool {
	room := s.perFile - fr.Count
	take := min(c.Count, room)
	fr.Count += take
	if len(c.Matches) > 0 {
		// With -o a line gives several matches: keep those of the
		// first take lines.
		lines, cut := int64(0), len(c.Matches)
		for j := range c.Matches {
			if j == 0 || c.Matches[j].Line != c.Matches[j-1].Line {
				if lines == take {
					cut = j
					break
				}
				lines++
			}
		}
		for j := range c.Matches[:cut] {
			m := c.Matches[j]
			m.Line += base
			m.Path = fr.Path
			fr.Matches = append(fr.Matches, m)
		}
	}
	return fr.Count >= s.perFile
}

// searchChunk searches the lines that start in chunk k of f. A last line
// that runs on past the window's reach is followed to its end through a
// larger window, four times larger each time: no line is skipped.
func (s *searcher) searchChunk(f *sandbox.File, k int64, needLines, named bool) (r chunkResult) {
	size := f.Info.Size
	lo := k * s.geom.chunk
	hi := min(size, lo+s.geom.chunk)
	from := max(0, lo-1) // the byte before the chunk says whether a line starts at lo
	mapSlots <- struct{}{}
	defer func() { <-mapSlots }()
	r.fr.Path, r.fr.named = f.Info.Path, named
	for reach := s.geom.reach; ; reach *= 4 {
		w, err := f.MapAt(from, int(min(size, hi+reach)-from))
		if err != nil {
			r.err = fmt.Errorf("%w: %v", errUnmappable, err)
			return r
		}
		if s.geom.mapped != nil && reach == s.geom.reach {
			s.geom.mapped(k)
		}
		longer := false
		r.err = sandbox.GuardFaults(f.Info.Path, func() error {
			d := w.Data
			reachesEnd := from+int64(len(d)) == size
			start, end := int(lo-from), int(hi-from)
			if k == 0 && bytes.HasPrefix(d, textio.BOM) {
				start = len(textio.BOM) // no text, as in the read path
			}
			if k > 0 && d[start-1] != '\n' {
				i := bytes.IndexByte(d[start:end], '\n')
				if i < 0 {
					return nil // the line that runs through the chunk started before it
				}
				start += i + 1
			}
			if start >= end {
				return nil
			}
			if hi < size && d[end-1] != '\n' {
				i := bytes.IndexByte(d[end:], '\n')
				switch {
				case i >= 0:
					end += i + 1
				case reachesEnd:
					end = len(d)
				default:
					longer = true
					return nil
				}
			}
			var err error
			r.lines, err = s.searchBlock(d[start:end], &r.fr, needLines, w)
			return err
		})
		if !r.fr.holds(w) {
			w.Unmap()
		}
		if !longer || r.err != nil {
			return r
		}
		if !s.wholeLines() && (4*reach > s.geom.huge || (s.passesLongLines() && 4*reach > s.geom.chunk)) {
			// Longer than a mapping may be, or a literal's search that
			// passes it in one read: the file is read instead.
			r.err = errHugeLine
			return r
		}
	}
}

// searchBlock searches whole lines in pieces of about s.geom.piece bytes, each
// checked for NUL first, and returns how many lines it passed. It stops
// once the call is cancelled.
func (s *searcher) searchBlock(block []byte, fr *FileResult, needLines bool, win *sandbox.Mapping) (int64, error) {
	lineNo := int64(1)
	for pos := 0; pos < len(block); {
		if err := s.ctx.Err(); err != nil {
			return 0, err
		}
		end := len(block)
		if pos+s.geom.piece < end {
			end = pos + s.geom.piece
			if j := bytes.LastIndexByte(block[pos:end], '\n'); j >= 0 {
				end = pos + j + 1
			} else if i := bytes.IndexByte(block[end:], '\n'); i >= 0 {
				end += i + 1
			} else {
				end = len(block)
			}
		}
		piece := block[pos:end]
		if !fr.Binary && s.binary(piece) && s.stopBinary(fr) {
			return 0, nil
		}
		var full bool
		if lineNo, full = s.simpleBlock(piece, fr, lineNo, needLines, win); full {
			break
		}
		pos = end
	}
	return lineNo - 1, nil
}
