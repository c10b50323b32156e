package sandbox

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// fsbox's state is never readable through fsbox: the door denies every
// access below a directory that holds a journal marker (journalMarker,
// which every journal fsbox makes holds), below the default journal base,
// this policy's journal directory and fsbox's own configuration
// directory, and the audit log itself, whether or not this policy's own
// journal is on (rule own_file), as /proc is never readable. A journal
// holds prior versions of the files fsbox changed, denied ones included,
// and its changes.jsonl names them with their hashes and sizes.
//
// What decides, and what it costs:
//   - by path: the places (canonical, at New) that lie in a root are
//     root-relative prefixes checked with the rules (check), no system
//     call;
//   - by identity and marker: a directory is a state directory when its
//     (st_dev, st_ino) is a place's (a bind mount gives it a second name)
//     or it holds the marker. A walk decides this once per directory it
//     lists, from the listing and the descriptor it holds (no system
//     call); a path opened on its own (read, stat, ls DIR, a walk's start,
//     a change's parent) has the directories above it checked through a
//     chain of descriptors from its root (stateDirOrAbove); a root's own
//     directory and those above it are checked once.

// journalMarker marks a directory holding a journal of fsbox, as
// CACHEDIR.TAG marks a cache: nothing below it is read through fsbox.
const journalMarker = "FSBOX-JOURNAL.TAG"

const journalMarkerText = "Signature: fsbox journal\n" +
	"# This directory holds a journal of fsbox: prior versions of the files it changed.\n" +
	"# fsbox reads nothing below a directory that holds this file (rule own_file).\n"

// statePlace is one of fsbox's state directories (or the audit log).
type statePlace struct {
	path string // canonical
	what string
	file bool // the audit log: the file itself
}

// stateDirs are a sandbox's state places, shared by its views.
type stateDirs struct {
	places []*statePlace
	// ids are the identities of the places that existed at New; fileIDs
	// those of the files among them (nil when none).
	ids     map[[2]uint64]*statePlace
	fileIDs map[[2]uint64]*statePlace
}

// stateRel is a state place as a root sees it.
type stateRel struct {
	rel   string // root-relative; "." when the root is the place
	all   bool   // the root lies below the place: everything in it is state
	place *statePlace
}

// rootState is what a root knows of fsbox's state: the places that lie
// in it or hold it (by path, at New), and, once looked at, whether the
// root itself (self) or a directory above it (above) is a state
// directory by identity or marker.
type rootState struct {
	static      []stateRel
	once        sync.Once
	self, above *statePlace
	fd          *os.File // the root's directory, held from New for the descriptor chain
}

// findState lists fsbox's state places for s (New, after the roots are
// open): the default journal base, the policy's journal directory, the
// audit log and fsbox's configuration directory.
func (s *Sandbox) findState() {
	p := s.policy
	st := &stateDirs{ids: map[[2]uint64]*statePlace{}}
	add := func(dir, what string, file bool) {
		if dir == "" {
			return
		}
		c := policy.Canonical(dir)
		for _, o := range st.places {
			if o.path == c {
				return
			}
		}
		pl := &statePlace{path: c, what: what, file: file}
		st.places = append(st.places, pl)
		// The place's identity, for a second name of it (a bind mount,
		// or a hard link of the audit log).
		if fi, err := os.Stat(c); err == nil {
			if k := devIno(fi); k != [2]uint64{} {
				if file {
					if st.fileIDs == nil {
						st.fileIDs = map[[2]uint64]*statePlace{}
					}
					st.fileIDs[k] = pl
				} else if fi.IsDir() {
					st.ids[k] = pl
				}
			}
		}
	}
	state := p.Journal.State
	if state == "" {
		state = policy.StateDir(policy.Env{Getenv: os.LookupEnv, Home: s.home})
	}
	if state != "" {
		add(filepath.Join(state, "journal"), "fsbox's default journal directory", false)
	}
	if p.Journal.Dir != "" {
		add(p.Journal.Dir, "fsbox's journal directory", false)
	}
	add(p.Audit.Log, "fsbox's audit log", true)
	cfg := p.ConfigDir
	if cfg == "" {
		cfg = policy.ConfigDir(policy.Env{Getenv: os.LookupEnv, Home: s.home})
	}
	add(cfg, "fsbox's configuration directory", false)
	for _, f := range s.objectFiles() {
		fi, err := os.Stat(f)
		add(f, "a file the object store's client reads (credentials, certificates, name resolution)", err != nil || !fi.IsDir())
	}
	s.state = st
	for _, rt := range s.roots {
		// Held from the start, as the roots are: the descriptor chain
		// (stateChain) starts from it.
		rt.state.fd = rt.stateFd()
		for _, pl := range st.places {
			switch rel, ok := rt.relOf(pl.path); {
			case ok:
				rt.state.static = append(rt.state.static, stateRel{rel: rel, place: pl})
			case policy.Within(rt.dir, pl.path) && !pl.file:
				rt.state.static = append(rt.state.static, stateRel{all: true, place: pl})
			}
		}
	}
}

// stateFd is the root's directory, held for the descriptor chain
// (stateChain); nil where it cannot be opened, and for an object root,
// which has no descriptors (stateInStore).
func (rt *root) stateFd() *os.File {
	if rt.r == nil {
		return nil
	}
	f, err := rt.r.Open(".")
	if err != nil {
		return nil
	}
	return f
}

// stateByPath denies rel (a path in rt) when it lies below one of the
// state places by path, or is the audit log.
func stateByPath(rt *root, rel, given string) *fserr.Error {
	for _, sr := range rt.state.static {
		switch {
		case sr.all,
			sr.place.file && (rel == sr.rel || strings.HasPrefix(rel, sr.rel+"/")),
			!sr.place.file && sr.rel == "." && rel != ".",
			!sr.place.file && sr.rel != "." && strings.HasPrefix(rel, sr.rel+"/"):
			return stateDenial(given, sr.place)
		}
	}
	return nil
}

// stateDenial is the refusal of a path in or below the state place pl.
func stateDenial(given string, pl *statePlace) *fserr.Error {
	if pl.file {
		return fserr.Deny(fserr.RuleOwnFile, given, "%s is %s (%s): fsbox never reads or changes its own state", given, pl.what, pl.path)
	}
	return fserr.Deny(fserr.RuleOwnFile, given, "%s lies in %s (%s): fsbox never reads or changes its own state", given, pl.what, pl.path)
}

// markedDir is the state place a directory holding the marker is.
func markedDir(abs string) *statePlace {
	return &statePlace{path: abs, what: "a journal of fsbox (it holds " + journalMarker + ")"}
}

// stateFile is the state place the file with identity key is (the audit
// log under another name), or nil.
func (s *Sandbox) stateFile(key [2]uint64) *statePlace {
	if s.state.fileIDs == nil {
		return nil
	}
	return s.state.fileIDs[key]
}

// stateOfRoot looks once at whether rt's own directory, or one above it,
// is a state directory by identity or marker.
func (s *Sandbox) stateOfRoot(rt *root) (self, above *statePlace) {
	st := &rt.state
	st.once.Do(func() {
		if rt.st.kind() != kindPosix {
			// Nothing on disk holds an object root: only a marker at
			// its top makes it fsbox's state.
			if _, err := rt.st.stat(s.context(), journalMarker); err == nil {
				st.self = markedDir(rt.dir)
			}
			return
		}
		for d := rt.dir; ; {
			// The root's directory and those above it, by the path the
			// root was opened at: whether fsbox's state holds it.
			var pl *statePlace
			if fi, err := os.Stat(d); err == nil {
				pl = s.state.ids[devIno(fi)]
			}
			if _, err := os.Lstat(filepath.Join(d, journalMarker)); pl == nil && err == nil {
				pl = markedDir(d)
			}
			switch {
			case pl == nil:
			case d == rt.dir:
				st.self = pl
			default:
				st.above = pl
				return
			}
			up := filepath.Dir(d)
			if up == d {
				return
			}
			d = up
		}
	})
	return st.self, st.above
}

// stateDirOrAbove is the state directory that dirRel (a real directory
// of rt), or a directory above it, is by identity or marker, or nil:
// everything below dirRel is then fsbox's state. (Places by path are
// the rules' part: stateByPath.)
func (s *Sandbox) stateDirOrAbove(rt *root, dirRel string) *statePlace {
	self, above := s.stateOfRoot(rt)
	switch {
	case above != nil:
		return above
	case self != nil:
		return self
	case dirRel == "." || dirRel == "":
		return nil
	}
	return s.stateChain(rt, dirRel)
}

// stateAbove is the state directory a directory strictly above rel (a
// real path of rt) is, or nil: rel is then fsbox's state.
func (s *Sandbox) stateAbove(rt *root, rel string) *statePlace {
	if rel == "." {
		_, above := s.stateOfRoot(rt)
		return above
	}
	return s.stateDirOrAbove(rt, path.Dir(rel))
}

// stateListed is the state directory d is, told from its identity and
// from whether its listing holds the marker (marked), or nil; d.state
// when the door found it so on opening it.
func (s *Sandbox) stateListed(d *Dir, marked bool) *statePlace {
	switch {
	case d.state != nil:
		return d.state
	case marked:
		return markedDir(d.rt.abs(d.rel))
	}
	return s.state.ids[d.Info.key]
}

// stateOfOpenDir is the state directory the directory open as h (with
// identity key, at abs) is, by identity or marker, or nil.
func (s *Sandbox) stateOfOpenDir(h dirHandle, key [2]uint64, abs string) *statePlace {
	if pl := s.state.ids[key]; pl != nil && key != [2]uint64{} {
		return pl
	}
	if _, err := h.lstat(journalMarker); err == nil {
		return markedDir(abs)
	}
	return nil
}

// stateInStore is stateChain (and, sure, stateLexical) for a root with no
// links (an object root), where the path spelled is the real one: the
// first directory on the way down to dirRel that holds the marker.
func (s *Sandbox) stateInStore(rt *root, dirRel string) (*statePlace, bool) {
	if dirRel == "." {
		return nil, true
	}
	ctx := s.context()
	parts := strings.Split(dirRel, "/")
	for i := range parts {
		dir := strings.Join(parts[:i+1], "/")
		if _, err := rt.st.stat(ctx, dir+"/"+journalMarker); err == nil {
			return markedDir(rt.abs(dir)), true
		}
	}
	return nil, true
}

// closeState releases the descriptor the chain starts from.
func (st *rootState) close() {
	if st.fd != nil {
		st.fd.Close()
		st.fd = nil
	}
}

// writeMarker puts the journal marker in the directory dir of r unless
// one is there.
func writeMarker(r *os.Root, dir string) error {
	name := path.Join(dir, journalMarker)
	if _, err := r.Lstat(name); err == nil {
		return nil
	}
	f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if os.IsExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString(journalMarkerText)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
