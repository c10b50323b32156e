package ops

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
	"github.com/fsbox/fsbox/pkg/textio"
)

var writeOp = &spec.Op{
	Name: "write", Class: spec.Destructive, Result: WriteResult{}, Idempotent: true,
	Summary: "write a file atomically from --content or stdin (parents created)",
	Help:    "Writes PATH in the workdir atomically: the new content goes to a temporary file that replaces PATH only when complete. Missing parent directories are created; an existing file keeps its mode unless mode is given. Content over max_write_bytes is too_large, whether it is given as content or on stdin.",
	Args: []spec.Arg{
		pathArg(sandbox.NeedWrite, "the file to write"),
		{Name: "stdin", Meta: "-", Help: "read the content from stdin", Optional: true, CLIOnly: true, Complete: spec.CompleteNone},
	},
	Options: []spec.Option{
		{Name: "content", Type: spec.String, Meta: "TEXT", ToolRequired: true, Help: "the content, taken literally (empty: an empty file); on the command line, stdin when left out"},
		{Name: "append", Type: spec.Bool, Help: "append instead of replacing"},
		{Name: "no-clobber", Type: spec.Bool, Help: "refuse (exists) if the file exists"},
		{Name: "expect-absent", Type: spec.Bool, Help: "the same as no-clobber: the file must not exist (the precondition of a new file under [write] require_precondition)"},
		{Name: "expect-sha256", Type: spec.String, Meta: "HEX", Help: "refuse (conflict) unless the current content has this SHA-256 (checked under the lock, at the moment of the change)"},
		{Name: "mode", Type: spec.String, Meta: "OCTAL", DefaultText: "keep; 0666 less umask when new", Help: "permission bits, octal 0 to 0777"},
	},
	Examples: []spec.Example{{Cmd: "write out/hello.txt --content 'hello' --format text", Says: "the file's SHA-256 and path, as sha256sum prints them"}},
	Text:     "SHA256  PATH, the line sha256sum prints, so sha256sum -c can check it",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		o := WriteOptions{Path: in.String("path"), Append: in.Bool("append"), NoClobber: in.Bool("no-clobber") || in.Bool("expect-absent"), ExpectSHA256: in.String("expect-sha256")}
		if err := begin(ctx, sb, "write"); err != nil {
			return nil, err // before stdin is read
		}
		content, err := writeContent(sb, in)
		if err != nil {
			return nil, err
		}
		o.Content = content
		if in.IsSet("mode") {
			m, err := ParseMode(in.String("mode"))
			if err != nil {
				return nil, err
			}
			o.Mode = &m
		}
		return Write(ctx, sb, o)
	},
}

// writeContent picks write's content. content is taken as given (even
// "-" or ""); a second operand "-" reads stdin whatever it is, as cat
// reads "-"; with neither, stdin is read only when the face passed it
// (the command line does when it is a pipe or socket or a regular file:
// a terminal would wait forever, and /dev/null, what exec tools often
// give, would silently empty the file).
func writeContent(sb *sandbox.Sandbox, in *spec.Input) (io.Reader, error) {
	dash, given := in.IsSet("stdin"), in.IsSet("content")
	switch {
	case dash && in.String("stdin") != sandbox.StdinPath:
		return nil, usageErr("usage: fsbox write PATH [-]: the only operand after PATH is -, to read the content from stdin")
	case dash && given:
		return nil, fserr.Errorf(fserr.CodeUsage, "", "write takes its content from").WithHint(fserr.Hint{Option: "content", Text: "%s or from stdin (-), not both"})
	case given:
		return strings.NewReader(in.String("content")), nil
	case dash && !sb.HasStdin():
		return strings.NewReader(""), nil
	case dash:
		return sb.OpenStdin()
	case in.Stdin != nil:
		return in.Stdin, nil
	}
	return nil, fserr.Errorf(fserr.CodeUsage, "", "write needs content:").WithHint(fserr.Hint{Option: "content", Text: "give %[1]s TEXT (%[1]s '' for an empty file) or pipe the content (stdin is not a pipe or a file; - after PATH reads it anyway)"})
}

// WriteOptions are write's inputs.
type WriteOptions struct {
	Path         string
	Content      io.Reader
	Append       bool
	NoClobber    bool
	ExpectSHA256 string       // the current content must hash to this ("" = no check)
	Mode         *fs.FileMode // for a new file (and, given, for an existing one); permission bits only
}

// WriteResult describes what was written.
type WriteResult struct {
	Path    string `json:"path"`
	Bytes   int64  `json:"bytes"`
	Created bool   `json:"created"`
	SHA256  string `json:"sha256"` // of the file's whole content afterwards
	// ChangeID is the journal's id of the change (undo takes it back);
	// null without a journal.
	ChangeID *string `json:"change_id"`
}

// Write replaces a file atomically (or appends to it), creating parents.
func Write(ctx context.Context, sb *sandbox.Sandbox, o WriteOptions) (WriteResult, error) {
	if err := begin(ctx, sb, "write"); err != nil {
		return WriteResult{}, err
	}
	if o.Mode != nil && *o.Mode&^fs.ModePerm != 0 {
		// Setuid, setgid, sticky or a type bit: refused before anything
		// is opened, so no caller (CLI or library) can make a setuid file.
		return WriteResult{}, usagef(o.Path, "the mode takes permission bits only (0 to 0777): %v has more", *o.Mode)
	}
	expect := strings.ToLower(o.ExpectSHA256)
	if expect != "" && !isSHA256(expect) {
		return WriteResult{}, badSHA256(o.Path, o.ExpectSHA256, "64 hex digits")
	}
	w, err := sb.OpenWriteTarget(o.Path, true)
	if err != nil {
		return WriteResult{}, err
	}
	defer w.Close()
	if l, ok := o.Content.(interface{ Len() int }); ok {
		// A text in hand (--content, a tool argument): refused before
		// anything else is looked at, as Commit would refuse it.
		if err := capText(sb, int64(l.Len()), o.Path, "the content", ": nothing was written"); err != nil {
			return WriteResult{}, err
		}
	}
	if o.NoClobber && w.Exists {
		return WriteResult{}, fserr.Errorf(fserr.CodeExists, o.Path, "%s exists and no-clobber is set", o.Path)
	}
	// Under [write] require_precondition a write names what it replaces:
	// the sha256 of the file, or that there is none. Which one the hint
	// names follows what is there now; either way the check itself runs
	// under the lock, at the moment of the change.
	if expect == "" && !o.NoClobber && sb.RequirePrecondition() {
		if w.Exists {
			return WriteResult{}, sandbox.PreconditionRequired(o.Path, fmt.Sprintf("%s exists, and the policy requires every change to name the content it replaces: nothing was written;", o.Path), sandbox.HintExpectSHA256)
		}
		return WriteResult{}, sandbox.PreconditionRequired(o.Path, fmt.Sprintf("%s does not exist, and the policy requires every change to name what it replaces: nothing was written;", o.Path), sandbox.HintExpectAbsent)
	}
	// Checked early for a quick answer, and again by the sandbox at the
	// moment of the change, under the workdir's write lock.
	if err := checkExpected(sb, w, expect); err != nil {
		return WriteResult{}, err
	}
	co := sandbox.CommitOptions{Mode: o.Mode, NoReplace: o.NoClobber}
	if expect != "" {
		co.Expect = &expect
	}
	max := sb.Limits().MaxWriteBytes
	res := WriteResult{Path: w.Path, Created: !w.Exists}
	var r sandbox.ReplaceResult
	if o.Append {
		// An append is one write(2) of content held whole.
		hold, holdName := holdLimit(max, "max_write_bytes")
		data, err := io.ReadAll(io.LimitReader(stopAt(ctx, o.Content), satAdd(hold, 1)))
		if err != nil {
			return WriteResult{}, fserr.AsError(err)
		}
		if int64(len(data)) > hold {
			return WriteResult{}, &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Path: o.Path,
				Msg: fmt.Sprintf("the content is over %s = %d: nothing was written", holdName, hold)}
		}
		if err := ctx.Err(); err != nil {
			return WriteResult{}, err // the deadline, before the commit only (SPEC §5)
		}
		if co.NoReplace {
			// --append --no-clobber: create the file, never add to one.
			r, err = w.Commit(bytes.NewReader(data), max, co)
		} else {
			r, err = w.Append(data, co)
		}
		if err != nil {
			return WriteResult{}, err
		}
	} else if err := ctx.Err(); err != nil {
		return WriteResult{}, err // the deadline, before the commit only (SPEC §5)
	} else if r, err = w.Commit(stopAt(ctx, o.Content), max, co); err != nil {
		// The content is read as it comes (a pipe): a read past the
		// deadline stops it (timeout), and the commit checks the deadline
		// once the content is in (SPEC "Roots by identity [seal]").
		return WriteResult{}, err
	}
	res.Bytes, res.SHA256, res.ChangeID = r.Bytes, r.SHA256, changeID(r.ChangeID)
	return res, nil
}

// stopAt is write's content made to stop, read by read, once ctx is done
// (textio.WithContext): a pipe that trickles on cannot hold a write past
// its deadline. A regular file ends on its own, and stays as it is, so
// the kernel still copies it (copy_file_range). A pipe that gives nothing
// at all holds the read until it ends, as it does for sort.
func stopAt(ctx context.Context, r io.Reader) io.Reader {
	switch f := r.(type) {
	case *os.File:
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return r
		}
	case *sandbox.File:
		if f.Info.Size >= 0 { // standard input that is a regular file
			return r
		}
	}
	return textio.WithContext(ctx, r)
}

// satAdd is a+b for non-negative values, saturating at the largest int64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func checkExpected(sb *sandbox.Sandbox, w *sandbox.WriteTarget, expect string) error {
	if expect == "" {
		return nil
	}
	have, err := w.CurrentSHA256()
	if err != nil {
		return err
	}
	if have != expect {
		return sb.Mismatch(w.Path, have, expect)
	}
	return nil
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ParseMode reads a mode option: permission bits in octal, 0 to 0777,
// written 644, 0644 or 0o644. Setuid, setgid and sticky (4000, 2000, 1000)
// are refused (SPEC: modes are permission bits only), as is anything that
// is not octal digits: a sign, spaces, 0x, symbolic modes such as u+x.
func ParseMode(s string) (fs.FileMode, error) {
	digits := s
	if len(s) > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'O') {
		digits = s[2:]
	}
	v, err := strconv.ParseUint(digits, 8, 32)
	if err != nil { // ParseUint takes no sign, no spaces, no 0x in base 8
		return 0, usageErr("mode wants octal permission bits such as 0644, got %q", s)
	}
	if v > 0o777 {
		return 0, usageErr("mode takes permission bits only (0 to 0777): setuid, setgid and sticky (4000, 2000, 1000) are refused, got %q", s)
	}
	return fs.FileMode(v), nil
}

// Outcome: a whole result.
func (r WriteResult) Outcome() spec.Outcome { return spec.Outcome{} }

// Text is sha256sum's line, so `sha256sum -c` can check it.
func (r WriteResult) Text(w spec.TextWriter) error {
	_, err := fmt.Fprintf(w, "%s  %s\n", r.SHA256, w.Name(r.Path))
	return err
}
