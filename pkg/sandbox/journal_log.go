package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// Reading the journal: a change list is appended to in id order, so the
// newest changes are read from its end (history --limit N, undo) and one
// id is found by bisection (undo ID), without reading the rest. Only
// eviction, purge and history PATH read the whole list.

// decode reads one record (its stored form); a damaged or torn line is
// not a change.
func (j *journal) decode(line []byte) (Change, bool) {
	c := Change{Kept: true} // a record of the layout before kept was written kept all
	if len(line) == 0 || json.Unmarshal(line, &c) != nil {
		return Change{}, false
	}
	seq, err := strconv.Atoi(c.ID)
	if err != nil || seq <= 0 {
		return Change{}, false
	}
	c.j, c.seq, c.size = j, seq, int64(len(line))+1
	return c, true
}

// clone is c with slices of its own.
func (c Change) clone() Change {
	c.Paths = slices.Clone(c.Paths)
	c.Moved = slices.Clone(c.Moved)
	return c
}

// line is c's record.
func (c Change) line() []byte {
	b, _ := json.Marshal(c)
	return b
}

// all reads every recorded change, oldest first.
func (j *journal) all() ([]Change, error) {
	if j.ob != nil {
		return j.objAll()
	}
	b, err := j.r.ReadFile(changesFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fserr.Errorf(fserr.CodeIO, j.dir, "the journal %s cannot be read: %v", j.dir, err)
	}
	// Lines are decoded in parallel, in chunks (10,000 changes are a few
	// MiB of JSON); a torn line (a crash mid-append) is skipped.
	return j.decodeLines(b), nil
}

// tail reads a journal's changes newest first, a block at a time from
// the end of its list: the first block small (history --limit 10 reads
// no more), the next ones larger, each block's records decoded in
// parallel.
type tail struct {
	j     *journal
	f     *os.File
	off   int64    // bytes before buf not read yet
	buf   []byte   // read and not yet decoded (its first line may be cut)
	ready []Change // decoded, oldest first: next takes from the end
	block int64
	// ahead, once a caller has read past the first block (a whole
	// history), is the next block being read and decoded while the
	// caller consumes this one.
	ahead chan filled
	fills int
}

// filled is one block read and decoded.
type filled struct {
	off   int64
	buf   []byte
	ready []Change
	err   error
}

const tailBlock = 64 << 10

func (j *journal) tail() (*tail, error) {
	if j.ob != nil {
		all, err := j.objAll()
		if err != nil {
			return nil, err
		}
		return &tail{j: j, ready: all}, nil
	}
	f, err := j.r.Open(changesFile)
	if errors.Is(err, fs.ErrNotExist) {
		return &tail{j: j}, nil
	}
	if err != nil {
		return nil, fserr.Errorf(fserr.CodeIO, j.dir, "the journal %s cannot be read: %v", j.dir, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fserr.Errorf(fserr.CodeIO, j.dir, "the journal %s cannot be read: %v", j.dir, err)
	}
	return &tail{j: j, f: f, off: fi.Size(), block: tailBlock}, nil
}

// next is the next older change (false: none left).
func (t *tail) next() (Change, bool, error) {
	for len(t.ready) == 0 {
		if t.off == 0 && len(t.buf) == 0 {
			return Change{}, false, nil
		}
		if err := t.fill(); err != nil {
			return Change{}, false, err
		}
	}
	c := t.ready[len(t.ready)-1]
	t.ready = t.ready[:len(t.ready)-1]
	return c, true, nil
}

// fill reads the next block back and decodes the whole lines it
// completes (all that is left once the list's start is reached).
func (t *tail) fill() error {
	var got filled
	if t.ahead != nil {
		got, t.ahead = <-t.ahead, nil
	} else {
		got = t.j.readBlock(t.f, t.off, t.block, t.buf)
	}
	if got.err != nil {
		return got.err
	}
	t.off, t.buf, t.ready = got.off, got.buf, got.ready
	t.block = min(t.block*4, 1<<20)
	if t.fills++; t.fills > 1 && t.off > 0 {
		ch := make(chan filled, 1)
		t.ahead = ch
		f, off, block, buf := t.f, t.off, t.block, t.buf
		go func() { ch <- t.j.readBlock(f, off, block, buf) }()
	}
	return nil
}

// readBlock reads up to block bytes of the list before off, joins them to
// rest (the cut line after them) and decodes the whole lines.
func (j *journal) readBlock(f *os.File, off, block int64, rest []byte) filled {
	out := filled{off: off, buf: rest}
	if off > 0 {
		n := min(off, block)
		b := make([]byte, n, n+int64(len(rest)))
		if _, err := f.ReadAt(b, off-n); err != nil {
			out.err = fserr.Errorf(fserr.CodeIO, j.dir, "the journal %s cannot be read: %v", j.dir, err)
			return out
		}
		out.off -= n
		out.buf = append(b, rest...)
	}
	whole := out.buf
	if out.off > 0 {
		i := bytes.IndexByte(out.buf, '\n')
		if i < 0 {
			return out // one line longer than the block: read on
		}
		whole, out.buf = out.buf[i+1:], out.buf[:i+1]
	} else {
		out.buf = nil
	}
	out.ready = j.decodeLines(whole)
	return out
}

// decodeLines decodes the records of b, in order, in parallel chunks (a
// damaged or torn line is skipped).
func (j *journal) decodeLines(b []byte) []Change {
	lines := bytes.Split(b, []byte("\n"))
	decoded := make([]Change, len(lines))
	ok := make([]bool, len(lines))
	const chunk = 256
	var wg sync.WaitGroup
	for lo := 0; lo < len(lines); lo += chunk {
		hi := min(lo+chunk, len(lines))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				decoded[i], ok[i] = j.decode(lines[i])
			}
		}()
	}
	wg.Wait()
	out := decoded[:0]
	for i, c := range decoded {
		if ok[i] {
			out = append(out, c)
		}
	}
	return out
}

func (t *tail) close() {
	if t.ahead != nil {
		<-t.ahead // the block read ahead is done with the file
	}
	if t.f != nil {
		t.f.Close()
	}
}

// find is the change whose id in j is seq, found by bisection over the
// list's bytes (ids rise along it).
func (j *journal) find(seq int) (Change, bool, error) {
	if j.ob != nil {
		return j.objFind(seq)
	}
	f, err := j.r.Open(changesFile)
	if errors.Is(err, fs.ErrNotExist) {
		return Change{}, false, nil
	}
	if err != nil {
		return Change{}, false, fserr.Errorf(fserr.CodeIO, j.dir, "the journal %s cannot be read: %v", j.dir, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Change{}, false, fserr.Errorf(fserr.CodeIO, j.dir, "the journal %s cannot be read: %v", j.dir, err)
	}
	// lo is a line's start at or before the change's, hi past it.
	lo, hi := int64(0), fi.Size()
	for hi-lo > tailBlock {
		mid := lo + (hi-lo)/2
		c, start, end, ok := j.lineAfter(f, mid, hi)
		switch {
		case !ok:
			hi = mid
		case c.seq == seq:
			return c, true, nil
		case c.seq < seq:
			lo = end
		default:
			hi = start
		}
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, lo, fi.Size()-lo), 16<<10)
	for {
		line, err := r.ReadBytes('\n')
		if c, ok := j.decode(bytes.TrimSuffix(line, []byte("\n"))); ok {
			if c.seq >= seq {
				return c, c.seq == seq, nil
			}
		}
		if err == io.EOF {
			return Change{}, false, nil
		}
		if err != nil {
			return Change{}, false, fserr.Errorf(fserr.CodeIO, j.dir, "the journal %s cannot be read: %v", j.dir, err)
		}
	}
}

// lineAfter is the first whole record starting at or after off and
// before hi: the change, where its line starts and where the next one
// does.
func (j *journal) lineAfter(f *os.File, off, hi int64) (c Change, start, end int64, ok bool) {
	start = off
	if off > 0 {
		// Skip to the end of the line off-1 lies in.
		start = off - 1
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, start, hi-start), 16<<10)
	if off > 0 {
		skip, err := r.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			start += int64(len(skip))
			skip, err = r.ReadSlice('\n')
		}
		if err != nil {
			return Change{}, 0, 0, false
		}
		start += int64(len(skip))
	}
	for start < hi {
		line, err := r.ReadBytes('\n')
		end = start + int64(len(line))
		if c, ok := j.decode(bytes.TrimSuffix(line, []byte("\n"))); ok {
			return c, start, end, true
		}
		if err != nil {
			return Change{}, 0, 0, false
		}
		start = end
	}
	return Change{}, 0, 0, false
}

// Changes calls fn with each recorded change of the policy's writable
// roots, as shown, newest first (the journals merged by time), until fn
// returns false.
func (s *Sandbox) Changes(fn func(Change) bool) error {
	if err := s.useJournal(); err != nil {
		return err
	}
	js := s.journals()
	if len(js) == 0 && s.jn.base == "" && s.jn.objBase == "" {
		return fserr.Errorf(fserr.CodeConfig, "", "there is no journal: %s", s.jn.off)
	}
	type head struct {
		t  *tail
		c  Change
		at time.Time
	}
	var heads []*head
	defer func() {
		for _, h := range heads {
			h.t.close()
		}
	}()
	pull := func(h *head) (bool, error) {
		c, ok, err := h.t.next()
		if !ok || err != nil {
			return false, err
		}
		h.c = c
		if len(js) > 1 {
			h.at, _ = time.Parse(time.RFC3339Nano, c.Time)
		}
		return true, nil
	}
	for _, j := range js {
		t, err := j.tail()
		if err != nil {
			return err
		}
		h := &head{t: t}
		heads = append(heads, h)
		if ok, err := pull(h); err != nil {
			return err
		} else if !ok {
			heads = heads[:len(heads)-1]
			t.close()
		}
	}
	for len(heads) > 0 {
		n := 0
		for i, h := range heads {
			if h.at.After(heads[n].at) {
				n = i
			}
		}
		h := heads[n]
		if !fn(s.shown(h.c)) {
			return nil
		}
		if ok, err := pull(h); err != nil {
			return err
		} else if !ok {
			h.t.close()
			heads = append(heads[:n], heads[n+1:]...)
		}
	}
	return nil
}

// ChangeByID is the recorded change with this id (as history shows it).
func (s *Sandbox) ChangeByID(id string) (Change, error) {
	if err := s.useJournal(); err != nil {
		return Change{}, err
	}
	if len(s.journals()) == 0 && s.jn.base == "" && s.jn.objBase == "" {
		return Change{}, fserr.Errorf(fserr.CodeConfig, "", "there is no journal: %s", s.jn.off)
	}
	j, seq, ok := s.parseID(id)
	if !ok {
		return Change{}, fserr.Errorf(fserr.CodeUsage, "", "a change id is a number, or a root's prefix and a number (8f3a2b1c:7), as history shows it; got %q", id)
	}
	if j != nil {
		c, found, err := j.find(seq)
		if err != nil {
			return Change{}, err
		}
		if found {
			return s.shown(c), nil
		}
	}
	return Change{}, fserr.Errorf(fserr.CodeNotFound, "", "the journal holds no change %s (evicted, purged, or never made)", id)
}

// parseID splits a change id into its journal (nil: a root of this policy
// without a journal) and its number there; ok is false for a malformed
// id. The workdir's ids are bare numbers; another root's start with its
// prefix (the workdir's prefix is accepted too).
func (s *Sandbox) parseID(id string) (*journal, int, bool) {
	tag, num, hasTag := strings.Cut(id, ":")
	if !hasTag {
		tag, num = "", id
	}
	seq, err := strconv.Atoi(num)
	if err != nil || seq <= 0 || strconv.Itoa(seq) != num {
		return nil, 0, false
	}
	for _, rt := range s.writable() {
		if !hasTag && rt == s.work || hasTag && tag == rt.pathHash()[:8] {
			return rt.jn, seq, true
		}
	}
	return nil, seq, !hasTag || len(tag) == 8 && strings.Trim(tag, "0123456789abcdef") == ""
}

// shown is c as fsbox shows it: its ids with its journal's prefix, its
// paths relative to the workdir below it and absolute elsewhere.
func (s *Sandbox) shown(c Change) Change {
	j := c.j
	c.Held = nil
	c.ID = j.tag + c.ID
	if c.Undoes != "" {
		c.Undoes = j.tag + c.Undoes
	}
	// The workdir's journal records its paths as they are shown (only an
	// absolute one, below another root, may need a look); c's slices are
	// its own (decoded for this call), so they are changed in place.
	for i := range c.Paths {
		if j.rt != s.work || path.IsAbs(c.Paths[i].Path) {
			c.Paths[i].Path = s.shownPath(j, c.Paths[i].Path)
		}
	}
	for i, m := range c.Moved {
		c.Moved[i] = Move{From: s.shownPath(j, m.From), To: s.shownPath(j, m.To)}
	}
	return c
}

// storedPath names a shown path (workdir-relative, or absolute below
// another root) as j records it: relative below j's root, absolute
// elsewhere, so a journal stays true whichever root a policy makes its
// workdir.
func (s *Sandbox) storedPath(j *journal, p string) string {
	abs := p
	if !absName(p) {
		abs = joinName(filepath.ToSlash(s.work.dir), p)
	}
	if rel, ok := relBelow(abs, filepath.ToSlash(j.rt.dir)); ok {
		return rel
	}
	return abs
}

// shownPath is a path j recorded, as shown.
func (s *Sandbox) shownPath(j *journal, p string) string {
	if absName(p) {
		return s.shownAbs(p)
	}
	return s.shownAbs(joinName(filepath.ToSlash(j.rt.dir), p))
}

// absName: p names its root itself (an absolute path, or an s3:// URL).
func absName(p string) bool { return path.IsAbs(p) || policy.IsObjectURL(p) }

// joinName joins a relative path to a root's name: an s3:// URL with
// '/', never cleaned (which would fold its "//").
func joinName(dir, rel string) string {
	if policy.IsObjectURL(dir) {
		if rel == "." || rel == "" {
			return dir
		}
		return strings.TrimSuffix(dir, "/") + "/" + rel
	}
	return path.Join(dir, rel)
}

// shownAbs is an absolute path as shown: relative below the workdir.
func (s *Sandbox) shownAbs(abs string) string {
	if rel, ok := relBelow(filepath.ToSlash(abs), filepath.ToSlash(s.work.dir)); ok {
		return rel
	}
	return filepath.ToSlash(abs)
}

// relBelow is abs relative to dir ("." for dir itself), or false.
func relBelow(abs, dir string) (string, bool) {
	switch {
	case abs == dir:
		return ".", true
	case dir == "/":
		return strings.TrimPrefix(abs, "/"), strings.HasPrefix(abs, "/")
	case strings.HasPrefix(abs, dir+"/"):
		return abs[len(dir)+1:], true
	}
	return "", false
}

// History is the recorded changes touching p (shown, as WorkdirRel gives
// it) or a path below it, newest first ("": every change).
func (s *Sandbox) History(p string) ([]Change, error) {
	out := []Change{}
	under := func(q string) bool {
		return p == "" || p == "." && !path.IsAbs(q) || q == p || strings.HasPrefix(q, p+"/")
	}
	err := s.Changes(func(c Change) bool {
		for _, pc := range c.Paths {
			if under(pc.Path) {
				out = append(out, c)
				return true
			}
		}
		for _, m := range c.Moved {
			if under(m.From) || under(m.To) {
				out = append(out, c)
				return true
			}
		}
		return true
	})
	return out, err
}
