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
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
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
	j := s.jn.open
	if j == nil {
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
	if w.cur == nil || w.curStat == nil || w.s.jn.dir == "" || nlink(w.curStat) != 1 {
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
// newly stored.
func (j *journal) adopt(w *WriteTarget, tmp, sum string, size int64) (int64, error) {
	name := path.Join("objects", sum)
	if _, err := j.r.Lstat(name); err == nil {
		return 0, w.dir.Remove(tmp)
	}
	if err := j.r.MkdirAll("objects", 0o700); err != nil {
		return 0, err
	}
	objs, err := j.r.Open("objects")
	if err != nil {
		return 0, err
	}
	defer objs.Close()
	if err := renameInto(w, tmp, objs, sum); err != nil {
		// Another filesystem (or no cross-directory rename): copy.
		f, oerr := openNoFollow(w, tmp, openReadFlags, 0)
		if oerr != nil {
			return 0, oerr
		}
		got, n, serr := j.saveObject(f, size)
		f.Close()
		if serr == nil && got != sum {
			serr = fmt.Errorf("the old file changed while it was kept")
		}
		w.dir.Remove(tmp)
		return n, serr
	}
	return size, objs.Sync()
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
	j := s.jn.open
	sum, stored, err := j.saveObject(f, fi.Size())
	if err != nil {
		return nil, 0, Errorf(CodeIO, j.dir, "the journal %s cannot keep the prior content of %s: %v", j.dir, given, err)
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
func (j *journal) saveStream(r io.Reader) (string, int64, error) {
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
	if s.jn.open == nil {
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
	j := s.jn.open
	if j == nil {
		return nil, 0, nil
	}
	var out []PathChange
	var stored int64
	base := w.Rel()
	_, err := s.Walk(context.Background(), w.Path, WalkOptions{Hidden: true, NoIgnore: true, MaxDepth: -1, workers: -1}, func(e *Entry) error {
		defer e.Release()
		rel := path.Join(base, e.Rel)
		switch e.Type {
		case "dir":
			out = append(out, PathChange{Path: rel, Before: &FileState{Type: "dir"}})
		case "symlink":
			target, err := w.rt.r.Readlink(rel)
			if err != nil {
				return ioErr(rel, err)
			}
			out = append(out, PathChange{Path: rel, Before: &FileState{Type: "symlink", Target: target}})
		case "file":
			f, err := e.Open()
			if err != nil {
				return err
			}
			sum, n, err := j.saveStream(f)
			mode := f.Info.Mode.Perm()
			size := f.Info.Size
			f.Close()
			if err != nil {
				return Errorf(CodeIO, j.dir, "the journal %s cannot keep %s: %v", j.dir, rel, err)
			}
			stored += n
			out = append(out, PathChange{Path: rel, Before: &FileState{Type: "file", SHA256: sum, Size: size, Mode: fmt.Sprintf("%04o", mode)}})
		}
		return nil
	})
	return out, stored, err
}

// record appends a change (under the write lock) and returns its id ("":
// no journal). The oldest changes are then evicted while the journal's
// stored bytes exceed [journal] max_bytes.
func (s *Sandbox) record(paths []PathChange, stored int64, undoes string, moved ...Move) (string, error) {
	return s.recordChange(Change{Paths: paths, Bytes: stored, Undoes: undoes, Moved: moved})
}

// recordChange appends c (its id and time filled in).
func (s *Sandbox) recordChange(c Change) (string, error) {
	paths, stored, undoes, moved := c.Paths, c.Bytes, c.Undoes, c.Moved
	j := s.jn.open
	if j == nil || s.quiet || len(paths)+len(moved) == 0 {
		return "", nil
	}
	if paths == nil {
		paths = []PathChange{}
	}
	next, total, err := j.counters()
	if err != nil {
		return "", err
	}
	// The id is taken before the record is written: a crash between the
	// two leaves a gap in the ids, never an id used twice.
	j.setCounters(next+1, total+stored)
	c = Change{ID: strconv.Itoa(next), Time: timeNow().UTC().Format(time.RFC3339Nano), Command: s.command(), Paths: paths, Moved: moved, MovesFirst: c.MovesFirst, Bytes: stored, Undoes: undoes}
	line, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	f, err := j.r.OpenFile(changesFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return "", Errorf(CodeIO, j.dir, "the change was made, but the journal %s cannot record it: %v", j.dir, err)
	}
	_, err = f.Write(append(line, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", Errorf(CodeIO, j.dir, "the change was made, but the journal %s cannot record it: %v", j.dir, err)
	}
	if total += stored; total > s.policy.Journal.MaxBytes {
		if changes, err := j.changes(); err == nil {
			j.setCounters(next+1, j.evict(changes, s.policy.Journal.MaxBytes))
		}
	}
	return c.ID, nil
}

// counters is the next change id and the bytes the recorded changes
// keep, from the journal's small counter file (rebuilt from the change
// list when missing), so recording a change does not read the history.
func (j *journal) counters() (next int, total int64, err error) {
	if b, err := j.r.ReadFile(countersFile); err == nil {
		if _, err := fmt.Sscanf(string(b), "%d %d", &next, &total); err == nil && next > 0 {
			return next, total, nil
		}
	}
	changes, err := j.changes()
	if err != nil {
		return 0, 0, err
	}
	next = 1
	for _, c := range changes {
		if id, _ := strconv.Atoi(c.ID); id >= next {
			next = id + 1
		}
		total += c.Bytes
	}
	return next, total, nil
}

// setCounters writes the counter file (atomically; losing it only costs
// a rebuild).
func (j *journal) setCounters(next int, total int64) {
	tmp := tempName()
	if j.r.WriteFile(tmp, fmt.Appendf(nil, "%d %d\n", next, total), 0o600) == nil && j.r.Rename(tmp, countersFile) == nil {
		return
	}
	j.r.Remove(tmp)
}

const countersFile = "counters"

// changes reads every recorded change, oldest first.
func (j *journal) changes() ([]Change, error) {
	b, err := j.r.ReadFile(changesFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, Errorf(CodeIO, j.dir, "the journal %s cannot be read: %v", j.dir, err)
	}
	// Lines are decoded in parallel, in chunks (10,000 changes are a few
	// MiB of JSON); a torn last line (a crash mid-append) is skipped.
	lines := bytes.Split(b, []byte("\n"))
	decoded := make([]*Change, len(lines))
	const chunk = 512
	var wg sync.WaitGroup
	for lo := 0; lo < len(lines); lo += chunk {
		hi := min(lo+chunk, len(lines))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				if len(lines[i]) == 0 {
					continue
				}
				var c Change
				if json.Unmarshal(lines[i], &c) == nil {
					decoded[i] = &c
				}
			}
		}()
	}
	wg.Wait()
	out := make([]Change, 0, len(lines))
	for _, c := range decoded {
		if c != nil {
			out = append(out, *c)
		}
	}
	return out, nil
}

// evict drops the oldest changes until the stored bytes fit in nine
// tenths of max (keeping the newest change always), then every object no
// remaining change refers to; it returns the bytes left.
func (j *journal) evict(changes []Change, max int64) int64 {
	var total int64
	for _, c := range changes {
		total += c.Bytes
	}
	// Down to nine tenths of max, so that a journal at its limit evicts
	// now and then, not at every change (each eviction rewrites the list
	// and scans the objects).
	target := max - max/10
	drop := 0
	for drop < len(changes)-1 && total > target {
		total -= changes[drop].Bytes
		drop++
	}
	j.rewrite(changes[drop:])
	return total
}

// rewrite replaces the change list with keep and removes the objects it
// no longer refers to.
func (j *journal) rewrite(keep []Change) {
	var b strings.Builder
	used := map[string]bool{}
	for _, c := range keep {
		line, _ := json.Marshal(c)
		b.Write(line)
		b.WriteByte('\n')
		for _, p := range c.Paths {
			if p.Before != nil {
				used[p.Before.SHA256] = true
			}
		}
	}
	tmp := tempName()
	if err := j.r.WriteFile(tmp, []byte(b.String()), 0o600); err != nil || j.r.Rename(tmp, changesFile) != nil {
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

// History is the journal's changes, newest first; "" path lists all, else
// those touching path (a workdir-relative real path) or a path below it.
func (s *Sandbox) History(p string) ([]Change, error) {
	if err := s.useJournal(); err != nil {
		return nil, err
	}
	j := s.jn.open
	if j == nil {
		return nil, Errorf(CodeConfig, "", "there is no journal: %s", s.jn.off)
	}
	changes, err := j.changes()
	if err != nil {
		return nil, err
	}
	out := []Change{}
	for i := len(changes) - 1; i >= 0; i-- {
		c := changes[i]
		under := func(q string) bool { return p == "." || q == p || strings.HasPrefix(q, p+"/") }
		if p == "" || slices.ContainsFunc(c.Paths, func(pc PathChange) bool { return under(pc.Path) }) ||
			slices.ContainsFunc(c.Moved, func(m Move) bool { return under(m.From) || under(m.To) }) {
			out = append(out, c)
		}
	}
	return out, nil
}

// PurgeJournal forgets the changes whose every path the policy in force
// may write, and the content kept only for them; a change with a path it
// may not write (or that lies outside every writable root) stays. It
// returns how many changes went and how many stayed. Not undoable.
func (s *Sandbox) PurgeJournal() (removed, kept int, err error) {
	err = s.change(nil, []*root{s.work}, func() error {
		j := s.jn.open
		if j == nil {
			return nil
		}
		changes, err := j.changes()
		if err != nil {
			return err
		}
		var keep []Change
		var stored int64
		for _, c := range changes {
			if s.mayWriteAll(c) {
				removed++
				continue
			}
			keep = append(keep, c)
			stored += c.Bytes
		}
		kept = len(keep)
		j.rewrite(keep)
		if next, _, err := j.counters(); err == nil {
			j.setCounters(next, stored) // ids go on rising: an old id never names a new change
		}
		return nil
	})
	return removed, kept, err
}

// mayWriteAll: the policy in force may change every path c names (its
// paths and both ends of its moves), as the door would decide it now.
func (s *Sandbox) mayWriteAll(c Change) bool {
	may := func(p string) bool {
		_, err := s.probeChange(p, false, false)
		return err == nil || AsError(err).Code == CodeNotFound
	}
	for _, pc := range c.Paths {
		if !may(pc.Path) {
			return false
		}
	}
	for _, m := range c.Moved {
		if !may(m.From) || !may(m.To) {
			return false
		}
	}
	return true
}

// ObjectOf opens the kept content with this hash (for undo).
func (s *Sandbox) objectOf(sum string) (*os.File, error) {
	j := s.jn.open
	if j == nil || len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" {
		return nil, Errorf(CodeNotFound, "", "the journal holds no content %q", sum)
	}
	f, err := j.r.Open(path.Join("objects", sum))
	if err != nil {
		return nil, Errorf(CodeNotFound, "", "the journal no longer holds the content %s (evicted?)", sum)
	}
	return f, nil
}

// JournalContent reads kept content by its hash (at most max bytes).
func (s *Sandbox) JournalContent(sum string, max int64) ([]byte, error) {
	f, err := s.objectOf(sum)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, satAdd(max, 1)))
	if err != nil {
		return nil, Errorf(CodeIO, "", "reading kept content %s: %v", sum, err)
	}
	if int64(len(b)) > max {
		return nil, &Error{Code: CodeTooLarge, Rule: RuleSizeCap, Msg: fmt.Sprintf("the kept content %s is over max_write_bytes = %d", sum, max)}
	}
	// What comes back is what was kept, or nothing: a damaged object is
	// never restored.
	if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != sum {
		return nil, Errorf(CodeIO, "", "the kept content %s is damaged in the journal: it cannot be restored", sum)
	}
	return b, nil
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
		return "", deny(RuleRoot, p, "%s is outside every writable root: only their changes are recorded", p)
	}
	return t.rt.journalPath(path.Clean(t.rel)), nil
}
