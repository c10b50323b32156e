package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// Decision is the answer of Explain: would OP on PATH be allowed, and which
// rule decides.
type Decision struct {
	Op      string `json:"op"`
	Path    string `json:"path"`
	Allowed bool   `json:"allowed"`
	Rule    string `json:"rule"`
	Reason  string `json:"reason"`
	Access  string `json:"access"`
	Root    string `json:"root,omitempty"`
	Real    string `json:"resolved,omitempty"`
}

// pathOps take a path the policy decides on; the other commands take none.
var fileOps = map[string]bool{"read": true, "wc": true, "slice": true, "sort": true, "cut": true}
var dirOps = map[string]bool{"ls": true, "find": true}

// Explain runs the same checks a real call of op on p would run, without
// reading or changing anything, and reports the first rule that refuses.
// Only a malformed op or path is an error.
func (s *Sandbox) Explain(op, p string) (Decision, error) {
	acc, ok := CommandAccess(op)
	if !ok {
		return Decision{}, Errorf(CodeUsage, p, "unknown command %q (one of: %s)", op, strings.Join(Commands(), ", "))
	}
	if err := ValidatePath(p); err != nil {
		return Decision{}, err
	}
	d := Decision{Op: op, Path: p, Access: acc.String()}
	if err := s.CheckCommand(op); err != nil {
		return d.refuse(err), nil
	}
	if t, err := s.resolve(p); err == nil {
		d.Root = t.rt.dir
	}
	var info Info
	var err error
	switch {
	case acc == AccessWrite:
		info, err = s.CheckWrite(p)
	case fileOps[op]:
		var f *File
		if f, err = s.Open(p); err == nil {
			info = f.Info
			f.Close()
			if op == "read" && info.Size > s.policy.Limits.MaxReadBytes {
				err = &Error{Code: CodeTooLarge, Rule: RuleSizeCap, Path: p,
					Msg: fmt.Sprintf("%s has %d bytes, over max_read_bytes = %d: read it in pages with --offset/--limit", p, info.Size, s.policy.Limits.MaxReadBytes)}
			}
			if op == "sort" && info.Size > s.policy.Limits.MaxSortBytes {
				err = &Error{Code: CodeTooLarge, Rule: RuleSizeCap, Path: p,
					Msg: fmt.Sprintf("%s has %d bytes, over max_sort_bytes = %d", p, info.Size, s.policy.Limits.MaxSortBytes)}
			}
		}
	case dirOps[op]:
		var dir *Dir
		if dir, err = s.OpenDir(p); err == nil {
			info = dir.Info
			dir.Close()
		}
	case op == "stat" || op == "grep":
		info, err = s.Lstat(p)
		if err == nil && op == "grep" {
			info, err = s.statFollow(p)
		}
		if op == "stat" && err != nil && AsError(err).Code == CodeNotFound {
			d.Allowed, d.Rule, d.Reason = true, string(RuleOK), p+" does not exist: stat reports exists:false"
			return d, nil
		}
	default:
		d.Allowed, d.Rule, d.Reason = true, string(RuleOK), op+" takes no path; the command is on"
		return d, nil
	}
	if err != nil {
		return d.refuse(err), nil
	}
	d.Allowed, d.Rule, d.Real = true, string(RuleOK), info.Abs
	d.Reason = fmt.Sprintf("%s may %s %s", op, acc, p)
	return d, nil
}

func (d Decision) refuse(err error) Decision {
	e := AsError(err)
	d.Allowed, d.Rule, d.Reason = false, string(e.Rule), e.Msg
	if e.Rule == "" {
		d.Rule = string(e.Code)
	}
	return d
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
