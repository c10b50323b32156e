package ops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
	"github.com/fsbox/fsbox/pkg/textio"
)

var statOp = &spec.Op{
	Name: "stat", Class: spec.Read, Result: statShape{}, Pages: true,
	Summary: "describe a path (a symlink as itself); a missing path is exists:false",
	Help: "Describes PATH without following a final symlink: its type, size, mode, mtime and, for a symlink, its target. A path that does not exist is no error: exists is false. " +
		"Given several paths, stat describes each in argument order in files[] (a list: max_results cuts it, out loud) and reports each path it could not describe (denied, io, ...) in errors[] while it goes on with the rest; " +
		"the exit status is then the first failing path's class, and only when every path fails does the call fail as a whole, with the first path's error.",
	Args: []spec.Arg{
		{Name: "path", Meta: "PATH", Help: "the path to describe (with check: PATH=HEX)", Use: sandbox.NeedLook, Complete: spec.CompleteFiles, OmitWith: []string{"check-file"}},
		{Name: "more_paths", Meta: "PATH", Help: "more paths to describe: the result is then {files[], count, truncated, errors[]} (with check: more PATH=HEX)", Use: sandbox.NeedLook, Many: true, Optional: true, Complete: spec.CompleteFiles},
	},
	Options: []spec.Option{
		{Name: "sha256", Type: spec.Bool, Help: "add the SHA-256 of a regular file's content"},
		{Name: "check", Type: spec.Bool, Help: "every argument is PATH=HEX (split at the last =; HEX is a SHA-256, 64 hex digits, or absent): answer {changed[{path, exists, sha256?}], unchanged[], errors[]}, each file read once, as read opens it"},
		{Name: "check-file", Type: spec.String, Meta: "FILE", CLIOnly: true, Complete: spec.CompleteFiles, Help: "check the PATH=HEX lines of FILE (- is standard input; blank lines are skipped), after any arguments; implies check"},
	},
	Examples: []spec.Example{
		{Cmd: "stat main.go --sha256", Says: "type, size, mode, mtime and content hash"},
		{Cmd: "stat main.go notes.txt missing.txt", Says: "several paths: files[] in argument order (missing.txt with exists:false)"},
		{Cmd: "stat --check notes.txt=0000000000000000000000000000000000000000000000000000000000000000 missing.txt=absent", Says: "which files changed since their hashes were taken: notes.txt in changed[] with its sha256 now, missing.txt in unchanged[]"},
	},
	JSONNote: "one PATH: {path, exists, type, size, mtime, mode, target?, sha256?}; several: {files[] of those, count, truncated, limit?, errors?[{path, code, message}], errors_more?}; " +
		"check: {changed[{path, exists, sha256?}], unchanged[] (paths), count, truncated, limit?, errors?[], errors_more?}: a path whose content hashes to its HEX (or absent as absent expects) is unchanged; a denied path is in errors[] as denied, whether it exists or not",
	Text: "one tab-separated line a path: path type size mode mtime [-> target] [sha256], or path missing; a path that failed among several is a fsbox: CODE: message line on stderr; " +
		"check: PATH: CHANGED SHA256|missing|not a file, then PATH: OK, a line a path, as sha256sum -c",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		if in.Bool("check") || in.IsSet("check-file") {
			pg, err := pagingOf(sb, in)
			if err != nil {
				return nil, err
			}
			var entries []string
			if in.IsSet("path") {
				entries = append(entries, in.String("path"))
			}
			return StatCheck(ctx, sb, CheckOptions{Entries: append(entries, in.Strings("more_paths")...), File: in.String("check-file"), Paging: pg})
		}
		o := StatOptions{Path: in.String("path"), SHA256: in.Bool("sha256")}
		if more := in.Strings("more_paths"); len(more) > 0 {
			pg, err := pagingOf(sb, in)
			if err != nil {
				return nil, err
			}
			return StatFiles(ctx, sb, StatFilesOptions{Paths: append([]string{o.Path}, more...), SHA256: o.SHA256, Paging: pg})
		}
		if in.Cursor != "" {
			// One path is no list: there is no page after it.
			if _, err := pagingOf(sb, in); err != nil {
				return nil, err
			}
		}
		return Stat(ctx, sb, o)
	},
}

// StatOptions are stat's inputs.
type StatOptions struct {
	Path   string
	SHA256 bool // hash a regular file's content
}

// StatResult describes one path; a symlink is described as itself.
type StatResult struct {
	Path   string  `json:"path"`
	Exists bool    `json:"exists"`
	Type   string  `json:"type,omitempty"`
	Size   int64   `json:"size"`
	Mtime  string  `json:"mtime,omitempty"`
	Mode   string  `json:"mode,omitempty"`
	Target *string `json:"target,omitempty"`
	SHA256 *string `json:"sha256,omitempty"`
}

// StatFilesOptions are the inputs of stat given several paths.
type StatFilesOptions struct {
	Paths  []string
	SHA256 bool
	// Paging: a page starts at the path argument after From.Arg (the
	// index, in Paths, of the last path the page before it gave).
	Paging
}

// StatFilesResult describes several paths: Files in argument order (a
// list, which max_results cuts), and the paths that could not be
// described in Errors.
type StatFilesResult struct {
	Files []StatResult `json:"files" fsbox:"items"`
	Count int64        `json:"count"`
	Truncation
	PathErrors
}

// statShape is stat's JSON as its schemas give it: one path's fields
// (StatResult) or several paths' (StatFilesResult), whichever the call
// asked for; never both.
type statShape struct {
	Path       *string      `json:"path,omitempty"`
	Exists     *bool        `json:"exists,omitempty"`
	Type       string       `json:"type,omitempty"`
	Size       *int64       `json:"size,omitempty"`
	Mtime      string       `json:"mtime,omitempty"`
	Mode       string       `json:"mode,omitempty"`
	Target     *string      `json:"target,omitempty"`
	SHA256     *string      `json:"sha256,omitempty"`
	Files      []StatResult `json:"files,omitempty" fsbox:"items"`
	Count      *int64       `json:"count,omitempty"`
	Truncated  *bool        `json:"truncated,omitempty"`
	Limit      string       `json:"limit,omitempty"`
	NextCursor string       `json:"next_cursor,omitempty"`
	Errors     []PathError  `json:"errors,omitempty"`
	ErrorsMore int64        `json:"errors_more,omitempty"`
	// --check's lists.
	Changed   []CheckChanged `json:"changed,omitempty"`
	Unchanged []string       `json:"unchanged,omitempty"`
}

// Stat describes a path without following a final symlink. A missing path
// is Exists:false, not an error.
func Stat(ctx context.Context, sb *sandbox.Sandbox, o StatOptions) (StatResult, error) {
	if err := begin(ctx, sb, "stat"); err != nil {
		return StatResult{}, err
	}
	r, err := describe(ctx, sb, o.Path, o.SHA256)
	if err != nil && timedOut(ctx, err) {
		// One path cut by the deadline or [store] max_requests is
		// timeout, as read's is (the store's error says which), not io.
		return StatResult{}, fserr.Timeout(o.Path, err)
	}
	return r, err
}

// StatFiles describes each of several paths, in argument order: a path
// that fails is reported in Errors and the others are still described
// (SPEC §2); only when every path fails is the call's error the first
// path's. max_results and max_result_bytes cut Files (Truncated): the
// paths after the cut are not looked at, and next_cursor names the last
// path argument given (described or reported in Errors).
func StatFiles(ctx context.Context, sb *sandbox.Sandbox, o StatFilesOptions) (StatFilesResult, error) {
	if err := begin(ctx, sb, "stat"); err != nil {
		return StatFilesResult{}, err
	}
	res := StatFilesResult{Files: []StatResult{}}
	pg := newPager(sb, 0)
	// last is the index of the last path argument given: the page after
	// a cursor starts at the one after it (an index, compared with the
	// call's own arguments, which the cursor is bound to).
	last, paths := int64(-1), o.Paths
	if o.From != nil {
		last = o.From.Arg
		paths = paths[min(max(last+1, 0), int64(len(paths))):]
	}
	base := last + 1 // index of paths[0] in o.Paths
	next := func() string {
		if last < 0 {
			return "" // nothing given, and no cursor came: this call again is the next page
		}
		return o.next(Cursor{Arg: last})
	}
	for i, p := range paths {
		if pg.n >= pg.max { // the item cap is reached: the paths after it are not looked at
			res.cut(pg.capName, next())
			break
		}
		if timedOut(ctx, ctx.Err()) {
			cutByDeadline(ctx, &res.Truncation) // the paths before are described
			res.NextCursor = next()
			break
		}
		r, err := describe(ctx, sb, p, o.SHA256)
		if err != nil {
			if timedOut(ctx, err) {
				cutByDeadline(ctx, &res.Truncation) // caught hashing it: left out
				res.NextCursor = next()
				break
			}
			if ctx.Err() != nil {
				return StatFilesResult{}, ctx.Err()
			}
			res.PathErrors.add(sb, p, err, true)
			last = base + int64(i)
			continue
		}
		if lim := pg.admit(jsonLen(r)); lim != "" {
			res.cut(lim, next())
			break
		}
		res.Files = append(res.Files, r)
		last = base + int64(i)
	}
	res.Count = int64(len(res.Files))
	if err := res.PathErrors.end(len(o.Paths)); err != nil {
		return StatFilesResult{}, err
	}
	return res, nil
}

// describe is one path's StatResult.
func describe(ctx context.Context, sb *sandbox.Sandbox, path string, hash bool) (StatResult, error) {
	info, err := sb.Lstat(path)
	if err != nil {
		if fserr.Absent(err) {
			return StatResult{Path: path, Exists: false}, nil
		}
		return StatResult{}, err
	}
	res := StatResult{Path: info.Path, Exists: true, Type: info.Type, Size: info.Size,
		Mtime: rfc3339(info.ModTime), Mode: modeString(info.Mode)}
	if info.OnObjectRoot() { // no modes; a directory (a prefix) has no time
		res.Mode = ""
		if info.Type == "dir" {
			res.Mtime = ""
		}
	}
	if info.Type == "symlink" {
		t := info.Target
		res.Target = &t
	}
	if hash && info.Type == "file" && info.StoreSHA256() != "" {
		sum := info.StoreSHA256() // the object store's, verified when it was written: no read
		res.SHA256 = &sum
	} else if hash && info.Type == "file" {
		f, err := sb.Open(path)
		if err != nil {
			return StatResult{}, err
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, textio.WithContext(ctx, f)); err != nil {
			return StatResult{}, fserr.AsError(err)
		}
		sum := hex.EncodeToString(h.Sum(nil))
		res.SHA256 = &sum
	}
	return res, nil
}

// unixMode gives the permission bits plus setuid, setgid and sticky, as
// the low twelve bits of st_mode.
func unixMode(m fs.FileMode) uint32 {
	out := uint32(m.Perm())
	for bit, v := range map[fs.FileMode]uint32{fs.ModeSetuid: 0o4000, fs.ModeSetgid: 0o2000, fs.ModeSticky: 0o1000} {
		if m&bit != 0 {
			out |= v
		}
	}
	return out
}

func modeString(m fs.FileMode) string { return fmt.Sprintf("%04o", unixMode(m)) }

// Text is one line: path, type, size, mode, mtime, and a symlink's target
// and the sha256 when known; "missing" for a path that does not exist.
func (r StatResult) Text(w spec.TextWriter) error {
	if !r.Exists {
		_, err := fmt.Fprintf(w, "%s\tmissing\n", w.Name(r.Path))
		return err
	}
	fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s", w.Name(r.Path), r.Type, r.Size, r.Mode, r.Mtime)
	if r.Target != nil {
		fmt.Fprintf(w, "\t-> %s", w.Name(*r.Target))
	}
	if r.SHA256 != nil {
		fmt.Fprintf(w, "\t%s", *r.SHA256)
	}
	return w.WriteByte('\n')
}

// Text is one line a path, as one path's text form prints it; the
// failing paths go to stderr (Outcome's Failures).
func (r StatFilesResult) Text(w spec.TextWriter) error {
	for _, f := range r.Files {
		if err := f.Text(w); err != nil {
			return err
		}
	}
	return nil
}

// Outcome: a limit's cut, and the paths that failed.
func (r StatFilesResult) Outcome() spec.Outcome {
	return spec.Outcome{Cut: r.Truncation.outcomeCut(), Failures: r.PathErrors.failures()}
}

// Outcome: a whole result.
func (r StatResult) Outcome() spec.Outcome { return spec.Outcome{} }
