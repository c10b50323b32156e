package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
)

// Need is what an operation needs of a path it is given.
type Need string

const (
	NeedNone     Need = ""          // not a path
	NeedReadFile Need = "read-file" // opened as a regular file, for reading
	NeedReadDir  Need = "read-dir"  // opened as a directory, for listing
	NeedReadAny  Need = "read-any"  // a file or a directory, read
	NeedLook     Need = "stat"      // described, never opened for its content
	NeedWrite    Need = "write"     // created, changed or removed in the workdir
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
		return s.CheckWrite(p)
	case NeedReadFile:
		f, err := s.Open(p)
		if err != nil {
			return Info{}, err
		}
		info := f.Info
		f.Close()
		if limit > 0 && info.Size > limit {
			return Info{}, &Error{Code: CodeTooLarge, Rule: RuleSizeCap, Path: p,
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
		if err != nil && AsError(err).Code == CodeNotFound {
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

// statFollow opens whatever p leads to (file or directory) and checks it.
func (s *Sandbox) statFollow(p string) (Info, error) {
	f, err := s.Open(p)
	if err == nil {
		defer f.Close()
		return f.Info, nil
	}
	if AsError(err).Code != CodeNotAFile {
		return Info{}, err
	}
	d, err := s.OpenDir(p)
	if err != nil {
		return Info{}, err
	}
	defer d.Close()
	return d.Info, nil
}

// CheckWrite decides whether p may be created or changed: it must lie in
// the workdir, match no deny or write_deny pattern (on the real path of its
// nearest existing parent plus the rest), not be the policy file, and not
// be a special file.
func (s *Sandbox) CheckWrite(p string) (Info, error) {
	t, err := s.resolve(p)
	if err != nil {
		return Info{}, err
	}
	if err := s.lexicalChecks(t); err != nil {
		return Info{}, err
	}
	clean := path.Clean(t.rel)
	if err := s.checkPatterns(t.rt, clean, false, AccessWrite, t.given); err != nil {
		return Info{}, err
	}
	if err := s.checkWrite(t.rt, clean, t.given); err != nil {
		return Info{}, err
	}
	if clean == "." {
		return Info{}, deny(RuleRoot, t.given, "the workdir itself cannot be written or replaced")
	}
	// Real path: the deepest existing ancestor, resolved, plus the rest.
	dir, rest := path.Dir(clean), path.Base(clean)
	for {
		sub, err := openRoot(t.rt.r, dir)
		if err == nil {
			rrel, err := realRel(t.rt, sub, dir, t.given)
			sub.Close()
			if err != nil {
				return Info{}, err
			}
			rel := path.Join(rrel, rest)
			if err := s.checkPatterns(t.rt, rel, false, AccessWrite, t.given); err != nil {
				return Info{}, err
			}
			if err := s.checkWrite(t.rt, rel, t.given); err != nil {
				return Info{}, err
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || dir == "." {
			return Info{}, s.mapErr(err, t)
		}
		dir, rest = path.Dir(dir), path.Join(path.Base(dir), rest)
	}
	// An existing target is checked as what it really is.
	fi, err := t.rt.r.Lstat(t.rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Info{Path: t.display(), Abs: t.rt.abs(clean)}, nil
		}
		return Info{}, s.mapErr(err, t)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if fi, err = t.rt.r.Stat(t.rel); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				if d := s.deniedAncestor(t.rt, clean, t.given); d != nil {
					return Info{}, d // where it leads is denied: say that, as for a target that exists
				}
				return Info{}, deny(RuleSymlink, t.given, "%s is a dangling symlink", t.given)
			}
			return Info{}, s.mapErr(err, t)
		}
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		return Info{}, deny(RuleSpecialFile, t.given, "%s is a %s; FIFOs, sockets and devices are never opened", t.given, kindName(fi.Mode()))
	}
	f, err := t.rt.r.OpenFile(t.rel, openReadFlags, 0)
	if err != nil {
		return Info{}, s.mapErr(err, t)
	}
	defer f.Close()
	return s.checkOpened(f, t, fi.IsDir(), AccessWrite)
}
