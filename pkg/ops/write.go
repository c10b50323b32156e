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
	"strconv"
	"strings"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

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
		return WriteResult{}, usagef(o.Path, "expect-sha256 wants 64 hex digits, got %q", o.ExpectSHA256)
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
		return WriteResult{}, sandbox.Errorf(sandbox.CodeExists, o.Path, "%s exists and no-clobber is set", o.Path)
	}
	// Checked early for a quick answer, and again by the sandbox at the
	// moment of the change, under the workdir's write lock.
	if err := checkExpected(w, expect); err != nil {
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
		data, err := io.ReadAll(io.LimitReader(o.Content, satAdd(hold, 1)))
		if err != nil {
			return WriteResult{}, sandbox.AsError(err)
		}
		if int64(len(data)) > hold {
			return WriteResult{}, &sandbox.Error{Code: sandbox.CodeTooLarge, Rule: sandbox.RuleSizeCap, Path: o.Path,
				Msg: fmt.Sprintf("the content is over %s = %d: nothing was written", holdName, hold)}
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
	} else if r, err = w.Commit(o.Content, max, co); err != nil {
		return WriteResult{}, err
	}
	res.Bytes, res.SHA256, res.ChangeID = r.Bytes, r.SHA256, changeID(r.ChangeID)
	return res, nil
}

// satAdd is a+b for non-negative values, saturating at the largest int64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func checkExpected(w *sandbox.WriteTarget, expect string) error {
	if expect == "" {
		return nil
	}
	have, err := w.CurrentSHA256()
	if err != nil {
		return err
	}
	if have != expect {
		if have == "" {
			have = "absent"
		}
		return sandbox.Errorf(sandbox.CodeConflict, w.Path, "%s changed: its sha256 is %s, not %s", w.Path, have, expect)
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
