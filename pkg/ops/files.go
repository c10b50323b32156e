package ops

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

var mkdirOp = &spec.Op{
	Name: "mkdir", Class: spec.Write, Result: MkdirResult{}, Idempotent: true,
	Summary:  "create a directory and its parents in the workdir",
	Help:     "Creates DIR in the workdir and any missing parents, one at a time; an existing directory is no error (created is false).",
	Args:     []spec.Arg{{Name: "path", Meta: "DIR", Help: "the directory to create", Use: sandbox.NeedMake, Complete: spec.CompleteDirs}},
	Options:  []spec.Option{{Name: "parents", Short: "p", Type: spec.Bool, CLIOnly: true, Help: "accepted for mkdir -p: parents are always made, and an existing directory is no error"}},
	Examples: []spec.Example{{Cmd: "mkdir build/logs --format text", Says: "the directory's path, as mkdir -v names it"}},
	Text:     "the directory's path, as mkdir -v names it",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		return Mkdir(ctx, sb, in.String("path"))
	},
}

var forceOpt = spec.Option{Name: "force", Short: "f", Type: spec.Bool, Help: "replace an existing DST"}

// replaceExpectOpt is cp's and mv's precondition on what force replaces.
var replaceExpectOpt = spec.Option{Name: "expect-sha256", Type: spec.String, Meta: "HEX", Help: "with force: replace DST only while its content has this SHA-256 (checked under the lock, at the moment of the change; refused with conflict otherwise)"}

var mvOp = &spec.Op{
	Name: "mv", Class: spec.Destructive, Result: MoveResult{},
	Summary: "move or rename within the workdir",
	Help:    "Renames SRC to DST, both in the workdir; an existing DST is refused (exists) unless force is given.",
	Args: []spec.Arg{
		{Name: "src", Meta: "SRC", Help: "what to move", Use: sandbox.NeedEntry, Complete: spec.CompleteFiles},
		{Name: "dst", Meta: "DST", Help: "where it goes", Use: sandbox.NeedEntry, Complete: spec.CompleteFiles},
	},
	Options:  []spec.Option{forceOpt, replaceExpectOpt},
	Examples: []spec.Example{{Cmd: "mv notes.txt notes.md --format text", Says: "FROM -> TO, as mv -v"}},
	Text:     "FROM -> TO, as mv -v",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		return MoveExpect(ctx, sb, in.String("src"), in.String("dst"), in.Bool("force"), in.String("expect-sha256"))
	},
}

var cpOp = &spec.Op{
	Name: "cp", Class: spec.Destructive, Result: CopyResult{}, Idempotent: true,
	Summary: "copy a readable file, or (-r) a tree, into the workdir (atomic)",
	Help: "Copies the regular file SRC (anywhere readable) to DST in the workdir, atomically; an existing DST is refused (exists) unless force is given. " +
		"With recursive, SRC may be a directory: its whole tree is copied in one call, all or nothing, as one journal change that undo takes back whole. " +
		"An existing directory DST means DST/NAME, as GNU cp -r; a DST inside SRC is a usage error. " +
		"Symlinks are copied as links, never followed, and only when their target, resolved where the copy puts them, stays in that root and is not denied there (else denied, naming the link); " +
		"FIFOs, sockets and devices, and files with several links under deny_hardlinks, fail the copy; entries the policy does not let the call read are skipped and counted (skipped.denied); " +
		"a destination entry the policy does not let the call write fails the copy, naming it. Ignore files and hidden names do not apply; exclude leaves entries out; permission bits are kept. " +
		"The tree is made under a temporary name beside DST and renamed into place: a crash leaves nothing the next change does not remove. " +
		"With force over an existing DST/NAME directory the copy merges into it, as GNU cp -rf: directories stay, files of the same name are replaced (all or none), others are left alone; " +
		"under [write] require_precondition each replaced file must be named with expect-sha256 PATH=HEX.",
	Args: []spec.Arg{
		{Name: "src", Meta: "SRC", Help: "the file (or, with recursive, the directory) to copy", Use: sandbox.NeedReadFile, Complete: spec.CompleteFiles},
		{Name: "dst", Meta: "DST", Help: "the copy's path (an existing directory: the copy goes in it, as DST/NAME, with recursive)", Use: sandbox.NeedWrite, Complete: spec.CompleteFiles},
	},
	Options: []spec.Option{
		{Name: "recursive", Short: "r", Type: spec.Bool, Help: "copy a directory and everything below it, in one change (all or nothing)"},
		forceOpt,
		{Name: "expect-sha256", Type: spec.Strings, Meta: "HEX", Help: "with force: replace DST only while its content has this SHA-256 (checked under the lock, at the moment of the change; refused with conflict otherwise); with recursive, PATH=HEX for each file replaced (repeatable)"},
		{Name: "exclude", Short: "E", Type: spec.Strings, Meta: "GLOB", Help: "with recursive: leave out entries matching GLOB, as find's exclude (repeatable); an excluded directory is not entered"},
	},
	Examples: []spec.Example{
		{Cmd: "cp main.go main.go.orig --format text", Says: "FROM -> TO, as cp -v"},
		{Cmd: "cp -r docs docs.bak --format text", Says: "FROM -> TO for the tree's top", After: "mkdir docs"},
	},
	Text: "FROM -> TO, as cp -v (for a tree, its top)",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		if in.Bool("recursive") {
			return CopyTree(ctx, sb, in.String("src"), in.String("dst"), CopyTreeOptions{Force: in.Bool("force"), Exclude: in.Strings("exclude"), Expect: in.Strings("expect-sha256")})
		}
		if len(in.Strings("exclude")) > 0 {
			return nil, usagef(in.String("src"), "exclude leaves out entries of a directory: it goes with recursive")
		}
		expect := ""
		switch e := in.Strings("expect-sha256"); len(e) {
		case 0:
		case 1:
			expect = e[0]
			if p, hex, ok := strings.Cut(expect, "="); ok {
				if path.Clean(p) != path.Clean(in.String("dst")) {
					return nil, usagef(p, "expect-sha256 names %s, which the copy does not write", p)
				}
				expect = hex
			}
		default:
			return nil, usagef(in.String("dst"), "expect-sha256 is given %d times: a file copy replaces one file", len(e))
		}
		return CopyExpect(ctx, sb, in.String("src"), in.String("dst"), in.Bool("force"), expect)
	},
}

var rmOp = &spec.Op{
	Name: "rm", Class: spec.Destructive, Result: RemoveResult{}, Off: true,
	Summary: "remove a file, a symlink, or (-r) a tree in the workdir; off unless the policy turns it on",
	Help:    "Removes PATH from the workdir: a file, a symlink (never what it points to) or, with recursive, a directory tree. A missing PATH is no error (removed is false). The built-in policy switches rm off.",
	Args:    []spec.Arg{pathArg(sandbox.NeedEntry, "what to remove")},
	Options: []spec.Option{
		{Name: "recursive", Short: "r", Type: spec.Bool, Help: "remove a directory and everything below (under [write] require_precondition: an empty directory only)"},
		{Name: "expect-sha256", Type: spec.String, Meta: "HEX", Help: "remove the file only while its content has this SHA-256 (checked under the lock, at the moment of the change; refused with conflict otherwise)"},
	},
	Examples: []spec.Example{{Cmd: "rm -r build --format text", Says: "the removed path, as rm -v names it"}},
	Text:     "the removed path, as rm -v names it",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		return RemoveExpect(ctx, sb, in.String("path"), in.Bool("recursive"), in.String("expect-sha256"))
	},
}

// MkdirResult is mkdir's answer.
type MkdirResult struct {
	Path    string `json:"path"`
	Created bool   `json:"created"`
}

// Mkdir creates a directory and its parents in the workdir.
func Mkdir(ctx context.Context, sb *sandbox.Sandbox, p string) (MkdirResult, error) {
	if err := begin(ctx, sb, "mkdir"); err != nil {
		return MkdirResult{}, err
	}
	display, created, err := sb.Mkdir(p)
	if err != nil {
		return MkdirResult{}, err
	}
	return MkdirResult{Path: display, Created: created}, nil
}

// MoveResult is mv's answer.
type MoveResult struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Move renames src to dst, both in the workdir; an existing dst is only
// replaced with force.
func Move(ctx context.Context, sb *sandbox.Sandbox, src, dst string, force bool) (MoveResult, error) {
	return MoveExpect(ctx, sb, src, dst, force, "")
}

// expectArg checks an expect-sha256 argument: "" (none) or 64 hex digits,
// returned lower-case.
func expectArg(given, expect string) (*string, error) {
	if expect == "" {
		return nil, nil
	}
	e := strings.ToLower(expect)
	if !isSHA256(e) {
		return nil, badSHA256(given, expect, "64 hex digits")
	}
	return &e, nil
}

// MoveExpect is Move whose force replaces dst only while it hashes to
// expect ("" = no check). Under [write] require_precondition, force over
// an existing dst needs expect (precondition_required).
func MoveExpect(ctx context.Context, sb *sandbox.Sandbox, src, dst string, force bool, expect string) (MoveResult, error) {
	if err := begin(ctx, sb, "mv"); err != nil {
		return MoveResult{}, err
	}
	want, err := expectArg(dst, expect)
	if err != nil {
		return MoveResult{}, err
	}
	s, err := sb.OpenEntry(src)
	if err != nil {
		return MoveResult{}, err
	}
	defer s.Close()
	if !s.Exists {
		return MoveResult{}, fserr.Errorf(fserr.CodeNotFound, src, "%s does not exist", src)
	}
	d, err := sb.OpenEntry(dst)
	if err != nil {
		return MoveResult{}, err
	}
	defer d.Close()
	if d.Exists && d.Info.Type == "dir" && s.Info.Type != "dir" {
		return MoveResult{}, fserr.Errorf(fserr.CodeExists, dst, "%s is a directory; name the destination file itself", dst)
	}
	if force && d.Exists && want == nil && sb.RequirePrecondition() {
		return MoveResult{}, sandbox.PreconditionRequired(dst, fmt.Sprintf("%s exists, and the policy requires every change to name the content it replaces: nothing was moved;", dst), sandbox.HintExpectSHA256)
	}
	if err := ctx.Err(); err != nil {
		return MoveResult{}, err // the deadline, before the commit only (SPEC §5)
	}
	if err := sb.RenameExpect(s, d, force, want); err != nil {
		return MoveResult{}, err
	}
	return MoveResult{From: s.Path, To: d.Path}, nil
}

// CopyResult is cp's answer.
type CopyResult struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256,omitempty"` // a file's (not a tree's)
	// A tree's (recursive): what it made, the files it replaced (force)
	// and what it passed over.
	Files    int          `json:"files,omitempty"`
	Dirs     int          `json:"dirs,omitempty"`
	Symlinks int          `json:"symlinks,omitempty"`
	Replaced int          `json:"replaced,omitempty"`
	Skipped  *CopySkipped `json:"skipped,omitempty"`
}

// Copy copies a readable file into the workdir, atomically; an existing
// dst is only replaced with force. The copy gets the source's permission
// bits when it is new.
func Copy(ctx context.Context, sb *sandbox.Sandbox, src, dst string, force bool) (CopyResult, error) {
	return CopyExpect(ctx, sb, src, dst, force, "")
}

// CopyExpect is Copy whose force replaces dst only while it hashes to
// expect ("" = no check). Under [write] require_precondition, force over
// an existing dst needs expect (precondition_required), and force without
// it replaces nothing.
func CopyExpect(ctx context.Context, sb *sandbox.Sandbox, src, dst string, force bool, expect string) (CopyResult, error) {
	if err := begin(ctx, sb, "cp"); err != nil {
		return CopyResult{}, err
	}
	want, err := expectArg(dst, expect)
	if err != nil {
		return CopyResult{}, err
	}
	f, err := sb.Open(src)
	if err != nil {
		return CopyResult{}, err
	}
	defer f.Close()
	w, err := sb.OpenWriteTarget(dst, true)
	if err != nil {
		return CopyResult{}, err
	}
	defer w.Close()
	if w.Exists && !force {
		return CopyResult{}, fserr.Errorf(fserr.CodeExists, dst, "%s exists:", dst).WithHint(sandbox.HintReplace)
	}
	co := sandbox.CommitOptions{NoReplace: !force, Expect: want}
	if force && want == nil && sb.RequirePrecondition() {
		if w.Exists {
			return CopyResult{}, sandbox.PreconditionRequired(dst, fmt.Sprintf("%s exists, and the policy requires every change to name the content it replaces: nothing was copied;", dst), sandbox.HintExpectSHA256)
		}
		co.NoReplace = true // force names nothing it may replace: a file that appears meanwhile stays
	}
	if want != nil {
		if err := checkExpected(sb, w, *want); err != nil { // early; again under the lock
			return CopyResult{}, err
		}
	}
	if w.HasModes() { // (an object has none: the copy keeps no mode there)
		mode := f.Info.Mode.Perm()
		co.Mode = &mode
	}
	if err := ctx.Err(); err != nil {
		return CopyResult{}, err // the deadline, before the commit only (SPEC §5)
	}
	r, err := w.Commit(f, sb.Limits().MaxWriteBytes, co)
	if err != nil {
		return CopyResult{}, err
	}
	return CopyResult{From: f.Info.Path, To: w.Path, Bytes: r.Bytes, SHA256: r.SHA256}, nil
}

// RemoveResult is rm's answer.
type RemoveResult struct {
	Path    string `json:"path"`
	Removed bool   `json:"removed"`
	Type    string `json:"type"`
	// Survived: on an object root, what another writer made below the
	// directory during rm -r (never checked, so never removed).
	Survived []string `json:"survived,omitempty"`
}

// Remove deletes a file, a symlink (never its target) or, with recursive,
// a directory tree in the workdir — never the workdir itself.
func Remove(ctx context.Context, sb *sandbox.Sandbox, p string, recursive bool) (RemoveResult, error) {
	return RemoveExpect(ctx, sb, p, recursive, "")
}

// RemoveExpect is Remove of a file only while it hashes to expect ("" =
// no check). Under [write] require_precondition a file needs expect and a
// directory must be empty (precondition_required otherwise).
func RemoveExpect(ctx context.Context, sb *sandbox.Sandbox, p string, recursive bool, expect string) (RemoveResult, error) {
	if err := begin(ctx, sb, "rm"); err != nil {
		return RemoveResult{}, err
	}
	want, err := expectArg(p, expect)
	if err != nil {
		return RemoveResult{}, err
	}
	w, err := sb.OpenEntry(p)
	if err != nil {
		return RemoveResult{}, err
	}
	defer w.Close()
	if w.Exists && w.Info.Type == "file" && want == nil && sb.RequirePrecondition() {
		return RemoveResult{}, sandbox.PreconditionRequired(p, fmt.Sprintf("the policy requires every removal to name the content it removes: %s was not removed;", p), sandbox.HintExpectSHA256)
	}
	if err := ctx.Err(); err != nil {
		return RemoveResult{}, err // the deadline, before the commit only (SPEC §5)
	}
	if err := sb.RemoveExpect(w, recursive, want); err != nil {
		return RemoveResult{}, err
	}
	return RemoveResult{Path: w.Path, Removed: true, Type: w.Info.Type, Survived: w.Survived}, nil
}

// Outcome: whole results, each.
func (r MkdirResult) Outcome() spec.Outcome { return spec.Outcome{} }
func (r MoveResult) Outcome() spec.Outcome  { return spec.Outcome{} }

// Outcome: a tree copy that skipped entries the policy denies says so
// on stderr in the text form (the copy is whole otherwise).
func (r CopyResult) Outcome() spec.Outcome {
	if r.Skipped == nil || r.Skipped.Denied == 0 {
		return spec.Outcome{}
	}
	what := fmt.Sprintf("%d entries", r.Skipped.Denied)
	if r.Skipped.Denied == 1 {
		what = "1 entry"
	}
	return spec.Outcome{Notes: []string{fmt.Sprintf("%s the policy does not let this call read were not copied (skipped.denied)", what)}}
}
func (r RemoveResult) Outcome() spec.Outcome { return spec.Outcome{} }

// Text names the directory, as mkdir -v does.
func (r MkdirResult) Text(w spec.TextWriter) error {
	_, err := fmt.Fprintln(w, w.Name(r.Path))
	return err
}

// Text is "FROM -> TO", as mv -v prints it.
func (r MoveResult) Text(w spec.TextWriter) error { return arrow(w, r.From, r.To) }

// Text is "FROM -> TO", as cp -v prints it.
func (r CopyResult) Text(w spec.TextWriter) error { return arrow(w, r.From, r.To) }

func arrow(w spec.TextWriter, from, to string) error {
	_, err := fmt.Fprintf(w, "%s -> %s\n", w.Name(from), w.Name(to))
	return err
}

// Text names what was removed, as rm -v does (nothing when nothing was).
func (r RemoveResult) Text(w spec.TextWriter) error {
	if !r.Removed {
		return nil
	}
	_, err := fmt.Fprintln(w, w.Name(r.Path))
	return err
}
