package ops

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/textio"
)

// EditSpec is one replacement.
type EditSpec struct {
	Old string `json:"old"`
	New string `json:"new"`
	All bool   `json:"all,omitempty"` // replace every occurrence
}

// EditOptions are edit's inputs.
type EditOptions struct {
	Path         string
	Edits        []EditSpec // applied in order, all or nothing
	DryRun       bool
	ExpectSHA256 string
}

// EditResult describes the change.
type EditResult struct {
	Path         string  `json:"path"`
	Replacements int     `json:"replacements"`
	Diff         string  `json:"diff"`
	SHA256       string  `json:"sha256"` // of the new content (the current one with --dry-run... see DryRun)
	DryRun       bool    `json:"dry_run"`
	ChangeID     *string `json:"change_id"` // the journal's id of the change; null with --dry-run or without a journal
}

// Edit replaces exact text in a file. Old text written with "\n" matches a
// "\r\n" file and the new text gets "\r\n" too. Bytes outside the edits
// never change. Absent old text is text_not_found (with the closest lines),
// several matches without All are ambiguous (with their line numbers).
func Edit(ctx context.Context, sb *sandbox.Sandbox, o EditOptions) (EditResult, error) {
	if err := begin(ctx, sb, "edit"); err != nil {
		return EditResult{}, err
	}
	if len(o.Edits) == 0 {
		return EditResult{}, usagef(o.Path, "no edit given: give old and new, or edits")
	}
	for i, e := range o.Edits {
		if e.Old == "" {
			return EditResult{}, usagef(o.Path, "edit %d: the old text is empty", i+1)
		}
	}
	expect := strings.ToLower(o.ExpectSHA256)
	if expect != "" && !isSHA256(expect) {
		return EditResult{}, usagef(o.Path, "expect-sha256 wants 64 hex digits, got %q", o.ExpectSHA256)
	}
	w, err := sb.OpenWriteTarget(o.Path, false)
	if err != nil {
		return EditResult{}, err
	}
	defer w.Close()
	if !w.Exists {
		return EditResult{}, sandbox.Errorf(sandbox.CodeNotFound, o.Path, "%s does not exist", o.Path)
	}
	for i, e := range o.Edits {
		which := "the "
		if len(o.Edits) > 1 {
			which = fmt.Sprintf("edit %d: the ", i+1)
		}
		if err := capText(sb, int64(len(e.Old)), o.Path, which+"old text", ": nothing was changed"); err != nil {
			return EditResult{}, err
		}
		if err := capText(sb, int64(len(e.New)), o.Path, which+"new text", ": nothing was changed"); err != nil {
			return EditResult{}, err
		}
	}
	f, err := w.Current()
	if err != nil {
		return EditResult{}, err
	}
	max, maxName := holdLimit(sb.Limits().MaxWriteBytes, "max_write_bytes")
	old, err := readUpTo(textio.WithContext(ctx, f), f.Info.Size, satAdd(max, 1))
	f.Close()
	if err != nil {
		return EditResult{}, sandbox.AsError(err)
	}
	if int64(len(old)) > max {
		return EditResult{}, &sandbox.Error{Code: sandbox.CodeTooLarge, Rule: sandbox.RuleSizeCap, Path: o.Path,
			Msg: fmt.Sprintf("%s is over %s = %d, so it cannot be rewritten", o.Path, maxName, max)}
	}
	if expect != "" && sha256Hex(old) != expect {
		return EditResult{}, sandbox.Errorf(sandbox.CodeConflict, o.Path, "%s changed: its sha256 is %s, not %s", o.Path, sha256Hex(old), expect)
	}
	set, err := resolveEdits(old, o.Edits, o.Path)
	if err != nil {
		return EditResult{}, err
	}
	cur, n, err := applyAll(old, set, o.Path, max, maxName)
	if err != nil {
		return EditResult{}, err
	}
	res := EditResult{Path: w.Path, DryRun: o.DryRun, Replacements: n}
	res.Diff = renderDiff("a/"+w.Path, "b/"+w.Path, old, cur, set)
	res.SHA256 = sha256Hex(cur)
	if o.DryRun {
		return res, nil
	}
	// The file must still be what was read when the new content takes
	// its name: checked under the workdir's write lock.
	r, err := w.Commit(bytes.NewReader(cur), max, sandbox.CommitOptions{Unchanged: true})
	res.ChangeID = changeID(r.ChangeID)
	if err != nil {
		return EditResult{}, err
	}
	return res, nil
}

func toCRLF(b []byte) []byte {
	return bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")), []byte("\n"), []byte("\r\n"))
}
