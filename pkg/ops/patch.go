package ops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/patch"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
	"github.com/fsbox/fsbox/pkg/textio"
)

var patchOp = &spec.Op{
	Name: "patch", Class: spec.Destructive, Result: PatchResult{},
	Summary: "apply a multi-file patch all or nothing (the *** Begin Patch envelope, or a unified diff)",
	Help: "Applies a patch to files in the workdir as one change: every file lands, or none does. The patch is the envelope agents emit (*** Begin Patch ... *** End Patch, with Add File, Update File with an optional Move to, Delete File, @@ hunks with optional anchor text, *** End of File) or a unified diff as diff -u and git diff write it (several files, new and deleted files, renames, no-newline markers); the format is detected. " +
		"The patch text is capped by max_write_bytes however it arrives (argument, file, stdin, tool argument): over it, too_large. Besides patch, each change needs its command switched on: an update edit, an add write, a delete rm, a rename mv (and edit too when it also changes the content or the mode); a change whose command is off is denied (rule command), and explain patch PATH lists them. " +
		"Every path is checked as write checks it (deny and write_deny on old and new names); every hunk is applied in memory first, matched exactly, else ignoring trailing whitespace, else line endings, never re-indented; a hunk that matches nowhere is text_not_found with the closest lines, one that matches in several places is placed by its line numbers or anchors, else ambiguous. Then all files are swapped in under the workdir's lock, each re-checked to be what was read (conflict otherwise, and nothing changes). Line endings, BOM, final newline and mode are kept. A file whose hunks give back its content is not written, and a patch that changes no byte (and no mode) records nothing in the journal, after every precondition is checked: the result says changed: false.",
	Args: []spec.Arg{{Name: "stdin", Meta: "-", Help: "read the patch from stdin", Optional: true, CLIOnly: true, Complete: spec.CompleteNone}},
	Options: []spec.Option{
		{Name: "patch", Type: spec.String, Meta: "TEXT", Help: "the patch text; on the command line, --patch-file or stdin when left out"},
		{Name: "patch-file", Type: spec.String, Meta: "PATH", Complete: spec.CompleteFiles, Help: "read the patch from PATH (readable under the policy)"},
		{Name: "dry-run", Type: spec.Bool, Help: "check and show every file's diff and sha256 before and after, change nothing"},
		{Name: "strip", Short: "p", Type: spec.Int, Meta: "N", Min: min0, Max: spec.Int64(255), DefaultText: "a/ and b/ when both sides carry them", Help: "strip N leading components from a unified diff's names, as patch -p N (for a diff made outside a git checkout: diff -ru old/ new/ wants 1)"},
		{Name: "expect-sha256", Type: spec.Strings, Meta: "PATH=HEX", Help: "refuse (conflict) unless PATH's current content has this SHA-256; repeatable (under [write] require_precondition, one for every file the patch updates, deletes or moves; an added file must be absent)"},
	},
	Examples: []spec.Example{
		{Cmd: "patch --patch-file fix.patch --dry-run --format text", Says: "the diff of every file the patch would change"},
		{Cmd: "patch --patch-file fix.patch --format text", Says: "one line per file: its action and path"},
	},
	Text: "one line per file: add, update, delete or move, and the path (move: OLD -> NEW); with --dry-run the unified diffs",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		if err := begin(ctx, sb, "patch"); err != nil {
			return nil, err
		}
		o, err := PatchInput(sb, in)
		if err != nil {
			return nil, err
		}
		return Patch(ctx, sb, o)
	},
}

// PatchInput reads patch's input: the text from patch, patch_file or
// standard input (exactly one), and the expected sums. A text read from a
// file or stdin is read no further than max_write_bytes (Patch itself
// refuses a longer one, however it came).
func PatchInput(sb *sandbox.Sandbox, in *spec.Input) (PatchOptions, error) {
	o := PatchOptions{DryRun: in.Bool("dry-run"), Expect: map[string]string{}}
	if in.IsSet("strip") {
		o.Strip = ptr(int(in.Int("strip")))
	}
	for _, e := range in.Strings("expect-sha256") {
		p, sum, ok := strings.Cut(e, "=")
		if !ok || p == "" {
			return o, usageErr("expect-sha256 takes PATH=HEX, got %q", e)
		}
		o.Expect[p] = sum
	}
	sources := 0
	for _, n := range []string{"patch", "patch-file"} {
		if in.IsSet(n) {
			sources++
		}
	}
	if sources > 1 {
		return o, usageErr("give patch or patch-file, not both")
	}
	var f *sandbox.File
	var err error
	switch {
	case in.IsSet("patch"):
		o.Patch = in.String("patch")
		return o, nil
	case in.IsSet("patch-file"):
		f, err = sb.Open(in.String("patch-file"))
	case in.Stdin != nil:
		f, err = sb.OpenStdin()
	default:
		return o, usageErr("patch needs the patch: patch, patch-file, or stdin")
	}
	if err != nil {
		return o, err
	}
	defer f.Close()
	o.Patch, err = readText(sb, f, f.Info.Size, "", "the patch", ": nothing was changed")
	return o, err
}

// PatchOptions are patch's inputs.
type PatchOptions struct {
	Patch  string            // the patch text: the envelope or a unified diff (held, never copied)
	DryRun bool              // plan and report, change nothing
	Expect map[string]string // path → sha256 its current content must have
	// Strip is patch(1)'s -p for a unified diff: the leading components
	// its names lose; nil strips a/ and b/ when both sides carry them.
	Strip *int
}

// PatchResult describes what a patch did (or would do, with DryRun).
type PatchResult struct {
	Files  []PatchFile `json:"files" fsbox:"list"`
	DryRun bool        `json:"dry_run"`
	// Changed: the patch changes a byte (or a mode) of some file (with a
	// dry run, would). A file the patch leaves as it was (its hunks give
	// back its content) is not written; a patch that changes nothing
	// writes and records nothing, and says changed: false.
	Changed  bool    `json:"changed"`
	ChangeID *string `json:"change_id"` // the journal's id of the change; null while no journal records it, or when nothing changed
}

// Outcome: a whole result.
func (r PatchResult) Outcome() spec.Outcome { return spec.Outcome{} }

// PatchFile is one file of a patch.
type PatchFile struct {
	Path         string   `json:"path"`
	Action       string   `json:"action"`            // add, update, delete or move
	MoveTo       string   `json:"move_to,omitempty"` // move: the new name
	Replacements int      `json:"replacements"`      // hunks applied
	Matched      []string `json:"matched"`           // per hunk: exact, trailing_whitespace or eol
	SHA256Before *string  `json:"sha256_before"`     // null for an added file
	SHA256After  *string  `json:"sha256_after"`      // null for a deleted file
	Diff         string   `json:"diff"`
}

// changeID is a journal id as results carry it: null for none.
func changeID(id string) *string {
	if id == "" {
		return nil
	}
	return &id
}

// planWorkers is how many files of a patch are planned at once.
const planWorkers = 4

// planned is one file of the plan: its targets and its new content.
type planned struct {
	out     PatchFile
	src     *sandbox.WriteTarget // update, delete, move: the file as it is
	dst     *sandbox.WriteTarget // add, update in place (== src), move: where the content goes
	content []byte
	expect  *string
	mode    *fs.FileMode // git's new mode, where the patch gives one
	same    bool         // an update in place whose content and mode stay as they are
}

// Patch applies a multi-file patch all or nothing: it refuses a patch
// text over max_write_bytes, parses the whole patch, checks that the
// policy switches on the command each of its changes needs (patchNeeds),
// resolves every path through the sandbox with the access it needs (write
// for updates, adds and the two names of a move; deny and write_deny for
// every name, old and new), applies every hunk in memory, and only then
// commits every file in one sandbox.Batch under the workdir's write lock,
// each file re-checked to be what was read (conflict otherwise, and
// nothing is changed). Line endings, BOM, final newline and mode of each
// file are kept as edit keeps them.
//
// Memory: the parsed patch holds no hunk; each file's hunks are read from
// the text one at a time while they are applied and again while its diff
// is written, so a call holds the text, each file's old and new content,
// its diff, and a few bytes per line and per hunk.
func Patch(ctx context.Context, sb *sandbox.Sandbox, o PatchOptions) (PatchResult, error) {
	if err := begin(ctx, sb, "patch"); err != nil {
		return PatchResult{}, err
	}
	if err := capText(sb, int64(len(o.Patch)), "", "the patch", ": nothing was changed"); err != nil {
		return PatchResult{}, err
	}
	strip := -1
	if o.Strip != nil {
		strip = *o.Strip
	}
	files, err := patch.ParseStrip(o.Patch, strip)
	if err != nil {
		return PatchResult{}, patchErr(err, "")
	}
	for i := range files {
		if err := checkPatchFile(sb.Policy(), &files[i]); err != nil {
			return PatchResult{}, err
		}
	}
	for p, sum := range o.Expect {
		if !isSHA256(strings.ToLower(sum)) {
			return PatchResult{}, badSHA256(p, p+"="+sum, "PATH=HEX, HEX being 64 hex digits")
		}
	}
	max, maxName := holdLimit(sb.Limits().MaxWriteBytes, "max_write_bytes")
	var plan []*planned
	defer func() {
		for _, p := range plan {
			if p.src != nil {
				p.src.Close()
			}
			if p.dst != nil && p.dst != p.src {
				p.dst.Close()
			}
		}
	}()
	used := map[string]string{} // real workdir path → the patch path that claims it
	claim := func(w *sandbox.WriteTarget, given string) error {
		if other, ok := used[w.Rel()]; ok {
			return usagef(given, "%s and %s name the same file: a patch changes each file once", other, given)
		}
		used[w.Rel()] = given
		return nil
	}
	need := !o.DryRun && sb.RequirePrecondition() // every file changed names its content
	// Files are planned in parallel (each resolves its paths, reads its
	// file and applies its hunks); the first error in patch order wins.
	plans := make([]*planned, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	work := make(chan int)
	for range min(planWorkers, len(files)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := ctx.Err(); err != nil {
					errs[i] = err
					continue
				}
				plans[i], errs[i] = planFile(ctx, sb, &files[i], max, maxName, o.Expect, need)
			}
		}()
	}
	for i := range files {
		work <- i
	}
	close(work)
	wg.Wait()
	for i := range files {
		if plans[i] != nil {
			plan = append(plan, plans[i])
		}
	}
	for i, p := range plans {
		if errs[i] != nil {
			if fserr.AsError(errs[i]).Code == fserr.CodePreconditionRequired {
				// A path the policy denies is denied, whatever else the
				// patch lacks.
				for _, e := range errs[i+1:] {
					if e != nil && fserr.AsError(e).Code == fserr.CodeDenied {
						return PatchResult{}, e
					}
				}
			}
			return PatchResult{}, errs[i]
		}
		targets := []*sandbox.WriteTarget{p.src}
		if p.dst != p.src {
			targets = append(targets, p.dst)
		}
		for _, w := range targets {
			if w != nil {
				if err := claim(w, w.Path); err != nil {
					return PatchResult{}, err
				}
			}
		}
	}
	res := PatchResult{Files: []PatchFile{}, DryRun: o.DryRun}
	for _, p := range plan {
		res.Files = append(res.Files, p.out)
		res.Changed = res.Changed || !p.same
	}
	if o.DryRun || !res.Changed {
		// Nothing to write: every precondition was checked above,
		// against the content read, which is what each file keeps.
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		return PatchResult{}, err
	}
	b := sb.NewBatch()
	defer b.Abort()
	for _, p := range plan {
		var err error
		switch p.out.Action {
		case "add":
			err = b.Put(p.dst, p.content, max, sandbox.CommitOptions{NoReplace: true, Mode: modeAt(p.dst, p.mode)})
		case "update":
			if p.same {
				continue
			}
			err = b.Put(p.dst, p.content, max, sandbox.CommitOptions{Unchanged: true, Expect: p.expect, Mode: modeAt(p.dst, p.mode)})
		case "move":
			mode := p.mode
			if mode == nil {
				mode = modeOf(p.src)
			}
			if err = b.Put(p.dst, p.content, max, sandbox.CommitOptions{NoReplace: true, Mode: modeAt(p.dst, mode)}); err == nil {
				err = b.Delete(p.src, sandbox.CommitOptions{Unchanged: true, Expect: p.expect})
			}
		case "delete":
			err = b.Delete(p.src, sandbox.CommitOptions{Unchanged: true, Expect: p.expect})
		}
		if err != nil {
			return PatchResult{}, err
		}
	}
	if _, err := b.Commit(); err != nil {
		return PatchResult{}, err
	}
	res.ChangeID = changeID(b.ChangeID)
	return res, nil
}

// Patch actions: the kinds of change a patch makes, as explain names them.
const (
	patchUpdate        = "update"
	patchAdd           = "add"
	patchDelete        = "delete"
	patchMove          = "move"            // a rename alone
	patchMoveAndUpdate = "move_and_update" // a rename that also changes the content (hunks) or the mode
)

// patchActions are the actions with the commands each needs besides patch
// (a change a command the policy switches off could not make is refused):
// an update is an edit, an add a write, a delete an rm, a rename an mv,
// and a rename with hunks (or a new mode) an mv and an edit.
var patchActions = []struct {
	action string
	needs  []string
}{
	{patchUpdate, []string{"edit"}},
	{patchAdd, []string{"write"}},
	{patchDelete, []string{"rm"}},
	{patchMove, []string{"mv"}},
	{patchMoveAndUpdate, []string{"mv", "edit"}},
}

// patchAction is the action of one file of a patch.
func patchAction(f *patch.File) string {
	switch {
	case f.Op == patch.Add:
		return patchAdd
	case f.Op == patch.Delete:
		return patchDelete
	case f.MoveTo == "":
		return patchUpdate
	case f.NumHunks() > 0 || f.HasModeChange():
		return patchMoveAndUpdate
	}
	return patchMove
}

// patchNeeds are the commands an action needs besides patch.
func patchNeeds(action string) []string {
	for _, a := range patchActions {
		if a.action == action {
			return a.needs
		}
	}
	return nil
}

// checkPatchFile refuses (denied, rule command) a file of a patch whose
// change needs a command the policy switches off.
func checkPatchFile(p *policy.Policy, f *patch.File) error {
	action := patchAction(f)
	for _, c := range patchNeeds(action) {
		if CheckCommand(p, c) == nil {
			continue
		}
		var what string
		switch action {
		case patchUpdate:
			what = "changes " + f.Path
		case patchAdd:
			what = "adds " + f.Path
		case patchDelete:
			what = "deletes " + f.Path
		case patchMove:
			what = "moves " + f.Path + " to " + f.MoveTo
		default:
			what = "moves " + f.Path + " to " + f.MoveTo + " and changes it"
		}
		return &fserr.Error{Code: fserr.CodeDenied, Rule: fserr.RuleCommand, Path: f.Path,
			Msg: fmt.Sprintf("the patch %s, and the command %q is switched off by the policy", what, c)}
	}
	return nil
}

// PatchAction is one kind of change a patch makes, as explain patch
// reports it: the commands it needs besides patch, those of them the
// policy switches off, and whether a patch could make it to the path
// (patch allowed there, and every command it needs on).
type PatchAction struct {
	Action  string   `json:"action"` // update, add, delete, move, move_and_update
	Needs   []string `json:"needs"`
	Off     []string `json:"off"`
	Allowed bool     `json:"allowed"`
}

// explainPatch adds to explain's decision on patch which of a patch's
// actions the policy allows, and names those it does not in the reason.
func explainPatch(d *Decision, reg *spec.Registry, p *policy.Policy) {
	var on, off []string
	for _, a := range patchActions {
		pa := PatchAction{Action: a.action, Needs: a.needs, Off: []string{}}
		for _, c := range a.needs {
			if CheckCommandIn(reg, p, c) != nil {
				pa.Off = append(pa.Off, c)
			}
		}
		pa.Allowed = d.Allowed && len(pa.Off) == 0
		d.Actions = append(d.Actions, pa)
		if len(pa.Off) == 0 {
			on = append(on, fmt.Sprintf("%s (%s)", a.action, strings.Join(a.needs, ", ")))
		} else {
			off = append(off, fmt.Sprintf("%s (%s off)", a.action, strings.Join(pa.Off, ", ")))
		}
	}
	if !d.Allowed {
		return
	}
	if len(off) == 0 {
		d.Reason += "; every action is allowed: " + strings.Join(on, ", ")
		return
	}
	if len(on) > 0 {
		d.Reason += "; allowed: " + strings.Join(on, ", ")
	}
	d.Reason += "; refused: " + strings.Join(off, ", ")
}

// planFile resolves one file of the patch and computes its new content.
func planFile(ctx context.Context, sb *sandbox.Sandbox, f *patch.File, max int64, maxName string, expect map[string]string, need bool) (*planned, error) {
	p := &planned{out: PatchFile{Path: f.Path, Matched: []string{}}}
	if sum, ok := expect[f.Path]; ok {
		s := strings.ToLower(sum)
		p.expect = &s
	}
	switch f.Op {
	case patch.Add:
		p.out.Action = "add"
		dst, err := sb.OpenWriteTarget(f.Path, true)
		if err != nil {
			return nil, err
		}
		p.dst = dst
		if dst.Exists {
			return p, fserr.Errorf(fserr.CodeExists, f.Path, "%s exists: the patch adds it (line %d)", f.Path, f.Line)
		}
		if int64(len(f.Content)) > max {
			return p, tooLargeNew(f.Path, maxName, max)
		}
		p.content = f.Content
		p.mode = gitMode(f.NewMode)
		p.out.Path = dst.Path
		after := sha256Hex(f.Content)
		p.out.SHA256After = &after
		p.out.Diff = addDiff(dst.Path, f.Content)
		return p, nil
	case patch.Delete:
		p.out.Action = "delete"
	}
	src, err := sb.OpenWriteTarget(f.Path, false)
	if err != nil {
		return nil, err
	}
	p.src = src
	p.out.Path = src.Path
	if !src.Exists {
		return p, fserr.Errorf(fserr.CodeNotFound, f.Path, "%s does not exist (patch line %d)", f.Path, f.Line)
	}
	if need && p.expect == nil {
		return p, sandbox.PreconditionRequired(f.Path, fmt.Sprintf("the policy requires every change to name the content it replaces, and the patch changes %s (line %d): nothing was changed;", f.Path, f.Line), hintPatchExpect)
	}
	old, err := readTarget(ctx, src, max, maxName)
	if err != nil {
		return p, err
	}
	before := sha256Hex(old)
	p.out.SHA256Before = &before
	if p.expect != nil && before != *p.expect {
		return p, sb.Mismatch(f.Path, before, *p.expect)
	}
	if f.Op == patch.Delete {
		p.out.Diff = deleteDiff(src.Path, old)
		return p, nil
	}
	p.out.Action = "update"
	p.dst = src
	r, err := f.Apply(old)
	if err != nil {
		return p, patchErr(err, src.Path)
	}
	if int64(len(r.Content)) > max {
		return p, tooLargeNew(f.Path, maxName, max)
	}
	p.content = r.Content
	if f.HasModeChange() {
		p.mode = gitMode(f.NewMode)
	}
	p.out.Replacements = r.Replacements
	p.out.Matched = r.Matched
	p.same = f.MoveTo == "" && p.mode == nil && bytes.Equal(old, r.Content)
	after := sha256Hex(r.Content)
	p.out.SHA256After = &after
	to := src.Path
	if f.MoveTo != "" {
		p.out.Action = "move"
		dst, err := sb.OpenWriteTarget(f.MoveTo, true)
		if err != nil {
			return p, err
		}
		p.dst = dst
		if dst.Exists {
			return p, fserr.Errorf(fserr.CodeExists, f.MoveTo, "%s exists: the patch moves %s there (line %d)", f.MoveTo, f.Path, f.Line)
		}
		p.out.MoveTo = dst.Path
		to = dst.Path
	}
	if p.out.Diff, err = fileDiff(src.Path, to, f, r); err != nil {
		return p, err
	}
	return p, nil
}

// hintPatchExpect names patch's precondition: PATH=SHA256 of a file it
// updates, deletes or moves.
var hintPatchExpect = fserr.Hint{Option: "expect-sha256", Text: "pass %s PATH=SHA256 with its current sha256 (read or stat --sha256 gives it)", Else: "read the file first"}

// readTarget reads a target's current file, up to max.
func readTarget(ctx context.Context, w *sandbox.WriteTarget, max int64, maxName string) ([]byte, error) {
	f, err := w.Current()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readUpTo(textio.WithContext(ctx, f), f.Info.Size, satAdd(max, 1))
	if err != nil {
		return nil, fserr.AsError(err)
	}
	if int64(len(b)) > max {
		return nil, &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Path: w.Path,
			Msg: fmt.Sprintf("%s is over %s = %d, so it cannot be rewritten", w.Path, maxName, max)}
	}
	return b, nil
}

func modeOf(w *sandbox.WriteTarget) *fs.FileMode {
	m := w.Info.Mode.Perm()
	return &m
}

// modeAt is the mode a patch gives w: none where its root keeps none (an
// object root: a git mode or a moved file's mode is not applied there).
func modeAt(w *sandbox.WriteTarget, m *fs.FileMode) *fs.FileMode {
	if !w.HasModes() {
		return nil
	}
	return m
}

// gitMode is the permission bits of git's "100755" or "100644" (nil for
// anything else: symlinks and submodules are not files to write).
func gitMode(m string) *fs.FileMode {
	var mode fs.FileMode
	switch m {
	case "100755":
		mode = 0o755
	case "100644":
		mode = 0o644
	default:
		return nil
	}
	return &mode
}

func tooLargeNew(p, maxName string, max int64) error {
	return &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Path: p,
		Msg: fmt.Sprintf("the patched %s would be over %s = %d: nothing was changed", p, maxName, max)}
}

// patchErr maps pkg/patch's errors onto fsbox's codes: a malformed patch
// is usage, a hunk that matches nowhere text_not_found (with the closest
// lines), one that matches in several places ambiguous (with each).
func patchErr(err error, path string) error {
	var pe *patch.ParseError
	var nf *patch.NotFoundError
	var am *patch.AmbiguousError
	var le *patch.LimitError
	switch {
	case errors.As(err, &pe):
		return fserr.Errorf(fserr.CodeUsage, path, "%s", pe.Error())
	case errors.As(err, &nf):
		msg := path + ": " + nf.Msg
		if nf.Closest != "" {
			msg += "; the closest lines in the file:\n" + nf.Closest
		}
		return fserr.Errorf(fserr.CodeTextNotFound, path, "%s", msg)
	case errors.As(err, &am):
		lines := make([]string, len(am.Lines))
		for i, l := range am.Lines {
			lines[i] = fmt.Sprint(l)
		}
		return fserr.Errorf(fserr.CodeAmbiguous, path, "%s: hunk %d matches at lines %s: add context (or, in a unified diff, line numbers) to place it", path, am.Hunk+1, strings.Join(lines, ", "))
	case errors.As(err, &le):
		return &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Path: path, Msg: path + ": " + le.Msg}
	}
	return err
}

// fileDiff is the unified diff of one updated file: each applied hunk with
// its changed lines (context kept as the hunk had it). It is written twice:
// once to measure it, then into a buffer of that size, so the diff of a
// patch of many hunks is built without regrowing (or copying) it.
func fileDiff(from, to string, f *patch.File, r *patch.Result) (string, error) {
	var d diffOut
	write := func() error {
		d.str("--- a/")
		d.str(from)
		d.str("\n+++ b/")
		d.str(to)
		d.str("\n")
		return f.Placements(r, func(h *patch.Placed) error {
			d.header(h.OldLine, len(h.Old), h.NewLine, len(h.New))
			d.hunkLines(h.Old, h.New)
			return nil
		})
	}
	if err := write(); err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(d.n)
	d.b = &b
	if err := write(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// diffOut is where a diff is written: with b nil it only counts the bytes
// (n), and bounds those of hunks too large to pair up cheaply.
type diffOut struct {
	n   int
	b   *strings.Builder
	lcs []int32 // scratch of hunkLines, kept while small
}

func (d *diffOut) str(s string) {
	if d.b == nil {
		d.n += len(s)
		return
	}
	d.b.WriteString(s)
}

// line writes one line of a hunk's body: its sign, its text, a newline.
func (d *diffOut) line(sign byte, s string) {
	if d.b == nil {
		d.n += len(s) + 2
		return
	}
	d.b.WriteByte(sign)
	d.b.WriteString(s)
	d.b.WriteByte('\n')
}

// header writes "@@ -l,s +l,s @@".
func (d *diffOut) header(oldStart, oldN, newStart, newN int) {
	var buf [64]byte
	h := append(buf[:0], "@@ -"...)
	h = appendRange(h, oldStart, oldN)
	h = append(h, " +"...)
	h = appendRange(h, newStart, newN)
	h = append(h, " @@\n"...)
	if d.b == nil {
		d.n += len(h)
		return
	}
	d.b.Write(h)
}

// appendRange appends a unified range: "l,s", "l" for one line, and for
// none the line before with ",0".
func appendRange(b []byte, start, n int) []byte {
	switch n {
	case 0:
		return append(strconv.AppendInt(b, int64(start-1), 10), ",0"...)
	case 1:
		return strconv.AppendInt(b, int64(start), 10)
	}
	b = append(strconv.AppendInt(b, int64(start), 10), ',')
	return strconv.AppendInt(b, int64(n), 10)
}

// hunkLines writes a hunk's old and new lines as a diff body: the longest
// common subsequence as context, the rest as - and + lines (the sides are
// bounded by the hunk's size; past maxLCS lines, all - then +). Measuring,
// it pairs up only hunks with small sides and bounds the others as if
// nothing were context.
func (d *diffOut) hunkLines(old, new []string) {
	const maxLCS = 2000
	n, m := len(old), len(new)
	if n > maxLCS || m > maxLCS || d.b == nil && n*m > 1<<16 {
		for _, l := range old {
			d.line('-', l)
		}
		for _, l := range new {
			d.line('+', l)
		}
		return
	}
	w := m + 1
	size := (n + 1) * w
	lcs := d.lcs
	if cap(lcs) < size {
		lcs = make([]int32, size)
		if size <= 1<<16 {
			d.lcs = lcs
		}
	} else {
		lcs = lcs[:size]
		clear(lcs)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if old[i] == new[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && old[i] == new[j]:
			d.line(' ', old[i])
			i++
			j++
		case i < n && (j == m || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
			d.line('-', old[i])
			i++
		default:
			d.line('+', new[j])
			j++
		}
	}
}

// addDiff and deleteDiff are the diffs of a whole file added or deleted.
func addDiff(p string, content []byte) string { return wholeFileDiff(p, content, '+') }

func deleteDiff(p string, content []byte) string { return wholeFileDiff(p, content, '-') }

// wholeFileDiff is the diff of content added or deleted whole: each line
// (its "\n" or "\r\n" dropped, a last line without one is a line) with
// sign before it.
func wholeFileDiff(p string, content []byte, sign byte) string {
	n := 0
	if len(content) > 0 {
		n = bytes.Count(content, []byte{'\n'})
		if content[len(content)-1] != '\n' {
			n++
		}
	}
	var b strings.Builder
	b.Grow(len(p) + 64 + len(content) + n + 1)
	var buf [32]byte
	if sign == '+' {
		b.WriteString("--- /dev/null\n+++ b/")
		b.WriteString(p)
		b.WriteString("\n@@ -0,0 +")
		b.Write(appendRange(buf[:0], 1, n))
		b.WriteString(" @@\n")
	} else {
		b.WriteString("--- a/")
		b.WriteString(p)
		b.WriteString("\n+++ /dev/null\n@@ -")
		b.Write(appendRange(buf[:0], 1, n))
		b.WriteString(" +0,0 @@\n")
	}
	for rest := content; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		b.WriteByte(sign)
		b.Write(bytes.TrimSuffix(line, []byte{'\r'}))
		b.WriteByte('\n')
	}
	return b.String()
}

// Text is one line per file, and a line per file: its action and path
// (a move as OLD -> NEW); with a dry run the unified diffs.
func (r PatchResult) Text(w spec.TextWriter) error {
	for _, f := range r.Files {
		var err error
		switch {
		case r.DryRun:
			_, err = w.WriteString(f.Diff)
		case f.Action == "move":
			_, err = fmt.Fprintf(w, "move %s -> %s\n", w.Name(f.Path), w.Name(f.MoveTo))
		default:
			_, err = fmt.Fprintf(w, "%s %s\n", f.Action, w.Name(f.Path))
		}
		if err != nil {
			return err
		}
	}
	return nil
}
