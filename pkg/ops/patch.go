package ops

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/fsbox/fsbox/pkg/patch"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/textio"
)

// PatchOptions are patch's inputs.
type PatchOptions struct {
	Patch  []byte            // the patch text: the envelope or a unified diff
	DryRun bool              // plan and report, change nothing
	Expect map[string]string // path → sha256 its current content must have
}

// PatchResult describes what a patch did (or would do, with DryRun).
type PatchResult struct {
	Files    []PatchFile `json:"files"`
	DryRun   bool        `json:"dry_run"`
	ChangeID *string     `json:"change_id"` // the journal's id of the change; null while no journal records it
}

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
}

// Patch applies a multi-file patch all or nothing: it parses the whole
// patch, resolves every path through the sandbox with the access it needs
// (write for updates, adds and the two names of a move; the rm switch too
// for deletes; deny and write_deny for every name, old and new), applies
// every hunk in memory, and only then commits every file in one
// sandbox.Batch under the workdir's write lock, each file re-checked to be
// what was read (conflict otherwise, and nothing is changed). Line
// endings, BOM, final newline and mode of each file are kept as edit keeps
// them.
func Patch(ctx context.Context, sb *sandbox.Sandbox, o PatchOptions) (PatchResult, error) {
	if err := begin(ctx, sb, "patch"); err != nil {
		return PatchResult{}, err
	}
	files, err := patch.Parse(o.Patch)
	if err != nil {
		return PatchResult{}, patchErr(err, "")
	}
	for p, sum := range o.Expect {
		if !isSHA256(strings.ToLower(sum)) {
			return PatchResult{}, usagef(p, "expect-sha256 %s wants 64 hex digits, got %q", p, sum)
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
				plans[i], errs[i] = planFile(ctx, sb, files[i], max, maxName, o.Expect)
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
	}
	if o.DryRun {
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
			err = b.Put(p.dst, p.content, max, sandbox.CommitOptions{NoReplace: true, Mode: p.mode})
		case "update":
			err = b.Put(p.dst, p.content, max, sandbox.CommitOptions{Unchanged: true, Expect: p.expect, Mode: p.mode})
		case "move":
			mode := p.mode
			if mode == nil {
				mode = modeOf(p.src)
			}
			if err = b.Put(p.dst, p.content, max, sandbox.CommitOptions{NoReplace: true, Mode: mode}); err == nil {
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

// planFile resolves one file of the patch and computes its new content.
func planFile(ctx context.Context, sb *sandbox.Sandbox, f patch.File, max int64, maxName string, expect map[string]string) (*planned, error) {
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
			return p, sandbox.Errorf(sandbox.CodeExists, f.Path, "%s exists: the patch adds it (line %d)", f.Path, f.Line)
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
		if err := CheckCommand(sb.Policy(), "rm"); err != nil {
			return nil, &sandbox.Error{Code: sandbox.CodeDenied, Rule: sandbox.RuleCommand, Path: f.Path,
				Msg: fmt.Sprintf("the patch deletes %s, and the command \"rm\" is switched off by the policy", f.Path)}
		}
	}
	src, err := sb.OpenWriteTarget(f.Path, false)
	if err != nil {
		return nil, err
	}
	p.src = src
	p.out.Path = src.Path
	if !src.Exists {
		return p, sandbox.Errorf(sandbox.CodeNotFound, f.Path, "%s does not exist (patch line %d)", f.Path, f.Line)
	}
	old, err := readTarget(ctx, src, max, maxName)
	if err != nil {
		return p, err
	}
	before := sha256Hex(old)
	p.out.SHA256Before = &before
	if p.expect != nil && before != *p.expect {
		return p, sandbox.Errorf(sandbox.CodeConflict, f.Path, "%s changed: its sha256 is %s, not %s", f.Path, before, *p.expect)
	}
	if f.Op == patch.Delete {
		p.out.Diff = deleteDiff(src.Path, old)
		return p, nil
	}
	p.out.Action = "update"
	p.dst = src
	r, err := patch.Apply(old, f.Hunks)
	if err != nil {
		return p, patchErr(err, src.Path)
	}
	if int64(len(r.Content)) > max {
		return p, tooLargeNew(f.Path, maxName, max)
	}
	p.content = r.Content
	if f.NewMode != "" && f.NewMode != f.OldMode {
		p.mode = gitMode(f.NewMode)
	}
	p.out.Replacements = r.Replacements
	p.out.Matched = append(p.out.Matched, r.Matched...)
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
			return p, sandbox.Errorf(sandbox.CodeExists, f.MoveTo, "%s exists: the patch moves %s there (line %d)", f.MoveTo, f.Path, f.Line)
		}
		p.out.MoveTo = dst.Path
		to = dst.Path
	}
	p.out.Diff = fileDiff(src.Path, to, old, r)
	return p, nil
}

// readTarget reads a target's current file, up to max.
func readTarget(ctx context.Context, w *sandbox.WriteTarget, max int64, maxName string) ([]byte, error) {
	f, err := w.Current()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readUpTo(textio.WithContext(ctx, f), f.Info.Size, satAdd(max, 1))
	if err != nil {
		return nil, sandbox.AsError(err)
	}
	if int64(len(b)) > max {
		return nil, &sandbox.Error{Code: sandbox.CodeTooLarge, Rule: sandbox.RuleSizeCap, Path: w.Path,
			Msg: fmt.Sprintf("%s is over %s = %d, so it cannot be rewritten", w.Path, maxName, max)}
	}
	return b, nil
}

func modeOf(w *sandbox.WriteTarget) *fs.FileMode {
	m := w.Info.Mode.Perm()
	return &m
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
	return &sandbox.Error{Code: sandbox.CodeTooLarge, Rule: sandbox.RuleSizeCap, Path: p,
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
		return sandbox.Errorf(sandbox.CodeUsage, path, "%s", pe.Error())
	case errors.As(err, &nf):
		msg := path + ": " + nf.Msg
		if nf.Closest != "" {
			msg += "; the closest lines in the file:\n" + nf.Closest
		}
		return sandbox.Errorf(sandbox.CodeTextNotFound, path, "%s", msg)
	case errors.As(err, &am):
		lines := make([]string, len(am.Lines))
		for i, l := range am.Lines {
			lines[i] = fmt.Sprint(l)
		}
		return sandbox.Errorf(sandbox.CodeAmbiguous, path, "%s: hunk %d matches at lines %s: add context (or, in a unified diff, line numbers) to place it", path, am.Hunk+1, strings.Join(lines, ", "))
	case errors.As(err, &le):
		return &sandbox.Error{Code: sandbox.CodeTooLarge, Rule: sandbox.RuleSizeCap, Path: path, Msg: path + ": " + le.Msg}
	}
	return err
}

// fileDiff is the unified diff of one updated file: each applied hunk with
// its changed lines (context kept as the hunk had it).
func fileDiff(from, to string, old []byte, r *patch.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n", from, to)
	for _, h := range r.Hunks {
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", diffRange(h.OldLine, len(h.Old)), diffRange(h.NewLine, len(h.New)))
		writeHunkLines(&b, h.Old, h.New)
	}
	return b.String()
}

func diffRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start-1)
	}
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// writeHunkLines writes a hunk's old and new lines as a diff body: the
// longest common subsequence as context, the rest as - and + lines (the
// sides are bounded by the hunk's size; past maxLCS lines, all - then +).
func writeHunkLines(b *strings.Builder, old, new []string) {
	const maxLCS = 2000
	if len(old) > maxLCS || len(new) > maxLCS {
		for _, l := range old {
			b.WriteString("-" + l + "\n")
		}
		for _, l := range new {
			b.WriteString("+" + l + "\n")
		}
		return
	}
	n, m := len(old), len(new)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if old[i] == new[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && old[i] == new[j]:
			b.WriteString(" " + old[i] + "\n")
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			b.WriteString("-" + old[i] + "\n")
			i++
		default:
			b.WriteString("+" + new[j] + "\n")
			j++
		}
	}
}

// addDiff and deleteDiff are the diffs of a whole file added or deleted.
func addDiff(p string, content []byte) string { return wholeFileDiff(p, content, '+') }

func deleteDiff(p string, content []byte) string { return wholeFileDiff(p, content, '-') }

func wholeFileDiff(p string, content []byte, sign byte) string {
	lines := splitLines(content)
	var b strings.Builder
	if sign == '+' {
		fmt.Fprintf(&b, "--- /dev/null\n+++ b/%s\n@@ -0,0 +%s @@\n", p, diffRange(1, len(lines)))
	} else {
		fmt.Fprintf(&b, "--- a/%s\n+++ /dev/null\n@@ -%s +0,0 @@\n", p, diffRange(1, len(lines)))
	}
	for _, l := range lines {
		b.WriteByte(sign)
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// splitLines splits content into lines without their endings.
func splitLines(content []byte) []string {
	s := strings.TrimSuffix(string(content), "\n")
	if s == "" && len(content) == 0 {
		return nil
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}
