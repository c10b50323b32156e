package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// The journal's records: what each change did, the content it replaced,
// history, and what undo needs.

// Change is one recorded change to the workdir: the state of each path
// it touched before and after. The journal keeps each prior content
// (objects/SHA256, one copy per content) until the change is evicted.
type Change struct {
	ID      string       `json:"change_id"`
	Time    string       `json:"time"` // RFC 3339, UTC
	Command string       `json:"command"`
	Paths   []PathChange `json:"paths"`
	Moved   []Move       `json:"moved,omitempty"` // entries renamed (mv), in order
	// MovesFirst: the renames came before the path changes (an undo's
	// record); otherwise after them (mv --force replaced a file first).
	MovesFirst bool   `json:"moves_first,omitempty"`
	Bytes      int64  `json:"bytes"`            // prior content this change stored in the journal
	Undoes     string `json:"undoes,omitempty"` // the change an undo took back
	// Kept: the journal holds the prior content of every path; false for
	// a change larger than [journal] max_bytes, recorded without it (undo
	// refuses it).
	Kept bool `json:"kept"`
	// Omitted counts the paths and moves of a change whose record alone
	// would not fit in max_bytes: it is recorded without them (no name,
	// no hash), so that the bound holds.
	Omitted int `json:"omitted,omitempty"`
	// Held is what the records before this one hold (cost): with the
	// newest record's own cost, the journal's total, read from the list's
	// end when the next change is recorded. Not shown; nil in records
	// written before it was kept.
	Held *int64 `json:"held,omitempty" schema:"-"`

	j    *journal // the journal it was read from
	seq  int      // its id in that journal
	size int64    // its record's length on disk
}

// PathChange is one path of a change; a nil state is "absent".
type PathChange struct {
	Path   string     `json:"path"` // workdir-relative, real
	Before *FileState `json:"before"`
	After  *FileState `json:"after"`
}

// Move is an entry renamed by a change (a file or a whole directory).
type Move struct {
	From string `json:"from"` // workdir-relative, real
	To   string `json:"to"`
}

// FileState is what a path held: a regular file's content (by hash),
// size and mode; a directory; or a symlink and its target.
type FileState struct {
	Type   string `json:"type"` // "file", "dir" or "symlink"
	SHA256 string `json:"sha256,omitempty"`
	Size   int64  `json:"size"`
	Mode   string `json:"mode,omitempty"` // permission bits, octal
	Target string `json:"target,omitempty"`
}

const changesFile = "changes.jsonl"

// SetCommand names the operation the sandbox runs for (its journal
// records say which command made each change). Operations call it first;
// operations run at once on one sandbox share it (the last one named
// wins), so a host that runs calls concurrently gives each a ForCall view.
func (s *Sandbox) SetCommand(name string) { s.cmd.Store(&name) }

func (s *Sandbox) command() string {
	if p := s.cmd.Load(); p != nil {
		return *p
	}
	return ""
}

// keepBefore saves the file now at w's name (opened without following,
// under the write lock, checked like a read) into the journal and
// returns its state and the bytes newly stored; nil when there is no
// file there or no journal.
func (s *Sandbox) keepBefore(w *WriteTarget) (*FileState, int64, error) {
	if s.jn.cur == nil {
		return nil, 0, nil
	}
	f, err := openNoFollow(w, w.Name, openReadFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, noFollowErr(err, w.Path)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, ioErr(w.Path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, nil // a symlink or special file: not recorded (yet)
	}
	return s.keepFile(f, fi, w.Path)
}

// hashed is the hash of a target's current file, taken ahead of the
// write lock (Commit).
type hashed struct {
	sum string
	err error
}

// hashAhead starts hashing the target's current file (the one it opened
// and checked) while the new content is written, for the journal's
// record; nil without a journal, without a current file, or when the file
// has other links (its inode is never moved into the journal then).
func (w *WriteTarget) hashAhead() chan hashed {
	if w.cur == nil || w.curStat == nil || w.s.jn.base == "" || nlink(w.curStat) != 1 {
		return nil
	}
	ch := make(chan hashed, 1)
	cur, size := w.cur, w.curStat.Size()
	go func() {
		if err := w.s.useJournal(); err != nil {
			ch <- hashed{err: err}
			return
		}
		h := sha256.New()
		_, err := io.Copy(h, io.NewSectionReader(cur, 0, size))
		ch <- hashed{hex.EncodeToString(h.Sum(nil)), err}
	}()
	return ch
}

// adopt moves the old file an exchange left at tmp (in w's directory)
// into the journal as objects/sum, or drops it when that content is kept
// already; across filesystems it copies, then drops. It returns the bytes
// newly stored, and synced, which waits for the objects directory's
// fsync: that runs while the caller syncs its own directory and records
// the change (concurrent fsyncs on one filesystem share a commit).
func (j *journal) adopt(w *WriteTarget, tmp, sum string, size int64) (n int64, synced func() error, err error) {
	done := func() error { return nil }
	name := path.Join("objects", sum)
	if _, err := j.r.Lstat(name); err == nil {
		return 0, done, w.dir.Remove(tmp)
	}
	if !j.fits(size) {
		j.unkept = true
		return 0, done, w.dir.Remove(tmp)
	}
	if err := j.r.MkdirAll("objects", 0o700); err != nil {
		return 0, done, err
	}
	objs, err := j.r.Open("objects")
	if err != nil {
		return 0, done, err
	}
	if err := renameInto(w, tmp, objs, sum); err != nil {
		defer objs.Close()
		// Another filesystem (or no cross-directory rename): copy.
		f, oerr := openNoFollow(w, tmp, openReadFlags, 0)
		if oerr != nil {
			return 0, done, oerr
		}
		got, n, serr := j.saveObject(f, size)
		f.Close()
		if serr == nil && got != sum {
			serr = fmt.Errorf("the old file changed while it was kept")
		}
		w.dir.Remove(tmp)
		return n, done, serr
	}
	ch := make(chan error, 1)
	go func() {
		ch <- objs.Sync()
		objs.Close()
	}()
	return size, func() error { return <-ch }, nil
}

// saveObject keeps the n bytes of f from offset 0 as objects/SHA256
// (synced), unless that content is already there: it hashes f first, so
// kept content is never copied twice, then copies it (copy_file_range
// where the kernel offers it). It returns the hash and the bytes newly
// stored.
func (j *journal) saveObject(f *os.File, n int64) (string, int64, error) {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, n)); err != nil {
		return "", 0, err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if _, err := j.r.Lstat(path.Join("objects", sum)); err == nil {
		return sum, 0, nil
	}
	if !j.fits(n) {
		j.unkept = true
		return sum, 0, nil
	}
	return j.putObject(func(out *os.File) (string, int64, error) {
		copied, err := io.Copy(out, io.NewSectionReader(f, 0, n))
		if err == nil && copied != n {
			err = io.ErrUnexpectedEOF
		}
		return sum, copied, err
	})
}

// putObject writes an object through write into a synced temporary file
// in objects/ and names it by the hash write returns (dropping it when
// that content is there already); it returns the hash and the bytes
// newly stored.
func (j *journal) putObject(write func(*os.File) (string, int64, error)) (string, int64, error) {
	if err := j.r.MkdirAll("objects", 0o700); err != nil {
		return "", 0, err
	}
	tmp := path.Join("objects", tempName())
	out, err := j.r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", 0, err
	}
	sum, n, err := write(out)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	name := path.Join("objects", sum)
	if err == nil {
		if _, serr := j.r.Lstat(name); serr == nil {
			j.r.Remove(tmp)
			return sum, 0, nil
		}
		err = j.r.Rename(tmp, name)
	}
	if err != nil {
		j.r.Remove(tmp)
		return "", 0, err
	}
	return sum, n, j.syncDir("objects")
}

// keepFile keeps an open, checked regular file's content in the journal
// and returns its state.
func (s *Sandbox) keepFile(f *os.File, fi fs.FileInfo, given string) (*FileState, int64, error) {
	j := s.jn.cur
	sum, stored, err := j.saveObject(f, fi.Size())
	if err != nil {
		return nil, 0, fserr.Errorf(fserr.CodeIO, j.dir, "the journal %s cannot keep the prior content of %s: %v", j.dir, given, err)
	}
	return &FileState{Type: "file", SHA256: sum, Size: fi.Size(), Mode: fmt.Sprintf("%04o", fi.Mode().Perm())}, stored, nil
}

// stateOf describes a file the call just wrote (its temporary file or
// the name), for a change's after state.
func stateOf(fi fs.FileInfo, sum string) *FileState {
	return &FileState{Type: "file", SHA256: sum, Size: fi.Size(), Mode: fmt.Sprintf("%04o", fi.Mode().Perm())}
}

// saveStream keeps r's content as objects/SHA256, hashing while it
// copies (for files read through the walker); it returns the hash and
// the bytes newly stored.
func (j *journal) saveStream(r io.Reader, size int64) (string, int64, error) {
	if !j.fits(size) {
		j.unkept = true
		h := sha256.New()
		_, err := io.Copy(h, r)
		return hex.EncodeToString(h.Sum(nil)), 0, err
	}
	return j.putObject(func(out *os.File) (string, int64, error) {
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(out, h), r)
		return hex.EncodeToString(h.Sum(nil)), n, err
	})
}

// keepEntry keeps what a path holds now, for mv --force's replaced file
// and rm: a regular file's content, a symlink's target, or a directory
// (as itself: keepTree keeps what lies below). Nil without a journal.
func (s *Sandbox) keepEntry(w *WriteTarget) (*FileState, int64, error) {
	if s.jn.cur == nil {
		return nil, 0, nil
	}
	fi, err := w.entryNow()
	if err != nil {
		return nil, 0, err
	}
	switch {
	case fi.Mode().IsRegular():
		return s.keepBefore(w)
	case fi.IsDir():
		return &FileState{Type: "dir", Mode: fmt.Sprintf("%04o", fi.Mode().Perm())}, 0, nil
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := w.dir.Readlink(w.Name)
		if err != nil {
			return nil, 0, ioErr(w.Path, err)
		}
		return &FileState{Type: "symlink", Target: target}, 0, nil
	}
	return nil, 0, nil // a special file: not kept
}

// keepTree keeps everything below the directory w (rm -r), read through
// the walker with every check a read gets: each file's content, each
// directory, each symlink's target, parents before children.
func (s *Sandbox) keepTree(w *WriteTarget) ([]PathChange, int64, error) {
	j := s.jn.cur
	if j == nil {
		return nil, 0, nil
	}
	var out []PathChange
	var stored int64
	base, baseRel := w.Rel(), w.rootRel()
	_, err := s.Walk(context.Background(), w.Path, WalkOptions{Hidden: true, NoIgnore: true, MaxDepth: -1, workers: -1}, func(e *Entry) error {
		defer e.Release()
		rel := path.Join(base, e.Rel)
		switch e.Type {
		case "dir":
			out = append(out, PathChange{Path: rel, Before: &FileState{Type: "dir"}})
		case "symlink":
			target, err := w.rt.r.Readlink(path.Join(baseRel, e.Rel))
			if err != nil {
				return ioErr(rel, err)
			}
			out = append(out, PathChange{Path: rel, Before: &FileState{Type: "symlink", Target: target}})
		case "file":
			f, err := e.Open()
			if err != nil {
				return err
			}
			mode := f.Info.Mode.Perm()
			size := f.Info.Size
			sum, n, err := j.saveStream(f, size)
			f.Close()
			if err != nil {
				return fserr.Errorf(fserr.CodeIO, j.dir, "the journal %s cannot keep %s: %v", j.dir, rel, err)
			}
			stored += n
			out = append(out, PathChange{Path: rel, Before: &FileState{Type: "file", SHA256: sum, Size: size, Mode: fmt.Sprintf("%04o", mode)}})
		}
		return nil
	})
	return out, stored, err
}

// recordChange appends c (its id, time and kept filled in) to the journal
// the running change records in. Its paths are named as the journal
// names them (relative below the journal's root, absolute elsewhere).
// The change is kept whole when it fits in [journal] max_bytes; a change
// larger than that is recorded without its prior contents (kept false).
// Then the oldest changes are evicted, whole, while the journal holds
// more than max_bytes.
func (s *Sandbox) recordChange(c Change) (string, error) {
	j := s.jn.cur
	if j == nil || len(c.Paths)+len(c.Moved) == 0 {
		return "", nil
	}
	if j.ob != nil {
		return s.recordInStore(j, c)
	}
	f, err := j.r.OpenFile(changesFile, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return "", fserr.Errorf(fserr.CodeIO, j.dir, "the change was made, but the journal %s cannot record it: %v", j.dir, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fserr.Errorf(fserr.CodeIO, j.dir, "the change was made, but the journal %s cannot record it: %v", j.dir, err)
	}
	// The id and the total come from the newest record (under the
	// change's lock): a crash before this record lands leaves no record
	// with its id, so the id is free again.
	next, total, err := j.tally(f, fi.Size())
	if err != nil {
		return "", err
	}
	rec, line, budget, err := s.newRecord(j, c, next, total)
	if err != nil {
		return "", err
	}
	rec.size = int64(len(line)) + 1
	// A line torn by a crash mid-append is ended first, so it does not
	// swallow this one.
	var last [1]byte
	if fi.Size() > 0 {
		if _, rerr := f.ReadAt(last[:], fi.Size()-1); rerr == nil && last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	_, err = f.Write(append(line, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		return "", fserr.Errorf(fserr.CodeIO, j.dir, "the change was made, but the journal %s cannot record it: %v", j.dir, err)
	}
	if total = satAdd(total, rec.cost(rec.size)); total > budget {
		if changes, err := j.all(); err == nil {
			total = j.evict(changes, budget)
		}
	}
	j.keepCounters(next+1, total)
	return j.tag + rec.ID, nil
}

// newRecord is c's record as the journal j stores it (id next, the
// records before it holding total), its line, and the budget it was
// weighed against: kept whole when it fits in [journal] max_bytes, else
// without its prior contents (kept false), and without its paths when
// even that does not fit.
func (s *Sandbox) newRecord(j *journal, c Change, next int, total int64) (Change, []byte, int64, error) {
	held := total
	rec := Change{Held: &held, ID: strconv.Itoa(next), Time: timeNow().UTC().Format(time.RFC3339Nano), Command: s.command(), Paths: []PathChange{}, Moved: c.Moved,
		MovesFirst: c.MovesFirst, Bytes: c.Bytes, Kept: !j.unkept}
	if c.Undoes != "" {
		if uj, seq, ok := s.parseID(c.Undoes); ok && uj == j {
			rec.Undoes = strconv.Itoa(seq)
		}
	}
	for _, pc := range c.Paths {
		pc.Path = s.storedPath(j, pc.Path)
		rec.Paths = append(rec.Paths, pc)
	}
	rec.Moved = nil
	for _, m := range c.Moved {
		rec.Moved = append(rec.Moved, Move{From: s.storedPath(j, m.From), To: s.storedPath(j, m.To)})
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return Change{}, nil, 0, err
	}
	// The plans under way count only near the bound (reading them costs a
	// directory listing).
	budget := s.policy.Journal.MaxBytes - journalFixed
	if satAdd(total, rec.cost(int64(len(line))+1)) > budget-64<<10 {
		budget = j.budget(s.policy.Journal.MaxBytes)
	}
	if rec.Kept && rec.cost(int64(len(line))+1) > budget {
		rec.Kept = false
	}
	if !rec.Kept {
		// Too large to keep: its prior contents go (those no other change
		// refers to), and so does its claim on them.
		j.dropObjects(rec)
		rec.Bytes = 0
		if line, err = json.Marshal(rec); err != nil {
			return Change{}, nil, 0, err
		}
		if rec.cost(int64(len(line))+1) > budget {
			rec.Omitted, rec.Paths, rec.Moved = len(rec.Paths)+len(rec.Moved), []PathChange{}, nil
			if line, err = json.Marshal(rec); err != nil {
				return Change{}, nil, 0, err
			}
		}
	}
	return rec, line, budget, nil
}

// journalFixed is what a journal holds besides its changes: its
// directory, identity.json, the marker, pending/, objects/,
// changes.jsonl and the counter file, at 4 KiB each.
const journalFixed = 7 * 4096

// budget is what j's changes may hold on disk: max_bytes less the fixed
// part and the plans under way (each its size plus 4 KiB).
func (j *journal) budget(max int64) int64 {
	b := max - journalFixed
	if j.ob != nil {
		return b - j.objPendingBytes()
	}
	if d, err := j.r.Open("pending"); err == nil {
		names, _ := d.Readdirnames(-1)
		d.Close()
		for _, n := range names {
			if fi, err := j.r.Lstat(path.Join("pending", n)); err == nil {
				b -= fi.Size() + 4096
			}
		}
	}
	return b
}

// fits: a prior content of n bytes may be kept (it and its file fit in
// max_bytes by themselves).
func (j *journal) fits(n int64) bool {
	return satAdd(n, 4096) <= j.max-journalFixed
}

// cost is what c holds on disk: its record (size bytes) and, when kept,
// each prior content and its file (a content shared by two changes is
// counted for each: the bound errs on the safe side).
func (c Change) cost(size int64) int64 {
	n := size
	if !c.Kept {
		return n
	}
	for _, pc := range c.Paths {
		if pc.Before != nil && pc.Before.Type == "file" {
			n = satAdd(n, satAdd(pc.Before.Size, 4096))
		}
	}
	return n
}

// dropObjects removes the prior contents c names that no recorded change
// refers to (c is being recorded without them).
func (j *journal) dropObjects(c Change) {
	var mine []string
	for _, pc := range c.Paths {
		if pc.Before != nil && pc.Before.SHA256 != "" {
			mine = append(mine, pc.Before.SHA256)
		}
	}
	if len(mine) == 0 {
		return
	}
	changes, err := j.all()
	if err != nil {
		return // kept: an object too many is safe, one too few is not
	}
	used := map[string]bool{}
	for _, o := range changes {
		if !o.Kept {
			continue
		}
		for _, pc := range o.Paths {
			if pc.Before != nil {
				used[pc.Before.SHA256] = true
			}
		}
	}
	for _, sum := range mine {
		if !used[sum] {
			j.removeObject(sum)
		}
	}
}

// counters is the next change id and the bytes the recorded changes
// hold (cost): tally over the change list.
func (j *journal) counters() (next int, total int64, err error) {
	if j.ob != nil {
		next, total, _, err = j.objCounters()
		return next, total, err
	}
	f, err := j.r.Open(changesFile)
	if errors.Is(err, fs.ErrNotExist) {
		return j.tally(nil, 0)
	}
	if err != nil {
		return 0, 0, fserr.Errorf(fserr.CodeIO, j.dir, "the journal %s cannot be read: %v", j.dir, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, fserr.Errorf(fserr.CodeIO, j.dir, "the journal %s cannot be read: %v", j.dir, err)
	}
	return j.tally(f, fi.Size())
}

// tally is the next change id and the bytes the recorded changes hold,
// given the change list open (f; nil: none yet) and its size. The newest
// record gives both, read from the list's end: its id, and what it and
// the records before it hold (Held). Recording a change thus writes no
// counter beside its record. The counter file, where there is one, is a
// floor for ids (purge writes it, so ids rise past dropped changes) and
// the total of a newest record from before Held (an earlier fsbox, which
// writes it after every record, and reads it first: keepCounters). A
// list whose end is torn, or from before Held without a counter file, is
// read whole.
func (j *journal) tally(f *os.File, size int64) (next int, total int64, err error) {
	floor, fileTotal, present := j.counterFile()
	if f != nil && size > 0 {
		if c, ok := j.newest(f, size); ok && c.Held != nil {
			return max(floor, c.seq+1), satAdd(*c.Held, c.cost(c.size)), nil
		} else if ok && present {
			return max(floor, c.seq+1), fileTotal, nil
		}
	}
	changes, err := j.all()
	if err != nil {
		return 0, 0, err
	}
	next = floor
	for _, c := range changes {
		if c.seq >= next {
			next = c.seq + 1
		}
		total = satAdd(total, c.cost(c.size))
	}
	return next, total, nil
}

// newest is the list's last record, read back from its end (false: the
// list does not end with a whole record).
func (j *journal) newest(f *os.File, size int64) (Change, bool) {
	for block := int64(4096); ; block *= 8 {
		n := min(block, size)
		b := make([]byte, n)
		if _, err := f.ReadAt(b, size-n); err != nil || b[n-1] != '\n' {
			return Change{}, false
		}
		i := bytes.LastIndexByte(b[:n-1], '\n')
		if i < 0 && n < size {
			continue // a record longer than the block
		}
		return j.decode(b[i+1 : n-1])
	}
}

// counterFile is the counter file's next id (1 without one) and total,
// and whether there is a valid one.
func (j *journal) counterFile() (next int, total int64, ok bool) {
	b, err := j.r.ReadFile(countersFile)
	if err != nil {
		return 1, 0, false
	}
	if _, err := fmt.Sscanf(string(b), "%d %d", &next, &total); err != nil || next < 1 {
		return 1, 0, false
	}
	return next, total, true
}

// keepCounters keeps a counter file that exists true after a record: an
// earlier fsbox sharing the journal takes its next id from it.
func (j *journal) keepCounters(next int, total int64) {
	if _, _, ok := j.counterFile(); ok {
		j.setCounters(next, total)
	}
}

// setCounters writes the counter file (atomically; losing it only costs
// a rebuild).
func (j *journal) setCounters(next int, total int64) {
	if j.ob != nil {
		j.objSetCounters(next, total, ObjectCond{})
		return
	}
	tmp := tempName()
	if j.r.WriteFile(tmp, fmt.Appendf(nil, "%d %d\n", next, total), 0o600) == nil && j.r.Rename(tmp, countersFile) == nil {
		return
	}
	j.r.Remove(tmp)
}

const countersFile = "counters"

// evict drops the oldest changes, whole, until what they hold fits in
// nine tenths of budget (keeping the newest change always), then every
// object no remaining change refers to; it returns what is left.
func (j *journal) evict(changes []Change, budget int64) int64 {
	var total int64
	for _, c := range changes {
		total = satAdd(total, c.cost(c.size))
	}
	// Down to nine tenths, so that a journal at its limit evicts now and
	// then, not at every change (each eviction rewrites the list and
	// scans the objects).
	target := budget - budget/10
	drop := 0
	for drop < len(changes)-1 && total > target {
		total -= changes[drop].cost(changes[drop].size)
		drop++
	}
	if drop > 0 {
		j.rewrite(changes[drop:])
	}
	return total
}

// rewrite replaces the change list with keep and removes the objects it
// no longer refers to.
func (j *journal) rewrite(keep []Change) {
	if j.ob != nil {
		j.objRewrite(keep)
		return
	}
	var b bytes.Buffer
	used := map[string]bool{}
	var held int64
	for _, c := range keep {
		h := held
		c.Held = &h // what the records now before it hold
		line := c.line()
		b.Write(line)
		b.WriteByte('\n')
		held = satAdd(held, c.cost(int64(len(line))+1))
		for _, p := range c.Paths {
			if p.Before != nil && c.Kept {
				used[p.Before.SHA256] = true
			}
		}
	}
	tmp := tempName()
	if err := j.r.WriteFile(tmp, b.Bytes(), 0o600); err != nil || j.r.Rename(tmp, changesFile) != nil {
		j.r.Remove(tmp)
		return
	}
	d, err := j.r.Open("objects")
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, n := range names {
		if !used[n] {
			j.r.Remove(path.Join("objects", n))
		}
	}
}

// PurgeJournal forgets, in each writable root's journal, the changes
// whose every path the policy in force may write, and the content kept
// only for them; a change with a path it may not write (or that lies
// outside every writable root) stays. It returns how many changes went
// and how many stayed. Not undoable.
func (s *Sandbox) PurgeJournal() (removed, kept int, err error) {
	_, err = s.changeIn(s.writable(), nil, func(*Tx) error {
		removed, kept, err = s.purge(true)
		return err
	})
	return removed, kept, err
}

// PurgeJournalPreview counts what PurgeJournal would remove and keep,
// changing nothing (explain purge).
func (s *Sandbox) PurgeJournalPreview() (removed, kept int, err error) {
	if err := s.useJournal(); err != nil {
		return 0, 0, err
	}
	return s.purge(false)
}

// purge counts, and with act removes, the changes PurgeJournal forgets.
func (s *Sandbox) purge(act bool) (removed, kept int, err error) {
	for _, j := range s.journals() {
		changes, err := j.all()
		if err != nil {
			return 0, 0, err
		}
		var keep []Change
		var total int64
		for _, c := range changes {
			if s.mayWriteAll(s.shown(c.clone())) { // (shown changes its slices; c is kept as stored)
				removed++
				continue
			}
			keep = append(keep, c)
			total = satAdd(total, c.cost(c.size))
		}
		kept += len(keep)
		if !act {
			continue
		}
		next, _, err := j.counters()
		if len(keep) < len(changes) {
			j.rewrite(keep)
		}
		if err == nil {
			j.setCounters(next, total) // ids go on rising: an old id never names a new change
		}
	}
	return removed, kept, nil
}

// mayWriteAll: the policy in force may change every path c names (its
// paths and both ends of its moves, as shown), as the door would decide
// it now.
func (s *Sandbox) mayWriteAll(c Change) bool {
	return len(s.Unwritable(c)) == 0
}

// Unwritable is the paths of c (as shown) the policy in force may not
// write now, each with the door's refusal.
func (s *Sandbox) Unwritable(c Change) map[string]error {
	out := map[string]error{}
	try := func(p string) {
		if _, done := out[p]; done {
			return
		}
		if _, err := s.probeChange(p, false, false); err != nil && !fserr.Absent(err) {
			out[p] = err
		}
	}
	for _, pc := range c.Paths {
		try(pc.Path)
	}
	for _, m := range c.Moved {
		try(m.From)
		try(m.To)
	}
	return out
}

// mayWrite: the door would let a change reach p (a shown path) now.
func (s *Sandbox) mayWrite(p string) bool {
	_, err := s.probeChange(p, false, false)
	return err == nil || fserr.Absent(err)
}

// JournalContent reads the content c kept with this hash (at most max
// bytes), from the journal c was read from.
func (s *Sandbox) JournalContent(c Change, sum string, max int64) ([]byte, error) {
	j := c.j
	if j == nil {
		return nil, fserr.Errorf(fserr.CodeNotFound, "", "the journal holds no content %q", sum)
	}
	return j.verified(sum, max)
}

// MayRead reports whether the policy in force may read the journal path p
// (workdir-relative, or absolute below another root; the real path when it
// was recorded): its root and the deny and allow rules, decided on the
// name alone, as the journal recorded it. isDir: the path was a
// directory (allow rules apply to files).
func (s *Sandbox) MayRead(p string, isDir bool) bool {
	t, err := s.resolveLexical(p)
	if err != nil {
		return false
	}
	rel := path.Clean(t.rel)
	if rel == ".." || strings.HasPrefix(rel, "../") || specialFS(t.rt.abs(rel)) {
		return false
	}
	return s.check(t.rt, rel, isDir, AccessRead, p, true) == nil
}

// WorkdirRel resolves p (as a write would) to the name the journal gives
// it, for history's filter: relative to the workdir below it, absolute
// below another writable root; a path outside every writable root is
// denied.
func (s *Sandbox) WorkdirRel(p string) (string, error) {
	t, err := s.pin(p, AccessRead, true)
	if err != nil {
		return "", err
	}
	if !t.rt.writable {
		return "", fserr.Deny(fserr.RuleRoot, p, "%s is outside every writable root: only their changes are recorded", p)
	}
	return t.rt.journalPath(path.Clean(t.rel)), nil
}

// content reads the prior content sum kept in j (at most max bytes).
func (j *journal) content(sum string, max int64) ([]byte, error) {
	if j.ob != nil {
		return j.objContent(sum, max)
	}
	f, err := j.r.Open(path.Join("objects", sum))
	if err != nil {
		return nil, fserr.Errorf(fserr.CodeNotFound, "", "the journal no longer holds the content %s (evicted?)", sum)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, satAdd(max, 1)))
	if err != nil {
		return nil, fserr.Errorf(fserr.CodeIO, "", "reading kept content %s: %v", sum, err)
	}
	if int64(len(b)) > max {
		return nil, &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Msg: fmt.Sprintf("the kept content %s is over max_write_bytes = %d", sum, max)}
	}
	return b, nil
}

// removeObject drops the prior content sum from j.
func (j *journal) removeObject(sum string) {
	if j.ob != nil {
		j.ob.Delete(j.ctx(), objObjects+sum, "")
		return
	}
	j.r.Remove(path.Join("objects", sum))
}
