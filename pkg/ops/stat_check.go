package ops

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// stat --check (issue 31, SPEC §5): "did anything I read change?" in one
// call. Each entry names a path and the SHA-256 its content had (or
// "absent"); the answer sorts the paths into unchanged and changed (with
// what they are now), and the paths that cannot be answered into errors[]
// as stat of several paths does: a denied path is denied, whether or not
// it exists, and nothing more.

// absentHex is the HEX of an entry that expects no file.
const absentHex = "absent"

// CheckOptions are the inputs of stat --check.
type CheckOptions struct {
	// Entries are PATH=HEX arguments; File, when set, names a file of
	// more (one a line; "-" is standard input), read after them.
	Entries []string
	File    string
	// Paging: a page starts at the entry after From.Arg (the index, among
	// the entries in order, of the last entry the page before it gave).
	Paging
}

// CheckChanged is one path whose content is not what the entry expected:
// its state now (Exists false: no file; SHA256 of a regular file's
// content).
type CheckChanged struct {
	Path   string  `json:"path"`
	Exists bool    `json:"exists"`
	SHA256 *string `json:"sha256,omitempty"`
}

// CheckResult is stat --check's answer: each entry's path in Unchanged or
// Changed (in entry order), or in Errors. Changed and Unchanged together
// are a list that max_results and max_result_bytes cut.
type CheckResult struct {
	Changed   []CheckChanged `json:"changed"`
	Unchanged []string       `json:"unchanged"`
	Count     int64          `json:"count"`
	Truncation
	PathErrors
}

// checkEntry is one PATH=HEX: the SHA-256 want, or absent.
type checkEntry struct {
	path   string
	want   [sha256.Size]byte
	absent bool
}

// checkOutcome is what one entry's file was found to be.
type checkOutcome struct {
	done   bool // looked at (false: the deadline came first)
	exists bool
	hashed bool              // a regular file: sum is its content's
	sum    [sha256.Size]byte // SHA-256
	err    error
}

// maxCheckLine bounds one line of a check file: a path (4096 bytes at
// most), '=', 64 hex digits, a line end, with room to spare.
const maxCheckLine = 8 << 10

// checkBatch is how many entries are hashed at once (in parallel) before
// they are admitted, in order, to the result: the entries in memory at a
// time, whatever the length of the list.
const checkBatch = 256

// parseCheck splits "PATH=HEX" at its last '='.
func parseCheck(s string) (checkEntry, error) {
	i := strings.LastIndexByte(s, '=')
	if i < 0 {
		return checkEntry{}, errors.New("has no '=': give PATH=HEX, HEX being a SHA-256 (64 hex digits) or absent")
	}
	p, want := s[:i], s[i+1:]
	if p == "" {
		return checkEntry{}, errors.New("has no path before '='")
	}
	if want != absentHex && !isSHA256Hex(want) {
		return checkEntry{}, fmt.Errorf("has %q after the last '=': give a SHA-256 (64 hex digits) or absent", clipArg(want))
	}
	e := checkEntry{path: p, absent: want == absentHex}
	if !e.absent {
		hex.Decode(e.want[:], []byte(want)) // checked: 64 hex digits
	}
	return e, nil
}

// checkSource gives the entries in order: the arguments, then the lines
// of the check file, streamed (a line at a time, so a list of any length
// takes no more memory than a batch).
type checkSource struct {
	args []string
	name string        // the check file as given
	r    *bufio.Reader // nil: no (more) file
	line int64
}

// next is the next entry; ok false at the end. A malformed entry is
// usage, naming the argument or the line.
func (c *checkSource) next() (e checkEntry, ok bool, err error) {
	if len(c.args) > 0 {
		s := c.args[0]
		c.args = c.args[1:]
		e, err := parseCheck(s)
		if err != nil {
			return e, false, usageErr("check: the argument %q %v", clipArg(s), err)
		}
		return e, true, nil
	}
	for c.r != nil {
		b, rerr := c.r.ReadSlice('\n')
		if rerr == bufio.ErrBufferFull {
			return e, false, usageErr("check-file %s: line %d is longer than %d bytes: give PATH=HEX, one a line", c.name, c.line+1, maxCheckLine)
		}
		if rerr != nil && rerr != io.EOF {
			return e, false, fserr.AsError(rerr)
		}
		if rerr == io.EOF {
			c.r = nil
			if len(b) == 0 {
				break
			}
		}
		c.line++
		b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
		if len(bytes.Trim(b, " \t")) == 0 {
			continue // blank
		}
		e, err := parseCheck(string(b))
		if err != nil {
			return e, false, usageErr("check-file %s: line %d %v", c.name, c.line, err)
		}
		return e, true, nil
	}
	return e, false, nil
}

// StatCheck answers stat --check: each entry's path, in entry order, is
// unchanged (its content hashes to the entry's HEX, or it is absent as
// the entry expects), changed (with what it is now) or an error (denied,
// io, ... as stat of several paths reports them). Each file is opened as
// read opens it (symlinks followed within their root) and read once;
// files are hashed in parallel, a batch at a time. A malformed entry is
// usage, wherever it lies in the list.
func StatCheck(ctx context.Context, sb *sandbox.Sandbox, o CheckOptions) (CheckResult, error) {
	if err := begin(ctx, sb, "stat"); err != nil {
		return CheckResult{}, err
	}
	src := &checkSource{args: o.Entries}
	if o.File != "" {
		f, err := openInput(sb, o.File)
		if err != nil {
			return CheckResult{}, err
		}
		defer f.Close()
		src.name, src.r = o.File, bufio.NewReaderSize(f, maxCheckLine)
	}
	res := CheckResult{Changed: []CheckChanged{}, Unchanged: []string{}}
	opener := sb.NewOpener() // the directories of the list, walked to once
	defer opener.Close()
	pg := newPager(sb, 0)
	last, skip := int64(-1), int64(0) // last: the index of the last entry given
	if o.From != nil {
		last = o.From.Arg
		skip = last + 1
	}
	next := func() string {
		if last < 0 {
			return ""
		}
		return o.next(Cursor{Arg: last})
	}
	var (
		idx   int64 // index of the next entry src gives
		total int   // entries seen, for PathErrors.end
		done  bool  // the list is cut: the rest is only checked for form
		batch = make([]checkEntry, 0, checkBatch)
		outs  = make([]checkOutcome, checkBatch)
		bufs  sync.Pool
	)
	bufs.New = func() any { return &checkWorker{buf: make([]byte, 128<<10), h: sha256.New()} }
	for {
		batch = batch[:0]
		base := idx
		var err error
		for len(batch) < checkBatch {
			e, ok, perr := src.next()
			if perr != nil {
				return CheckResult{}, perr
			}
			if !ok {
				break
			}
			idx++
			if idx-1 < skip || done {
				continue // before the cursor, or after the cut: its form was checked
			}
			batch = append(batch, e)
		}
		if len(batch) == 0 {
			if idx > base {
				continue // a batch of skipped entries: read on
			}
			break
		}
		base = idx - int64(len(batch)) // index of batch[0]
		total += len(batch)
		if err = hashBatch(ctx, opener, batch, outs, &bufs); err != nil && !timedOut(ctx, err) {
			return CheckResult{}, err // cancelled
		}
		for i, e := range batch {
			out := outs[i]
			if !out.done && ctx.Err() != nil && !timedOut(ctx, ctx.Err()) {
				return CheckResult{}, ctx.Err() // cancelled
			}
			if !out.done || (out.err != nil && timedOut(ctx, out.err)) {
				// The deadline came before this entry was answered: the
				// entries before it stand.
				cutByDeadline(ctx, &res.Truncation)
				res.NextCursor = next()
				done = true
				break
			}
			if out.err != nil {
				if ctx.Err() != nil && !timedOut(ctx, ctx.Err()) {
					return CheckResult{}, ctx.Err()
				}
				res.PathErrors.add(sb, e.path, out.err, true)
				last = base + int64(i)
				continue
			}
			unchanged := (e.absent && !out.exists) || (!e.absent && out.hashed && out.sum == e.want)
			var size int64
			var ch CheckChanged
			if unchanged {
				size = jsonStrLen(e.path)
			} else {
				ch = CheckChanged{Path: e.path, Exists: out.exists}
				if out.hashed {
					s := hex.EncodeToString(out.sum[:])
					ch.SHA256 = &s
				}
				size = jsonLen(ch)
			}
			if lim := pg.admit(size); lim != "" {
				res.cut(lim, next())
				done = true
				break
			}
			if unchanged {
				res.Unchanged = append(res.Unchanged, e.path)
			} else {
				res.Changed = append(res.Changed, ch)
			}
			last = base + int64(i)
		}
		if done && timedOut(ctx, ctx.Err()) {
			break // the deadline: the rest of the list is not read
		}
	}
	res.Count = int64(len(res.Changed) + len(res.Unchanged))
	if err := res.PathErrors.end(total); err != nil {
		return CheckResult{}, err
	}
	return res, nil
}

// hashBatch finds what each entry's file is, in parallel: outs[i] for
// batch[i]. Its error is the context's, when the call ran out of time or
// was cancelled (outs then holds what was found before).
func hashBatch(ctx context.Context, sb *sandbox.Opener, batch []checkEntry, outs []checkOutcome, bufs *sync.Pool) error {
	clear(outs[:len(batch)])
	workers := min(runtime.GOMAXPROCS(0), len(batch))
	var next atomic.Int64
	var wg sync.WaitGroup
	work := func() {
		defer wg.Done()
		w := bufs.Get().(*checkWorker)
		defer bufs.Put(w)
		for {
			i := int(next.Add(1) - 1)
			if i >= len(batch) || ctx.Err() != nil {
				return
			}
			outs[i] = checkFile(ctx, sb, batch[i].path, w)
		}
	}
	wg.Add(workers)
	for range workers - 1 {
		go work()
	}
	work()
	wg.Wait()
	return ctx.Err()
}

// checkFile is what the file at p is now: absent, a regular file with
// its content's hash, something else that exists (a directory), or an
// error (denied, io, the deadline). A file written to while it is read
// is a conflict, never a hash of no version of it.
func checkFile(ctx context.Context, sb *sandbox.Opener, p string, w *checkWorker) checkOutcome {
	out := checkFileRead(ctx, sb, p, w)
	out.done = true
	return out
}

// checkWorker is one worker's read buffer and hash.
type checkWorker struct {
	buf []byte
	h   hash.Hash
}

func checkFileRead(ctx context.Context, sb *sandbox.Opener, p string, w *checkWorker) checkOutcome {
	f, err := sb.Open(p)
	if err != nil {
		switch {
		case fserr.Absent(err):
			return checkOutcome{}
		case fserr.AsError(err).Code == fserr.CodeNotAFile:
			return checkOutcome{exists: true} // a directory: it exists, with no content to hash
		}
		return checkOutcome{err: err}
	}
	defer f.Close()
	// Read up to the size the file had when opened, then make sure it
	// still has that size and mtime: the hash is of the whole file as it
	// was, never of a file written meanwhile (that is a conflict).
	h, buf := w.h, w.buf
	h.Reset()
	var n int64
	for n < f.Info.Size {
		if err := ctx.Err(); err != nil {
			return checkOutcome{err: err}
		}
		k, rerr := f.Read(buf[:min(int64(len(buf)), f.Info.Size-n)])
		h.Write(buf[:k])
		n += int64(k)
		if rerr == io.EOF || (k == 0 && rerr == nil) {
			break
		}
		if rerr != nil {
			return checkOutcome{err: fserr.AsError(rerr)}
		}
	}
	if err := f.Settled(); err != nil {
		return checkOutcome{err: err}
	}
	if n != f.Info.Size {
		return checkOutcome{err: fserr.Errorf(fserr.CodeConflict, p, "%s changed while it was read (%d bytes when opened, %d read): check it again", p, f.Info.Size, n)}
	}
	out := checkOutcome{exists: true, hashed: true}
	h.Sum(out.sum[:0])
	return out
}

// Outcome: a limit's cut, and the paths that failed.
func (r CheckResult) Outcome() spec.Outcome {
	return spec.Outcome{Cut: r.Truncation.outcomeCut(), Failures: r.PathErrors.failures()}
}

// Text is a line a path, as sha256sum -c prints: "PATH: OK" for an
// unchanged path, "PATH: CHANGED" (with the current sha256, or
// "missing" for a path that no longer exists, "not a file" for a
// directory) for a changed one; changed paths first.
func (r CheckResult) Text(w spec.TextWriter) error {
	for _, c := range r.Changed {
		what := "missing"
		switch {
		case c.SHA256 != nil:
			what = *c.SHA256
		case c.Exists:
			what = "not a file"
		}
		if _, err := fmt.Fprintf(w, "%s: CHANGED %s\n", w.Name(c.Path), what); err != nil {
			return err
		}
	}
	for _, p := range r.Unchanged {
		if _, err := fmt.Fprintf(w, "%s: OK\n", w.Name(p)); err != nil {
			return err
		}
	}
	return nil
}
