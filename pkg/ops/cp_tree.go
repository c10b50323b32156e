package ops

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// CopySkipped counts what a tree copy passed over.
type CopySkipped struct {
	Denied   int64 `json:"denied"`   // entries the policy does not let the call read
	Excluded int64 `json:"excluded"` // entries --exclude left out (an excluded directory counts once)
}

// CopyTreeOptions are cp -r's.
type CopyTreeOptions struct {
	Force   bool
	Exclude []string
	// Expect is each --expect-sha256 PATH=HEX: the sha256 the file
	// replaced at PATH (a destination path) must have.
	Expect []string
}

// CopyTree copies the directory src (its whole tree) into the workdir
// as one change: dst when it does not exist, dst/NAME (NAME: src's
// base name) when dst is a directory, as GNU cp -r. It is all or
// nothing, and one journal record that undo takes back whole. A src that
// is a file is copied as cp copies one.
//
// Entries the policy does not let the call read are skipped and counted
// (skipped.denied); symlinks are copied as links, never followed, only
// when their target, resolved where the copy puts them, stays in the
// destination's root and passes the rules there; special files, files
// with several links under deny_hardlinks and a destination entry the
// policy does not let the call write fail the copy, naming the entry.
// Ignore files and hidden names do not apply; modes are kept.
//
// An existing destination is refused (exists) unless Force: then the
// copy merges into it, as GNU cp -rf does: its directories stay, its
// files of the same name are replaced, the rest is left alone. Under
// [write] require_precondition every file replaced must be named by an
// Expect PATH=HEX.
func CopyTree(ctx context.Context, sb *sandbox.Sandbox, src, dst string, o CopyTreeOptions) (CopyResult, error) {
	if err := begin(ctx, sb, "cp"); err != nil {
		return CopyResult{}, err
	}
	excl, err := newGlobs(o.Exclude)
	if err != nil {
		return CopyResult{}, err
	}
	d, err := sb.OpenDir(src)
	if err != nil {
		if e := fserr.AsError(err); e != nil && e.Code == fserr.CodeNotADir {
			return copyOneFile(ctx, sb, src, dst, o)
		}
		return CopyResult{}, err
	}
	srcInfo := d.Info
	d.Close()
	// The destination: dst, or dst/NAME when dst is a directory.
	top := dst
	if dd, err := sb.OpenDir(dst); err == nil {
		dd.Close()
		name := path.Base(path.Clean(strings.ReplaceAll(src, "\\", "/")))
		if name == "." || name == ".." || name == "/" {
			name = path.Base(strings.ReplaceAll(srcInfo.Abs, "\\", "/"))
		}
		top = path.Join(dst, name)
	}
	w, err := sb.OpenEntry(top)
	if err != nil {
		return CopyResult{}, err
	}
	defer w.Close()
	if w.Exists {
		if w.Info.Type != "dir" {
			return CopyResult{}, fserr.Errorf(fserr.CodeExists, w.Path, "%s exists and is not a directory: a directory cannot replace it", w.Path)
		}
		if !o.Force {
			return CopyResult{}, fserr.Errorf(fserr.CodeExists, w.Path, "%s exists:", w.Path).WithHint(sandbox.HintReplace)
		}
	}
	// A destination inside the source, by path or by identity (a bind
	// mount), would copy the tree into itself.
	if within(w.Abs(), srcInfo.Abs) {
		return CopyResult{}, usagef(dst, "cannot copy %s into itself (%s lies inside it)", srcInfo.Path, w.Path)
	}
	above := map[[2]uint64]bool{}
	for _, k := range w.AncestorKeys() {
		above[k] = true
	}
	if above[srcInfo.Key()] {
		return CopyResult{}, usagef(dst, "cannot copy %s into itself (%s lies inside it)", srcInfo.Path, w.Path)
	}
	expect, err := treeExpects(sb, o.Expect)
	if err != nil {
		return CopyResult{}, err
	}
	items := []sandbox.TreeItem{{Rel: "", Type: "dir", Mode: srcInfo.Mode.Perm()}}
	var skipped CopySkipped
	max := sb.Limits().MaxWriteBytes
	denyLinks := sb.Policy() != nil && sb.Policy().Paths.DenyHardlinks
	var walkErr error
	fail := func(err error) error { walkErr = err; return err }
	wo := walkOptions(true, true, false, false, -1)
	sk, err := sb.Walk(ctx, src, wo, func(e *sandbox.Entry) error {
		defer e.Release()
		if len(excl) > 0 && excl.match(e.Rel, e.Type == "dir") {
			skipped.Excluded++
			if e.Type == "dir" {
				return sandbox.SkipDir
			}
			return nil
		}
		info, err := e.Lstat()
		if err != nil {
			return fail(err)
		}
		it := sandbox.TreeItem{Rel: e.Rel, Type: info.Type, Mode: info.Mode.Perm(), Src: e.Path}
		switch info.Type {
		case "dir":
			if above[info.Key()] {
				return fail(usagef(dst, "cannot copy %s into itself (%s lies inside it, as %s)", srcInfo.Path, w.Path, e.Path))
			}
		case "file":
			if denyLinks && info.Nlink > 1 {
				return fail(fserr.Deny(fserr.RuleHardlink, e.Path, "%s has %d hard links and deny_hardlinks is on: nothing was copied", e.Path, info.Nlink))
			}
			if info.Size > max {
				return fail(&fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Path: e.Path,
					Msg: fmt.Sprintf("%s is %d bytes, over max_write_bytes = %d: nothing was copied", e.Path, info.Size, max)})
			}
			it.Size, it.Key = info.Size, info.Key()
		case "symlink":
			it.Target, it.Mode = info.Target, 0
		default:
			return fail(fserr.Deny(fserr.RuleSpecialFile, e.Path, "%s is a %s: only files, directories and symlinks are copied (nothing was copied)", e.Path, info.Type))
		}
		items = append(items, it)
		return nil
	})
	if walkErr != nil {
		return CopyResult{}, walkErr
	}
	if err != nil {
		if timedOut(ctx, err) {
			return CopyResult{}, &fserr.Error{Code: fserr.CodeTimeout, Path: src, Err: err,
				Msg: fmt.Sprintf("the call ran out of time reading %s: nothing was copied", src)}
		}
		return CopyResult{}, err
	}
	if sk.Errors > 0 || sk.LongPaths > 0 {
		return CopyResult{}, fserr.Errorf(fserr.CodeIO, src, "%s: %d directories could not be read and %d paths are too long: nothing was copied", src, sk.Errors, sk.LongPaths)
	}
	skipped.Denied = sk.Denied
	if err := sb.CheckTree(w, items); err != nil {
		return CopyResult{}, err
	}
	if len(expect) > 0 {
		named := map[string]bool{}
		for _, it := range items {
			if it.Type == "file" {
				named[path.Join(w.Path, it.Rel)] = true
			}
		}
		for p := range expect {
			if !named[p] {
				return CopyResult{}, usagef(p, "expect-sha256 names %s, which the copy does not write", p)
			}
		}
		if !w.Exists {
			for p, e := range expect {
				return CopyResult{}, sb.Mismatch(p, "", e)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return CopyResult{}, err // the deadline, before the commit only (SPEC §5)
	}
	open := func(it *sandbox.TreeItem) (*sandbox.File, error) { return sb.Open(it.Src) }
	r, err := sb.CopyTree(w, sandbox.TreeCopy{Items: items, Open: open, Merge: w.Exists, Expect: expect})
	if err != nil {
		return CopyResult{}, err
	}
	return CopyResult{From: srcInfo.Path, To: w.Path, Bytes: r.Bytes, Files: r.Files, Dirs: r.Dirs, Symlinks: r.Symlinks,
		Replaced: r.Replaced, Skipped: &skipped}, nil
}

// copyOneFile is cp -r of a file: cp of it (an existing directory dst
// means dst/NAME, as GNU cp).
func copyOneFile(ctx context.Context, sb *sandbox.Sandbox, src, dst string, o CopyTreeOptions) (CopyResult, error) {
	if d, err := sb.OpenDir(dst); err == nil {
		d.Close()
		dst = path.Join(dst, path.Base(path.Clean(src)))
	}
	expect := ""
	for _, e := range o.Expect {
		p, hex, ok := strings.Cut(e, "=")
		if !ok {
			hex = p
		} else if path.Clean(p) != path.Clean(dst) {
			return CopyResult{}, usagef(p, "expect-sha256 names %s, which the copy does not write", p)
		}
		expect = hex
	}
	if len(o.Exclude) > 0 {
		return CopyResult{}, usagef(src, "%s is a file: exclude leaves out entries of a directory copied with recursive", src)
	}
	return CopyExpect(ctx, sb, src, dst, o.Force, expect)
}

// treeExpects reads cp -r's --expect-sha256 PATH=HEX values, keyed by
// the destination path as output shows it.
func treeExpects(sb *sandbox.Sandbox, given []string) (map[string]string, error) {
	out := map[string]string{}
	for _, g := range given {
		p, hex, ok := strings.Cut(g, "=")
		if !ok || p == "" {
			return nil, usagef("", "with recursive, expect-sha256 names the file it replaces: PATH=HEX, got %q", g)
		}
		e, err := expectArg(p, hex)
		if err != nil {
			return nil, err
		}
		key := path.Clean(p)
		if path.IsAbs(key) {
			if rel, err := sb.WorkdirRel(key); err == nil && rel != "" {
				key = rel
			}
		}
		if _, dup := out[key]; dup {
			return nil, usagef(p, "expect-sha256 names %s twice", p)
		}
		out[key] = *e
	}
	return out, nil
}

// within reports whether the absolute path p is dir or lies below it.
func within(p, dir string) bool {
	p, dir = strings.ReplaceAll(p, "\\", "/"), strings.ReplaceAll(dir, "\\", "/")
	if p == dir {
		return true
	}
	if !strings.HasSuffix(dir, "/") {
		dir += "/"
	}
	return strings.HasPrefix(p, dir)
}
