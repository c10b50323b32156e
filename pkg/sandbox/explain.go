package sandbox

import (
	"fmt"
	"path"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// Need is what an operation needs of a path it is given.
type Need string

const (
	NeedNone     Need = ""            // not a path
	NeedReadFile Need = "read-file"   // opened as a regular file, for reading
	NeedReadDir  Need = "read-dir"    // opened as a directory, for listing
	NeedReadAny  Need = "read-any"    // a file or a directory, read
	NeedLook     Need = "stat"        // described, never opened for its content
	NeedWrite    Need = "write"       // a file created or changed in a writable root (a symlink at it is followed)
	NeedEntry    Need = "write-entry" // an entry itself moved or removed (a symlink is taken as itself)
	NeedMake     Need = "make-dir"    // a directory made, or kept as it is
)

// Probe runs the checks an operation needing need of p runs before it
// touches p, without reading or changing anything: the same Open, OpenDir,
// Lstat and CheckWrite the operations call. limit > 0 holds a file's size
// to it. A missing path is not found; for NeedLook it is no refusal (stat
// reports exists:false), and Probe returns a zero Info and nil.
func (s *Sandbox) Probe(need Need, p string, limit int64, limitName string) (Info, error) {
	if err := ValidatePath(p); err != nil {
		return Info{}, err
	}
	switch need {
	case NeedWrite:
		return s.probeChange(p, true, false)
	case NeedEntry:
		return s.probeChange(p, false, true)
	case NeedMake:
		return s.probeChange(p, false, false)
	case NeedReadFile:
		f, err := s.Open(p)
		if err != nil {
			return Info{}, err
		}
		info := f.Info
		f.Close()
		if limit > 0 && info.Size > limit {
			return Info{}, &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Path: p,
				Msg: fmt.Sprintf("%s has %d bytes, over %s = %d", p, info.Size, limitName, limit)}
		}
		return info, nil
	case NeedReadDir:
		d, err := s.OpenDir(p)
		if err != nil {
			return Info{}, err
		}
		d.Close()
		return d.Info, nil
	case NeedReadAny:
		if _, err := s.Lstat(p); err != nil {
			return Info{}, err
		}
		return s.statFollow(p)
	case NeedLook:
		info, err := s.Lstat(p)
		if fserr.Absent(err) {
			return Info{}, nil
		}
		return info, err
	}
	return Info{}, nil
}

// RootOf names the root p lies in ("" when it lies in none).
func (s *Sandbox) RootOf(p string) string {
	if t, err := s.resolve(p); err == nil {
		return t.rt.dir
	}
	return ""
}

// Named says what a path named to a command that walks directories and
// reads files (grep) is: what it leads to, a final symlink followed
// through the door (a directory, or a file opened and checked); a FIFO,
// socket or device is refused (special_file) without being opened, as
// Open refuses it; a missing or denied path is Lstat's error. Type is
// then dir or file.
func (s *Sandbox) Named(p string) (Info, error) {
	info, err := s.Lstat(p)
	switch {
	case err != nil:
		return Info{}, err
	case info.Type == "symlink":
		return s.statFollow(p)
	case info.Type == "other":
		return Info{}, kindCheck(info.Mode, false, p)
	}
	return info, nil
}

// statFollow opens whatever p leads to (file or directory) and checks it.
func (s *Sandbox) statFollow(p string) (Info, error) {
	f, err := s.Open(p)
	if err == nil {
		defer f.Close()
		return f.Info, nil
	}
	if fserr.AsError(err).Code != fserr.CodeNotAFile {
		return Info{}, err
	}
	d, err := s.OpenDir(p)
	if err != nil {
		return Info{}, err
	}
	defer d.Close()
	return d.Info, nil
}

// CheckWrite decides whether the file p may be created or changed, as a
// write would: the same door (pinTarget), acting on nothing.
func (s *Sandbox) CheckWrite(p string) (Info, error) { return s.probeChange(p, true, false) }

// probeChange runs the door a change of p runs — the file (follow: a
// symlink at p is followed as a write follows it) or the entry itself —
// without acting. Where a parent is missing, the real call makes it
// (mkdir -p): it is checked as that would check it, and nothing is made.
func (s *Sandbox) probeChange(p string, follow, moves bool) (Info, error) {
	w, err := s.pinTarget(p, nil, follow, moves)
	if err == nil {
		defer w.Close()
		if !w.Exists {
			return Info{Name: w.Name, Path: w.Path, Abs: w.rt.abs(w.rootRel())}, nil
		}
		return w.Info, nil
	}
	if !fserr.Absent(err) {
		return Info{}, err
	}
	t, rerr := s.pin(p, AccessWrite, !follow)
	if rerr != nil {
		return Info{}, rerr
	}
	clean := path.Clean(t.rel)
	real, merr := s.mkdirAllLocked(t.rt, path.Dir(clean), p, false)
	if merr != nil {
		return Info{}, merr
	}
	full := path.Join(real, path.Base(clean))
	if err := s.checkPatterns(t.rt, full, !follow, AccessWrite, p); err != nil {
		return Info{}, err
	}
	if err := s.checkWrite(t.rt, full, p); err != nil {
		return Info{}, err
	}
	return Info{Name: path.Base(clean), Path: t.display(), Abs: t.rt.abs(full)}, nil
}
