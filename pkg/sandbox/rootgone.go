package sandbox

import (
	"errors"
	"io/fs"
	"os"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// A served root removed (SPEC §5, "A served root removed"): a root is
// opened once, when the sandbox is made, and every access goes through
// that descriptor (Landlock binds the same directory). When the
// directory is removed, or moved away, the descriptor still works but
// its path leads nowhere (the kernel names it "… (deleted)") or to
// another directory, so every access fails as if it led out of the
// root. The sandbox never opens the root again by its path (whoever can
// write the parent would choose what is served); it says what happened,
// with not_found naming the root, instead of a denial that sends the
// caller looking for a symlink.

// RootState says whether a root still is the directory the sandbox
// opened: "" when it is; "removed" when that directory was removed and
// nothing is at its path; "re-created" when it was removed (or moved
// away) and another directory now stands at its path; "moved" when it
// was moved away and nothing stands at its path.
type RootState string

const (
	RootRemoved   RootState = "removed"
	RootRecreated RootState = "re-created"
	RootMoved     RootState = "moved"
)

// state is rt's RootState. Object roots have no directory to lose. The
// cost is a stat of the descriptor and one of the path; the door asks
// only when an access has already failed, and roots asks.
func (rt *root) goneState() RootState {
	if rt.r == nil {
		return ""
	}
	held, err := rt.r.Stat(".")
	if err != nil {
		return ""
	}
	removed := nlink(held) == 0
	now, err := os.Stat(rt.dir)
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		if removed {
			return RootRemoved
		}
		return RootMoved
	case err != nil:
		if removed {
			return RootRemoved
		}
		return ""
	}
	a, b := devIno(held), devIno(now)
	if removed || (a != [2]uint64{} && b != [2]uint64{} && a != b) {
		return RootRecreated
	}
	return ""
}

// goneErr is the answer to an access below rt once rt is gone: not_found
// naming the root, and what to do. nil while rt is still the directory
// opened.
func (rt *root) goneErr(given string) *fserr.Error {
	st := rt.goneState()
	if st == "" {
		return nil
	}
	return rootGoneError(rt.dir, given, st)
}

func rootGoneError(dir, given string, st RootState) *fserr.Error {
	e := rootGoneMsg(dir, given, st)
	e.Err = fserr.ErrRootGone
	return e
}

func rootGoneMsg(dir, given string, st RootState) *fserr.Error {
	const held = "the server still holds the directory it opened when it started and never opens a root again by its path"
	switch st {
	case RootRecreated:
		return fserr.Errorf(fserr.CodeNotFound, given, "the root %s was removed and re-created (or replaced) after the server started: %s; restart the server to serve the new one", dir, held)
	case RootMoved:
		return fserr.Errorf(fserr.CodeNotFound, given, "the root %s was moved or renamed after the server started, and nothing stands at its path: %s; restart the server once a directory is there again", dir, held)
	}
	return fserr.Errorf(fserr.CodeNotFound, given, "the root %s was removed after the server started: %s; restart the server once it exists again", dir, held)
}

// orGone is err, unless rt is gone: then the root's not_found. For the
// door's failures that a removed root causes (a path that leads out of
// its root, a name not found).
func (rt *root) orGone(err *fserr.Error, given string) *fserr.Error {
	if g := rt.goneErr(given); g != nil {
		return g
	}
	return err
}

// GoneRoot is a root that is no longer the directory the sandbox opened.
type GoneRoot struct {
	Root  string    `json:"root"`
	State RootState `json:"state"`
}

// GoneRoots lists the roots that were removed, moved or replaced since
// the sandbox opened them (nil when none was).
func (s *Sandbox) GoneRoots() []GoneRoot {
	var out []GoneRoot
	for _, rt := range s.roots {
		if st := rt.goneState(); st != "" {
			out = append(out, GoneRoot{Root: rt.dir, State: st})
		}
	}
	return out
}
