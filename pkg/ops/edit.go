package ops

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
	"github.com/fsbox/fsbox/pkg/textio"
)

var editOp = &spec.Op{
	Name: "edit", Class: spec.Destructive, Result: EditResult{},
	Summary: "replace exact text in a file (atomic; CRLF, BOM and mode kept)",
	Help:    "Replaces OLD with NEW in PATH. OLD must occur exactly once unless all is given; several edits are matched against the original text, must not overlap, and apply together or not at all (with sequential, each is matched against the text the ones before it left). An edit whose result is the file's content unchanged (new the same as old, or an empty list of edits) writes nothing and records nothing in the journal, after the precondition (expect-sha256) is checked: the result says changed: false, and undo afterwards takes back the change before it. The result shows the unified diff; with a list of edits, sequential or loose-indent it also says, per edit, how and where it matched. An old or new text over max_write_bytes is too_large, however it is given.",
	Args:    []spec.Arg{pathArg(sandbox.NeedWrite, "the file to edit")},
	Options: []spec.Option{
		{Name: "old", Type: spec.String, Meta: "TEXT", Help: "the exact text to replace"},
		{Name: "new", Type: spec.String, Meta: "TEXT", Help: "the text to put in its place (empty: delete)"},
		{Name: "old-file", Type: spec.String, Meta: "FILE", CLIOnly: true, Complete: spec.CompleteFiles, Help: "read the old text from FILE"},
		{Name: "new-file", Type: spec.String, Meta: "FILE", CLIOnly: true, Complete: spec.CompleteFiles, Help: "read the new text from FILE"},
		{Name: "edits", Type: spec.Objects, Meta: "JSON", Help: `several edits, each {"old", "new", "all", "expect_count"}, applied together (an empty list changes nothing)`, Fields: []spec.Option{
			{Name: "old", Type: spec.String, ToolRequired: true, Help: "the exact text to replace"},
			{Name: "new", Type: spec.String, ToolRequired: true, Help: "the text to put in its place"},
			{Name: "all", Type: spec.Bool, Help: "replace every occurrence"},
			{Name: "expect-count", Type: spec.Int, Min: min1, Help: "replace every occurrence, and there must be exactly this many (ambiguous when more, text_not_found when fewer, with the real count)"},
		}},
		{Name: "all", Type: spec.Bool, Help: "replace every occurrence"},
		{Name: "expect-count", Type: spec.Int, Meta: "N", Min: min1, Help: "replace every occurrence (implies all), and there must be exactly N: more is ambiguous, fewer is text_not_found, each with the real count"},
		{Name: "sequential", Type: spec.Bool, Help: "apply several edits one after another: each is matched against the text the edits before it left, so it may match text an earlier one wrote (without it, every edit is matched against the original text)"},
		{Name: "loose-indent", Type: spec.Bool, Help: "when an old text is not found exactly, match it line by line with each line's leading and trailing blanks (spaces, tabs) ignored, over whole lines; more than one such match is ambiguous. The new lines are re-indented: each gets the file's indentation of the matched line whose old-text indentation is the longest prefix of its own, plus the rest of its own (no such line: the first matched line's indentation); blank new lines are written empty. The file's line endings are kept"},
		{Name: "dry-run", Type: spec.Bool, Help: "show the diff, change nothing"},
		{Name: "expect-sha256", Type: spec.String, Meta: "HEX", Help: "refuse (conflict) unless the current content has this SHA-256"},
	},
	Examples: []spec.Example{{Cmd: "edit main.go --old 'TODO: flags' --new 'DONE: flags' --dry-run --format text", Says: "the diff the edit would make"}},
	Text:     "the unified diff",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		if err := begin(ctx, sb, "edit"); err != nil {
			return nil, err // before old_file or new_file is read
		}
		o, err := EditInput(sb, in)
		if err != nil {
			return nil, err
		}
		r, err := Edit(ctx, sb, o)
		return &r, err
	},
}

// EditInput turns an edit input into options; old-file and new-file are
// read through the sandbox (a caller checks edit's switch first, as Run
// does: Edit checks it again, too late for those reads).
func EditInput(sb *sandbox.Sandbox, in *spec.Input) (EditOptions, error) {
	o := EditOptions{Path: in.String("path"), DryRun: in.Bool("dry-run"), ExpectSHA256: in.String("expect-sha256"),
		Sequential: in.Bool("sequential"), LooseIndent: in.Bool("loose-indent")}
	if in.IsSet("edits") {
		o.ReportEdits = true
		if in.IsSet("old") || in.IsSet("new") || in.IsSet("old-file") || in.IsSet("new-file") || in.IsSet("all") {
			return o, usageErr("edits does not go with old, new or all")
		}
		if in.IsSet("expect-count") {
			return o, usageErr("edits does not go with expect-count: give expect_count per edit")
		}
		err := in.Decode("edits", &o.Edits)
		if o.Edits == nil {
			o.Edits = []EditSpec{} // null is no edit, as [] is
		}
		return o, err
	}
	text := func(name string) (string, error) {
		if in.IsSet(name) && in.IsSet(name+"-file") {
			return "", usageErr("give %s or %s-file, not both", name, name)
		}
		if !in.IsSet(name + "-file") {
			return in.String(name), nil
		}
		p := in.String(name + "-file")
		f, err := sb.Open(p)
		if err != nil {
			return "", err
		}
		defer f.Close()
		// Never cut short: a truncated old text could match somewhere it
		// should not.
		return readText(sb, f, f.Info.Size, p, name+"-file "+p, "")
	}
	if (!in.IsSet("old") && !in.IsSet("old-file")) || (!in.IsSet("new") && !in.IsSet("new-file")) {
		return o, usageErr("edit needs old and new (new '' deletes), or edits")
	}
	old, err := text("old")
	if err != nil {
		return o, err
	}
	new, err := text("new")
	if err != nil {
		return o, err
	}
	o.Edits = []EditSpec{{Old: old, New: new, All: in.Bool("all")}}
	if in.IsSet("expect-count") {
		n := int(in.Int("expect-count"))
		o.Edits[0].ExpectCount, o.Edits[0].All = &n, true
	}
	return o, nil
}

// EditSpec is one replacement.
type EditSpec struct {
	Old string `json:"old"`
	New string `json:"new"`
	All bool   `json:"all,omitempty"` // replace every occurrence
	// ExpectCount, when set, implies All and requires exactly this many
	// occurrences: more is ambiguous, fewer text_not_found.
	ExpectCount *int `json:"expect_count,omitempty"`
}

// EditOptions are edit's inputs.
type EditOptions struct {
	Path         string
	Edits        []EditSpec // applied in order, all or nothing; none: nothing is written
	DryRun       bool
	ExpectSHA256 string
	// Sequential matches edit k against the text edits 1..k-1 left,
	// not against the original text.
	Sequential bool
	// LooseIndent falls back, for an edit whose old text is not found
	// exactly, to a line-by-line match that ignores each line's leading
	// and trailing blanks (see looseWindows and reindent).
	LooseIndent bool
	// ReportEdits fills the result's Edits (so does Sequential or
	// LooseIndent): the edits came as a list.
	ReportEdits bool
}

// EditResult describes the change.
type EditResult struct {
	Path         string `json:"path"`
	Replacements int    `json:"replacements"`
	Diff         string `json:"diff" fsbox:"big"`
	SHA256       string `json:"sha256"` // of the new content (the current one with --dry-run... see DryRun)
	DryRun       bool   `json:"dry_run"`
	// Changed: the edit changes a byte of the file (with a dry run,
	// would). An edit whose result is the content it read (old and new
	// the same, an empty list) writes nothing and records nothing in the
	// journal: undo then takes back the change before it.
	Changed  bool    `json:"changed"`
	ChangeID *string `json:"change_id"` // the journal's id of the change; null with --dry-run, without a journal, or when nothing changed
	// Edits says how and where each edit matched, when the edits came as
	// a list or sequential or loose-indent was given (left out
	// otherwise, and for an empty list).
	Edits []EditMatch `json:"edits,omitempty"`

	before, after []byte // the content read, and the content written (or, dry, that would be)
}

// Before is the content the edit read; After the content it wrote (with
// a dry run, would write): for a face that shows the change its own way
// (the reference MCP profile's diff).
func (r *EditResult) Before() string { return string(r.before) }

// After: see Before.
func (r *EditResult) After() string { return string(r.after) }

// diffLabels are a diff's file names for path: a/PATH and b/PATH, as git
// writes them, for a workdir-relative path; an absolute one (a file in a
// write root) as it is, never a//PATH.
func diffLabels(path string) (string, string) {
	if strings.HasPrefix(path, "/") {
		return path, path
	}
	return "a/" + path, "b/" + path
}

// EditMatch is how one edit matched.
type EditMatch struct {
	Index int `json:"index"` // 1-based, in the order the edits were given
	// Match is "exact" (the old text as given, or with CRLF line
	// endings in a CRLF file) or "indent" (the line-by-line fallback of
	// loose-indent).
	Match string `json:"match"`
	// FirstLine and LastLine are the 1-based lines the replaced text
	// spans (from the first replacement's first line to the last one's
	// last line), in the text the edit was matched against: the
	// original, or with sequential the text the edits before it left.
	FirstLine    int `json:"first_line"`
	LastLine     int `json:"last_line"`
	Replacements int `json:"replacements"`
}

// Edit replaces exact text in a file. Old text written with "\n" matches a
// "\r\n" file and the new text gets "\r\n" too. Bytes outside the edits
// never change. Absent old text is text_not_found (with the closest lines),
// several matches without All are ambiguous (with their line numbers).
func Edit(ctx context.Context, sb *sandbox.Sandbox, o EditOptions) (EditResult, error) {
	if err := begin(ctx, sb, "edit"); err != nil {
		return EditResult{}, err
	}
	// No edit (an empty list) is no usage error: the file is checked as
	// for any edit, and nothing is written or journaled.
	for i, e := range o.Edits {
		if e.Old == "" {
			return EditResult{}, usagef(o.Path, "edit %d: the old text is empty", i+1)
		}
		if e.ExpectCount != nil && *e.ExpectCount < 1 {
			return EditResult{}, usagef(o.Path, "edit %d: expect-count wants 1 or more, got %d", i+1, *e.ExpectCount)
		}
	}
	expect := strings.ToLower(o.ExpectSHA256)
	if expect != "" && !isSHA256(expect) {
		return EditResult{}, badSHA256(o.Path, o.ExpectSHA256, "64 hex digits")
	}
	w, err := sb.OpenWriteTarget(o.Path, false)
	if err != nil {
		return EditResult{}, err
	}
	defer w.Close()
	if !w.Exists {
		return EditResult{}, fserr.Errorf(fserr.CodeNotFound, o.Path, "%s does not exist", o.Path)
	}
	// Under [write] require_precondition an edit names the content it
	// changes (a dry run changes nothing). The sha256 is checked against
	// the content read, and the commit below replaces only that very
	// file, unchanged (checked under the lock).
	if expect == "" && !o.DryRun && sb.RequirePrecondition() {
		return EditResult{}, sandbox.PreconditionRequired(o.Path, fmt.Sprintf("the policy requires every change to name the content it replaces: %s was not changed;", o.Path), sandbox.HintExpectSHA256)
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
		return EditResult{}, fserr.AsError(err)
	}
	if int64(len(old)) > max {
		return EditResult{}, &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Path: o.Path,
			Msg: fmt.Sprintf("%s is over %s = %d, so it cannot be rewritten", o.Path, maxName, max)}
	}
	if expect != "" && sha256Hex(old) != expect {
		return EditResult{}, sb.Mismatch(o.Path, sha256Hex(old), expect)
	}
	if len(o.Edits) == 0 {
		return EditResult{Path: w.Path, DryRun: o.DryRun, SHA256: sha256Hex(old), before: old, after: old}, nil
	}
	var (
		set     *editSet
		cur     []byte
		n       int
		matches []EditMatch
	)
	if o.Sequential && len(o.Edits) > 1 {
		cur, n, set, matches, err = applySequential(ctx, old, o.Edits, o.Path, o.LooseIndent, max, maxName)
	} else {
		set, err = resolveIn(old, o.Edits, o.Path, matchCtx{loose: o.LooseIndent, total: len(o.Edits)})
		if err == nil {
			cur, n, matches, err = applyReport(old, set, o.Path, max, maxName, 0, nil)
		}
	}
	if err != nil {
		return EditResult{}, err
	}
	res := EditResult{Path: w.Path, DryRun: o.DryRun, Replacements: n, before: old, after: cur}
	if o.ReportEdits || o.Sequential || o.LooseIndent {
		res.Edits = matches
	}
	from, to := diffLabels(w.Path)
	res.Diff = renderDiff(from, to, old, cur, set)
	res.SHA256 = sha256Hex(cur)
	res.Changed = !bytes.Equal(old, cur)
	if o.DryRun || !res.Changed {
		// Nothing to write: the precondition was checked above, against
		// the content read, which is the content the file keeps.
		return res, nil
	}
	// The deadline is checked before the commit, and not again: a change
	// is never cut halfway (SPEC §5).
	if err := ctx.Err(); err != nil {
		return EditResult{}, err
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

// Text is the unified diff the edit made (or, with a dry run, would
// make).
func (r *EditResult) Text(w spec.TextWriter) error {
	_, err := w.WriteString(r.Diff)
	return err
}

// Outcome: a whole result.
func (r *EditResult) Outcome() spec.Outcome { return spec.Outcome{} }
