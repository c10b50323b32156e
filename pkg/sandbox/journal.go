package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// The journal lives outside every root, in a base directory (the policy's
// [journal] dir, or $XDG_STATE_HOME/fsbox/journal) that holds one
// subdirectory per writable root. A subdirectory belongs to one root by
// identity: its name is a hash of the root's canonical path and of its
// device, inode and birth time, and identity.json inside records them.
// A subdirectory is used only while that record matches the root it is
// opened for: a directory made anew at the same path (a fresh clone, or
// another tenant's account) gets a journal of its own, and one whose
// record does not match is neither read nor applied (roots reports it).
//
// Each journal holds its root's changes (changes.jsonl, a counter file and
// the prior contents in objects/) and the plans of batches under way
// (pending/): before a batch swaps its first file in, it writes the plan
// there; the next call that changes the root finds an unfinished plan
// under the root's lock and completes it. No command of fsbox can reach
// the journal: it lies outside every root of the policy it belongs to (a
// policy that puts it inside one is refused), and the base and each
// journal hold the marker FSBOX-JOURNAL.TAG, below which the door of
// every policy reads nothing (ownstate.go).
type journal struct {
	rt  *root    // the writable root it belongs to
	dir string   // canonical
	r   *os.Root // every access goes through r
	// tag prefixes the ids of its changes: "" for the workdir's journal,
	// else a short hash of its root's path and a colon ("3fa2c1d0:7").
	tag string
	max int64 // [journal] max_bytes
	// unkept (under the change's lock): a prior content of the running
	// change was too large for max_bytes and was not kept.
	unkept bool
	// ob, for the journal of an object root, is its prefix in the store
	// (journal_object.go); r is nil then.
	ob   ObjectStore
	js   *journalState
	base ObjectStore // the journal base's store (its marker)
	id   identity
	// seen is what the running change read of the journal in the store
	// (beginObjectJournals): its plans and counters.
	// (atomic: views of one sandbox running calls at once share it; a
	// call that finds another's is as right, and one that finds none
	// asks the store)
	seen atomic.Pointer[seenState]
	mu   sync.Mutex // guards unkept while a batch keeps versions at once
}

// identity is what ties a journal to its root.
type identity struct {
	Root string `json:"root"` // canonical path (for people: JSON cannot hold every byte of a name)
	// PathSHA256 is the hash of the canonical path's bytes: what is
	// compared.
	PathSHA256 string `json:"path_sha256"`
	Dev        uint64 `json:"dev"`
	Ino        uint64 `json:"ino"`
	Birth      int64  `json:"birth,omitempty"` // ns since the epoch; 0 where the kernel does not say
}

const identityFile = "identity.json"

// journalState is where a sandbox's journals live and, once opened, the
// journal of each writable root (root.jn); one per sandbox, shared by its
// views.
type journalState struct {
	mu   sync.Mutex // guards opening
	base string     // canonical; "" when off
	off  string     // why it is off
	// mode is how the journals are opened: journalFull makes them;
	// journalRead opens those that exist (history, roots); journalNone
	// leaves them closed (a call that only reads files).
	mode   journalMode
	opened bool
	baseR  *os.Root       // the base directory, once opened
	issues []JournalIssue // subdirectories found and not used
	// cur is the journal the running change records in (set by change,
	// under the sandbox's write mutex).
	cur *journal
	// objBase is [journal] dir when it is an s3:// URL: the object roots'
	// journals live there (the local roots' in the default place);
	// objStore is its store, once opened.
	objBase  string
	objStore ObjectStore
	// ctx is the context of the latest call that used the journals: a
	// journal in the store makes its requests in it.
	ctx atomic.Pointer[context.Context]
}

type journalMode int

const (
	journalFull journalMode = iota
	journalRead
	journalNone
)

// JournalStatus is what roots reports about the journal.
type JournalStatus struct {
	Enabled bool   `json:"enabled"`
	Dir     string `json:"dir,omitempty"`    // the base directory
	Reason  string `json:"reason,omitempty"` // why it is off
	// Roots: each writable root's journal, where it lies (it may not be
	// made yet).
	Roots []JournalRoot `json:"roots"`
	// Ignored: subdirectories found for these roots and not used (a
	// record that does not match, an earlier directory at a root's path,
	// a journal of the layout before identities whose root is unknown).
	Ignored []JournalIssue `json:"ignored"`
	// RecoveryPending counts interrupted changes this policy may not
	// finish (a root it lacks, or a path it may not write): they are left
	// untouched until a policy that may finish them runs.
	RecoveryPending int `json:"recovery_pending"`
}

// JournalRoot is one writable root's journal.
type JournalRoot struct {
	Root     string `json:"root"`
	Dir      string `json:"dir"`
	IDPrefix string `json:"id_prefix"` // what its change ids start with ("" for the workdir's)
}

// JournalIssue is a journal subdirectory left alone, and why.
type JournalIssue struct {
	Dir    string `json:"dir"`
	Reason string `json:"reason"`
}

// Journal reports where the journals are, or why there are none: it
// looks (never makes) before Landlock for a call that only reads.
func (s *Sandbox) Journal() JournalStatus {
	if s.jn.base == "" && s.jn.objBase == "" {
		return JournalStatus{Reason: s.jn.off, Roots: []JournalRoot{}, Ignored: []JournalIssue{}}
	}
	dir := s.jn.base
	if s.localJournalDir() == "" && s.jn.objBase != "" {
		dir = s.jn.objBase // the one the policy names
	}
	st := JournalStatus{Enabled: true, Dir: dir, Roots: []JournalRoot{}, Ignored: []JournalIssue{}}
	s.useJournal()
	for _, rt := range s.writable() {
		if rt.st.kind() == kindObject {
			if s.jn.objBase != "" {
				st.Roots = append(st.Roots, JournalRoot{Root: rt.dir, Dir: strings.TrimSuffix(s.jn.objBase, "/") + "/" + rt.journalName(), IDPrefix: s.tagOf(rt)})
			}
			continue
		}
		if s.jn.base == "" {
			continue
		}
		name := rt.journalName()
		if rt.jn != nil {
			name = filepath.Base(rt.jn.dir)
		}
		st.Roots = append(st.Roots, JournalRoot{Root: rt.dir, Dir: filepath.Join(s.jn.base, name), IDPrefix: s.tagOf(rt)})
	}
	st.Ignored = append(st.Ignored, s.jn.issues...)
	if s.jn.baseR != nil {
		st.Ignored = append(st.Ignored, s.staleJournals(s.jn.baseR)...)
	}
	st.RecoveryPending = len(s.unfinishable())
	return st
}

// writable is the policy's writable roots, the workdir first.
func (s *Sandbox) writable() []*root {
	out := []*root{s.work}
	for _, rt := range s.roots {
		if rt.writable && rt != s.work {
			out = append(out, rt)
		}
	}
	return out
}

// findJournal decides where the journals live, without touching the
// disk: the policy's dir, or the default under fsbox's state directory.
// An explicit dir inside a root is a config error; a default that falls
// inside a root (a workdir of $HOME, say) turns the journal off, with the
// reason. The directories are made and opened on first need.
func (s *Sandbox) findJournal() error {
	p := s.policy
	if !p.Journal.Enabled {
		s.jn.off = "switched off by the policy ([journal] enabled = false)"
		return nil
	}
	dir := p.Journal.Dir
	if policy.IsObjectURL(dir) {
		// The object roots' journals are in the store; the local roots'
		// in the default place, when there are any.
		s.jn.objBase, dir = dir, ""
		if !slices.ContainsFunc(s.writable(), func(rt *root) bool { return rt.st.kind() == kindPosix }) {
			return nil
		}
	}
	if dir == "" {
		state := p.Journal.State
		if state == "" {
			state = policy.StateDir(policy.Env{Getenv: os.LookupEnv, Home: s.home})
		}
		if state == "" {
			s.jn.off = "no state directory: neither $XDG_STATE_HOME nor a home directory is known"
			return nil
		}
		dir = filepath.Join(state, "journal")
	}
	s.jn.base = policy.Canonical(dir)
	return s.journalInside(dir)
}

// journalInside refuses a journal at, below or above a root of the policy
// (every one, not only those fsbox mcp DIR... serves), its name
// followed component by component (a symlink on the way into a root, or
// lying in one, counts).
func (s *Sandbox) journalInside(d string) error {
	real := policy.Canonical(d)
	for _, dir := range s.policyRoots() {
		if policy.Within(real, dir) || policy.Within(dir, real) || policy.ReachesInto(filepath.Clean(d), []string{dir}) != "" {
			if s.localJournalDir() != "" {
				return fserr.Errorf(fserr.CodeConfig, s.policy.Source, "%s: [journal] dir %s overlaps the root %s: fsbox's commands could reach its own journal; put it outside every root", s.policy.Source, d, dir)
			}
			s.jn.base = ""
			s.jn.off = fmt.Sprintf("its default place %s overlaps the root %s; set [journal] dir outside every root", d, dir)
			return nil
		}
	}
	return nil
}

// localJournalDir is [journal] dir when it names a local directory.
func (s *Sandbox) localJournalDir() string {
	if policy.IsObjectURL(s.policy.Journal.Dir) {
		return ""
	}
	return s.policy.Journal.Dir
}

// rootIdentity is rt's identity now.
func (rt *root) identity() (identity, error) {
	if rt.r == nil { // an object root: its name is all there is
		sum := sha256.Sum256([]byte(rt.dir))
		return identity{Root: rt.dir, PathSHA256: hex.EncodeToString(sum[:])}, nil
	}
	f, err := rt.r.Open(".")
	if err != nil {
		return identity{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return identity{}, err
	}
	k := devIno(fi)
	sum := sha256.Sum256([]byte(rt.dir))
	return identity{Root: rt.dir, PathSHA256: hex.EncodeToString(sum[:]), Dev: k[0], Ino: k[1], Birth: birthTime(f)}, nil
}

// pathHash is the first half of a journal's name: its root's path.
func (rt *root) pathHash() string {
	sum := sha256.Sum256([]byte(rt.dir))
	return hex.EncodeToString(sum[:8])
}

// journalName is the name of rt's journal subdirectory: a hash of its
// path, a dash and a hash of its identity ("" when it cannot be read).
func (rt *root) journalName() string {
	id, err := rt.identity()
	if err != nil {
		return ""
	}
	return rt.pathHash() + "-" + id.hash()
}

// same compares two identities by what names a root (the path by its
// hash).
func (id identity) same(o identity) bool {
	return id.PathSHA256 == o.PathSHA256 && id.Dev == o.Dev && id.Ino == o.Ino && id.Birth == o.Birth
}

func (id identity) hash() string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d\x00%d", id.PathSHA256, id.Dev, id.Ino, id.Birth))
	return hex.EncodeToString(sum[:4])
}

// tagOf is the prefix of rt's change ids.
func (s *Sandbox) tagOf(rt *root) string {
	if rt == s.work {
		return ""
	}
	return rt.pathHash()[:8] + ":"
}

// ReadsOnly says the calls on this sandbox only read files: Restrict
// then leaves the journals closed (a read-only call at every start would
// pay for them). A change attempted anyway after Landlock finds no
// journal and is not recorded.
func (s *Sandbox) ReadsOnly() { s.jn.mode = journalNone }

// ReadsJournal says the calls on this sandbox read the journal and change
// nothing (history, roots): Restrict opens the journals that exist and
// makes none.
func (s *Sandbox) ReadsJournal() { s.jn.mode = journalRead }

// useJournal opens the journals if they are not open yet (under mu:
// views of one sandbox share them), making them unless the sandbox only
// reads.
func (s *Sandbox) useJournal() error {
	ctx := s.context()
	s.jn.ctx.Store(&ctx)
	s.jn.mu.Lock()
	defer s.jn.mu.Unlock()
	if s.jn.opened || (s.jn.base == "" && s.jn.objBase == "") || s.jn.mode == journalNone {
		return nil
	}
	if s.jn.objBase != "" {
		if err := s.openObjectJournals(); err != nil {
			return err
		}
		if s.jn.base == "" {
			s.jn.opened = true
			return nil
		}
	}
	return s.openJournalsLocked(s.jn.mode == journalFull)
}

// openJournalsLocked opens each writable root's journal (make: making
// it, and migrating one of the layout before identities), before
// Landlock and before the first change. A default place that cannot be
// made turns the journal off; an explicit one is a config error.
func (s *Sandbox) openJournalsLocked(make bool) error {
	explicit := s.localJournalDir() != ""
	fail := func(err error) error {
		if explicit {
			return fserr.Errorf(fserr.CodeConfig, s.policy.Source, "%s: [journal] dir %s: %v", s.policy.Source, s.jn.base, unwrapPathErr(err))
		}
		s.jn.off = fmt.Sprintf("its default place %s cannot be used: %v", s.jn.base, unwrapPathErr(err))
		s.jn.base = ""
		return nil
	}
	if make {
		if err := os.MkdirAll(s.jn.base, 0o700); err != nil {
			return fail(err)
		}
	}
	real, err := filepath.EvalSymlinks(s.jn.base)
	if errors.Is(err, fs.ErrNotExist) && !make {
		s.jn.opened = true // nothing recorded yet
		return nil
	}
	if err != nil {
		return fail(err)
	}
	if err := s.journalInside(real); err != nil || s.jn.base == "" {
		return err
	}
	if real != s.jn.base {
		s.jn.base = real // (written only when it differs: other goroutines read it unlocked)
	}
	base, err := os.OpenRoot(real)
	if err != nil {
		return fail(err)
	}
	s.jn.baseR = base // kept open: roots lists it after Landlock
	if make {
		// The marker that keeps every read out (ownstate.go), in a base
		// made now or before it was written.
		if err := writeMarker(base, "."); err != nil {
			return fail(err)
		}
	}
	if _, err := base.Lstat(changesFile); err == nil {
		s.jn.issues = append(s.jn.issues, JournalIssue{Dir: real, Reason: "a journal of the layout before identities, whose root is not recorded: left alone (move it away or remove it)"})
	}
	for _, rt := range s.writable() {
		if rt.st.kind() != kindPosix {
			continue // an object root keeps no journal (yet)
		}
		j, err := s.openRootJournal(base, rt, make)
		if err != nil {
			return fail(err)
		}
		rt.jn = j
	}
	s.jn.opened = true
	return nil
}

// openRootJournal opens rt's journal in base (nil: none yet, or one that
// is not used, noted in issues).
func (s *Sandbox) openRootJournal(base *os.Root, rt *root, make bool) (*journal, error) {
	id, err := rt.identity()
	if err != nil {
		return nil, err
	}
	name := rt.pathHash() + "-" + id.hash()
	if _, err := base.Lstat(name); errors.Is(err, fs.ErrNotExist) {
		// The layout before identities named the workdir's journal by its
		// path alone: it becomes this root's journal only when it is the
		// workdir's (the name records the workdir), else it stays.
		legacy := rt.pathHash()
		if fi, lerr := base.Lstat(legacy); lerr == nil && fi.IsDir() && rt == s.work {
			if !make {
				return s.journalAt(rt, filepath.Join(s.jn.base, legacy), nil)
			}
			if err := writeIdentity(base, legacy, id); err != nil {
				return nil, err
			}
			if err := base.Rename(legacy, name); err != nil {
				// Another process took it over first: its result stands.
				if _, serr := base.Lstat(name); serr != nil {
					return nil, err
				}
			}
		} else if !make {
			return nil, nil
		} else if err := makeJournalDir(base, name, id); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	if make {
		// A journal made before journals were marked gets its marker.
		if err := writeMarker(base, name); err != nil {
			return nil, err
		}
	}
	return s.journalAt(rt, filepath.Join(s.jn.base, name), &id)
}

// journalAt opens the journal directory dir for rt, checking the identity
// it records against want (nil: a legacy journal, no record).
func (s *Sandbox) journalAt(rt *root, dir string, want *identity) (*journal, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	if want != nil {
		var got identity
		b, err := r.ReadFile(identityFile)
		if err == nil {
			err = json.Unmarshal(b, &got)
		}
		if err != nil || !got.same(*want) {
			r.Close()
			why := "its identity record cannot be read"
			if err == nil {
				why = fmt.Sprintf("its identity record (%s, device %d, inode %d, birth %d) is not the root's", got.Root, got.Dev, got.Ino, got.Birth)
			}
			s.jn.issues = append(s.jn.issues, JournalIssue{Dir: dir, Reason: why + ": neither read nor applied"})
			return nil, nil
		}
	}
	return &journal{rt: rt, dir: dir, r: r, tag: s.tagOf(rt), max: s.policy.Journal.MaxBytes, js: s.jn}, nil
}

// makeJournalDir makes a root's journal whole or not at all: in a
// temporary directory, renamed into place (a concurrent maker's journal,
// there first, wins).
func makeJournalDir(base *os.Root, name string, id identity) error {
	tmp := tempName()
	if err := base.Mkdir(tmp, 0o700); err != nil {
		return err
	}
	err := base.Mkdir(path.Join(tmp, "pending"), 0o700)
	if err == nil {
		err = writeMarker(base, tmp)
	}
	if err == nil {
		err = writeIdentity(base, tmp, id)
	}
	if err == nil {
		err = base.Rename(tmp, name)
	}
	if err != nil {
		base.RemoveAll(tmp)
		if _, serr := base.Lstat(name); serr == nil {
			return nil
		}
	}
	return err
}

// writeIdentity records id in the journal directory dir (synced, then
// renamed into place).
func writeIdentity(base *os.Root, dir string, id identity) error {
	b, err := json.Marshal(id)
	if err != nil {
		return err
	}
	tmp := path.Join(dir, tempName())
	f, err := base.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err = f.Write(append(b, '\n')); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = base.Rename(tmp, path.Join(dir, identityFile))
	}
	if err != nil {
		base.Remove(tmp)
	}
	return err
}

// staleJournals are the journals of earlier directories at a writable
// root's path (same path hash, another identity): left alone. Only roots
// looks (a shared base may hold many).
func (s *Sandbox) staleJournals(base *os.Root) []JournalIssue {
	d, err := base.Open(".")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	var out []JournalIssue
	for _, rt := range s.writable() {
		mine := rt.journalName()
		if rt.jn != nil {
			mine = filepath.Base(rt.jn.dir)
		}
		for _, n := range names {
			if strings.HasPrefix(n, rt.pathHash()+"-") && n != mine {
				out = append(out, JournalIssue{Dir: filepath.Join(s.jn.base, n), Reason: "the journal of an earlier directory at " + rt.dir + ": neither read nor applied"})
			}
		}
	}
	return out
}

// journals is the open journals of the writable roots, the workdir's
// first.
func (s *Sandbox) journals() []*journal {
	var out []*journal
	for _, rt := range s.writable() {
		if rt.jn != nil {
			out = append(out, rt.jn)
		}
	}
	return out
}

// closeJournals releases the journals' directories.
func (s *Sandbox) closeJournals() {
	if s.jn.baseR != nil {
		s.jn.baseR.Close()
		s.jn.baseR = nil
	}
	for _, rt := range s.roots {
		if rt.jn != nil {
			if rt.jn.r != nil {
				rt.jn.r.Close()
			}
			rt.jn = nil
		}
	}
}

// validName: one path component, not "." or "..".
func validName(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.ContainsAny(n, "/\x00")
}

// EntryState describes what p holds now, as the journal would record it
// (nil: absent); a regular file is hashed.
func (s *Sandbox) EntryState(p string) (*FileState, error) {
	w, err := s.OpenEntry(p)
	if fserr.Absent(err) {
		return nil, nil // its directory is gone too
	}
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if !w.Exists {
		return nil, nil
	}
	switch w.Info.Type {
	case "dir":
		return &FileState{Type: "dir"}, nil
	case "symlink":
		target, err := w.dir.Readlink(w.Name)
		if err != nil {
			return nil, ioErr(w.Path, err)
		}
		return &FileState{Type: "symlink", Target: target}, nil
	case "file":
		if o, ok := w.rt.st.(*objectRoot); ok {
			ver, sum, size, err := o.now(s.context(), w)
			if err != nil || ver == "" && sum == "" {
				return nil, err
			}
			return &FileState{Type: "file", SHA256: sum, Size: size}, nil
		}
		f, err := openNoFollow(w, w.Name, openReadFlags, 0)
		if err != nil {
			return nil, noFollowErr(err, w.Path)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return nil, ioErr(w.Path, err)
		}
		if err := s.checkFileDesc(fi, w.Path); err != nil {
			return nil, err
		}
		sum, err := hashReader(f, w.Path)
		if err != nil {
			return nil, err
		}
		return &FileState{Type: "file", SHA256: sum, Size: fi.Size(), Mode: fmt.Sprintf("%04o", fi.Mode().Perm())}, nil
	}
	return &FileState{Type: w.Info.Type}, nil
}

// RemoveEmptyDir removes the directory w if it is empty (undo of mkdir).
func (s *Sandbox) RemoveEmptyDir(w *WriteTarget) error {
	_, err := s.change([]*WriteTarget{w}, func(*Tx) error { return rmdirAt(w) })
	return err
}

// rmdirAt removes the directory w if it is empty (inside a change).
func rmdirAt(w *WriteTarget) error {
	if o, ok := w.rt.st.(*objectRoot); ok {
		return o.rmdirAt(w)
	}
	if !w.Exists || w.Info.Type != "dir" {
		return fserr.Errorf(fserr.CodeConflict, w.Path, "%s is not a directory (or gone): it stays", w.Path)
	}
	if fi, err := w.entryNow(); err != nil || devIno(fi) != w.Info.key {
		return fserr.Errorf(fserr.CodeConflict, w.Path, "%s was replaced during the call: it stays", w.Path)
	}
	if err := rmdirEntryAt(w); err != nil {
		return fserr.Errorf(fserr.CodeConflict, w.Path, "%s is not empty (or gone): it stays", w.Path)
	}
	return w.dirF.Sync()
}

// Recover finishes a change a crash interrupted, if the journal holds
// one (every call that changes the workdir does this first, under the
// write lock).
func (s *Sandbox) Recover() error {
	_, err := s.changeIn([]*root{s.work}, nil, func(*Tx) error { return nil })
	return err
}
