package ops

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

var historyOp = &spec.Op{
	Name: "history", Class: spec.Read, Result: HistoryResult{}, Journal: true, Pages: true,
	Summary:  "list the workdir's recorded changes, newest first",
	Help:     "Lists the changes the journal recorded in the writable roots, newest first: change_id, time, command, kept, and each path's sha256, size and mode before and after (null: absent). Only what the policy in force may read is shown: hidden counts the paths left out, a change with every path hidden is left out, bytes are recomputed from what is shown, and a move with one hidden end shows as an add or a delete. With PATH, only the changes touching it (or, for a directory, anything below it); a path the policy denies is denied. The journal keeps prior contents until max_bytes evicts the oldest changes, whole; the purge command (off unless the policy turns it on) forgets them now.",
	Args:     []spec.Arg{{Name: "path", Meta: "PATH", Help: "only changes touching this file or directory", Optional: true, Complete: spec.CompleteFiles}},
	Options:  []spec.Option{{Name: "limit", Short: "n", Type: spec.Int, Meta: "N", Min: min1, DefaultText: "all", Help: "only the newest N changes shown (read from the journal's end)"}},
	Examples: []spec.Example{{Cmd: "history --format text", Says: "one line per change: id, time, command and paths", After: "write notes.txt --content 'new notes'"}},
	Text:     "one line per change: its id, time, command and paths, tab-separated",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		if in.IsSet("path") && in.String("path") == "" {
			return nil, usageErr("an empty path: leave it out to list every change")
		}
		pg, err := pagingOf(sb, in)
		if err != nil {
			return nil, err
		}
		return HistoryPage(ctx, sb, in.String("path"), int(in.Int("limit")), pg)
	},
}

var purgeOp = &spec.Op{
	Name: "purge", Class: spec.Destructive, Result: PurgeResult{}, Journal: true, Off: true,
	Summary:  "forget the journal's recorded changes and the content kept for them",
	Help:     "Forgets every recorded change whose paths the policy in force may all write, and the prior content kept only for them: deleted and overwritten content kept for undo is gone after it. A change naming a path the policy may not write stays (kept counts them). Not undoable; change ids go on rising. The built-in policy switches purge off.",
	Examples: []spec.Example{{Cmd: "purge --format text", Says: "how many changes were forgotten and how many stayed", After: "write notes.txt --content 'new notes'"}},
	Text:     "two lines, removed and kept, each with its count after a tab",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		return Purge(ctx, sb)
	},
}

var undoOp = &spec.Op{
	Name: "undo", Class: spec.Destructive, Result: UndoResult{}, Needs: []string{"write"},
	Summary:  "take a recorded change back (default: the newest not yet undone), all or nothing",
	Help:     "Restores every path of a change to what it held before, as one all-or-nothing commit, if each still holds what the change left there; otherwise conflict, naming the paths that moved on (force restores anyway). A file the change created is deleted only while it holds what the change wrote, so undo never deletes anything else, even with rm off. It obeys the policy in force now: a change naming a path the policy may not write now is denied as a whole (explain undo CHANGE_ID says so first), as is one recorded without its prior contents (kept false). Without CHANGE_ID it takes back the newest change not yet undone that the policy may see, so repeated undo walks back; an undo is itself a change: undo it by its id to redo.",
	Args:     []spec.Arg{{Name: "change_id", Meta: "CHANGE_ID", Help: "the change to take back, as history shows it (default: the newest not yet undone)", Optional: true, Complete: spec.CompleteNone}},
	Options:  []spec.Option{{Name: "force", Short: "f", Type: spec.Bool, Help: "restore even paths that changed since"}},
	Examples: []spec.Example{{Cmd: "undo --format text", Says: "the paths restored or deleted, one a line", After: "edit main.go --old 'TODO: flags' --new 'DONE: flags'"}},
	Text:     "one line per path: restore or delete, and the path",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		return Undo(ctx, sb, in.String("change_id"), in.Bool("force"))
	},
}

// HistoryResult lists recorded changes, newest first.
type HistoryResult struct {
	Changes   []sandbox.Change `json:"changes"`
	Count     int              `json:"count"`
	Truncated bool             `json:"truncated"` // more than max_results changes matched, max_result_bytes was reached, or the deadline passed
	// Limit names what cut the list: max_results, max_result_bytes, or
	// timeout (the call's deadline passed before the journal was read to
	// the end).
	Limit string `json:"limit,omitempty"`
	// NextCursor resumes the list after its last change (SPEC §2); a
	// --limit cut carries it too, though it cuts quietly.
	NextCursor string `json:"next_cursor,omitempty"`
	// Cuts is ["timeout"] when the deadline cut the list (Truncation's).
	Cuts []string `json:"cuts,omitempty"`
	// Hidden counts the (change, path) pairs the policy in force may not
	// read: they are left out, and a change with every path hidden too.
	Hidden int `json:"hidden"`
}

// Outcome: whether max_results or the deadline cut the list (--limit
// cuts quietly).
func (r HistoryResult) Outcome() spec.Outcome {
	t := Truncation{Truncated: r.Truncated, Limit: r.Limit, NextCursor: r.NextCursor, Cuts: r.Cuts}
	return spec.Outcome{Cut: t.outcomeCut()}
}

// Outcome: whole results.
func (r PurgeResult) Outcome() spec.Outcome { return spec.Outcome{} }
func (r UndoResult) Outcome() spec.Outcome  { return spec.Outcome{} }

// historyPos is a position in history's list, newest first: for each
// journal (by its id prefix, "" for the workdir's), the sequence number
// of the oldest change of it given so far. The journals are merged
// newest first, and each is read newest first, so the changes given are,
// in each journal, those from its newest down to that number: the
// changes after the position are those below it (all of a journal none
// of whose changes was given). Ids are compared, never looked up: a
// change that is gone since (purged, evicted) moves nothing.
type historyPos map[string]int64

// splitChangeID is a change id as history shows it: its journal's
// prefix ("8f3a2b1c:", or "" for the workdir's) and its number (0 when
// it is not one).
func splitChangeID(id string) (string, int64) {
	tag, num := "", id
	if i := strings.LastIndexByte(id, ':'); i >= 0 {
		tag, num = id[:i+1], id[i+1:]
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 {
		return tag, 0
	}
	return tag, n
}

// historyPosOf is the position a cursor names: the workdir journal's
// number in N, the other journals' ids (prefix and number) in Key,
// separated by commas.
func historyPosOf(c *Cursor) (historyPos, error) {
	pos := historyPos{}
	if c == nil {
		return pos, nil
	}
	if c.N > 0 {
		pos[""] = c.N
	}
	if c.Key != "" {
		for _, id := range strings.Split(c.Key, ",") {
			tag, n := splitChangeID(id)
			if tag == "" || n == 0 {
				return nil, errCursor("does not decode")
			}
			pos[tag] = n
		}
	}
	return pos, nil
}

// after reports whether the change with this id comes after the position.
func (pos historyPos) after(id string) bool {
	tag, n := splitChangeID(id)
	b, given := pos[tag]
	return !given || n < b
}

// give moves the position past the change with this id.
func (pos historyPos) give(id string) {
	if tag, n := splitChangeID(id); n > 0 {
		pos[tag] = n
	}
}

// cursor is the position as a Cursor.
func (pos historyPos) cursor() Cursor {
	var c Cursor
	var ids []string
	for tag, n := range pos {
		if tag == "" {
			c.N = n
			continue
		}
		ids = append(ids, tag+strconv.FormatInt(n, 10))
	}
	sort.Strings(ids)
	c.Key = strings.Join(ids, ",")
	return c
}

// visibleChange is c as the policy in force may see it: only the paths it may
// read (the rest counted in hidden), a move with one hidden end shown as
// an add or a delete of the other (its type unknown), and the bytes
// recomputed from what is shown. ok is false when nothing is left.
func visibleChange(sb *sandbox.Sandbox, c sandbox.Change, hidden *int) (sandbox.Change, bool) {
	if c.Omitted > 0 {
		return c, true // recorded without names: nothing to hide but the count
	}
	out := c
	out.Paths, out.Moved, out.Bytes = nil, nil, 0
	for _, pc := range c.Paths {
		isDir := pc.Before != nil && pc.Before.Type == "dir" || pc.After != nil && pc.After.Type == "dir"
		if !sb.MayRead(pc.Path, isDir) {
			*hidden++
			continue
		}
		out.Paths = append(out.Paths, pc)
		if pc.Before != nil && pc.Before.Type == "file" && c.Bytes > 0 {
			out.Bytes += pc.Before.Size
		}
	}
	for _, m := range c.Moved {
		from, to := sb.MayRead(m.From, false), sb.MayRead(m.To, false)
		switch {
		case from && to:
			out.Moved = append(out.Moved, m)
		case from:
			*hidden++
			out.Paths = append(out.Paths, sandbox.PathChange{Path: m.From, Before: &sandbox.FileState{}})
		case to:
			*hidden++
			out.Paths = append(out.Paths, sandbox.PathChange{Path: m.To, After: &sandbox.FileState{}})
		default:
			*hidden += 2
		}
	}
	if len(out.Paths) == 0 && len(out.Moved) == 0 {
		return out, false
	}
	if len(out.Paths) == len(c.Paths) && len(out.Moved) == len(c.Moved) {
		out.Bytes = c.Bytes // nothing hidden: the stored total as recorded
	}
	return out, true
}

// History lists the recorded changes, newest first: all of them or those
// touching path (a file, or anything below a directory), at most limit
// of them when limit > 0 (read from the journal's end: the rest is not
// read).
func History(ctx context.Context, sb *sandbox.Sandbox, path string, limit int) (HistoryResult, error) {
	return HistoryPage(ctx, sb, path, limit, Paging{})
}

// HistoryPage is History from a cursor: the changes after pg.From, in
// the same order, and a cut (max_results, max_result_bytes, the deadline,
// or limit, quietly) carries the cursor of the page after it.
func HistoryPage(ctx context.Context, sb *sandbox.Sandbox, path string, limit int, pg Paging) (HistoryResult, error) {
	if err := begin(ctx, sb, "history"); err != nil {
		return HistoryResult{}, err
	}
	pos, err := historyPosOf(pg.From)
	if err != nil {
		return HistoryResult{}, err
	}
	res := HistoryResult{Changes: []sandbox.Change{}}
	lim := int64(0)
	if limit > 0 {
		lim = int64(limit)
	}
	page := newPager(sb, lim)
	if limit > 0 && int64(limit) == page.max {
		page.capName = "limit" // --limit as high as max_results is the caller's cut too
	}
	add := func(c sandbox.Change) bool {
		if !pos.after(c.ID) {
			return ctx.Err() == nil // given on an earlier page
		}
		if v, ok := visibleChange(sb, c, &res.Hidden); ok {
			if cut := page.admit(jsonLen(v)); cut != "" {
				// --limit cuts quietly (not truncated), with a cursor all the same.
				res.Truncated = cut != "limit"
				if res.Truncated {
					res.Limit = cut
				}
				res.NextCursor = pg.next(pos.cursor())
				return false
			}
			res.Changes = append(res.Changes, v)
			pos.give(c.ID)
		}
		return ctx.Err() == nil
	}
	if path != "" {
		rel, err := sb.WorkdirRel(path)
		if err != nil {
			return HistoryResult{}, err
		}
		changes, err := sb.History(rel)
		if err != nil {
			return HistoryResult{}, err
		}
		for _, c := range changes {
			if !add(c) {
				break
			}
		}
	} else if err := sb.Changes(add); err != nil {
		return HistoryResult{}, err
	}
	if err := ctx.Err(); err != nil {
		if !timedOut(ctx, err) {
			return HistoryResult{}, err
		}
		if !res.Truncated {
			var t Truncation
			cutByDeadline(ctx, &t) // the newest changes, read by the deadline
			res.Truncated, res.Limit, res.Cuts = t.Truncated, t.Limit, t.Cuts
			res.NextCursor = pg.next(pos.cursor())
		}
	}
	res.Count = len(res.Changes)
	return res, nil
}

// PurgeResult says what purge forgot.
type PurgeResult struct {
	Removed int `json:"removed"` // changes forgotten, with the content kept only for them
	Kept    int `json:"kept"`    // changes naming a path the policy in force may not write: they stay
}

// Purge forgets the journal's changes whose every path the policy in
// force may write, and the content kept for them. It is not undoable.
func Purge(ctx context.Context, sb *sandbox.Sandbox) (PurgeResult, error) {
	if err := begin(ctx, sb, "purge"); err != nil {
		return PurgeResult{}, err
	}
	removed, kept, err := sb.PurgeJournal()
	return PurgeResult{Removed: removed, Kept: kept}, err
}

// UndoResult says what an undo restored.
type UndoResult struct {
	Undid    string       `json:"undid"`     // the change taken back
	ChangeID *string      `json:"change_id"` // the undo's own change (undo it to redo)
	Files    []UndoneFile `json:"files" fsbox:"list"`
}

// UndoneFile is one path an undo put back.
type UndoneFile struct {
	Path   string `json:"path"`
	Action string `json:"action"` // restore (content and mode put back), delete (a file the change created), move (renamed back), mkdir, symlink, rmdir
}

// Undo takes a recorded change back (id "" is the newest): every path of
// it returns to its prior state in one all-or-nothing commit, if each
// still holds what that change left there; otherwise conflict naming the
// paths that moved on (force restores anyway). It obeys the policy in
// force now: each path is resolved for writing as write resolves it. A
// file the change created is deleted only while it still holds what the
// change wrote (or with force), so undo never deletes anything else,
// even with rm off. An undo is itself a change.
func Undo(ctx context.Context, sb *sandbox.Sandbox, id string, force bool) (UndoResult, error) {
	if err := begin(ctx, sb, "undo"); err != nil {
		return UndoResult{}, err
	}
	var c sandbox.Change
	if id != "" {
		var err error
		if c, err = sb.ChangeByID(id); err != nil {
			return UndoResult{}, err
		}
	} else {
		var err error
		var any, ok bool
		// A change the policy may see none of is not the default: undo
		// walks back through what this policy's history shows.
		visible := func(x sandbox.Change) bool {
			hidden := 0
			_, ok := visibleChange(sb, x, &hidden)
			return ok
		}
		if c, any, ok, err = newestUndoable(sb.Changes, visible); err != nil {
			return UndoResult{}, err
		}
		if !any {
			return UndoResult{}, fserr.Errorf(fserr.CodeNotFound, "", "the journal holds no change to undo")
		}
		if !ok {
			return UndoResult{}, fserr.Errorf(fserr.CodeNotFound, "", "every recorded change is already undone: nothing left to undo (to redo, undo an undo by its id)")
		}
	}
	if err := mayUndo(sb, c); err != nil {
		return UndoResult{}, err
	}
	if force && sb.RequirePrecondition() {
		// force restores over whatever the paths hold now, content no one
		// named: after the policy, so a denied change stays denied.
		return UndoResult{}, fserr.Errorf(fserr.CodePreconditionRequired, "", "the policy requires every change to name what it replaces, and undo with force restores over content that changed since: nothing was undone (read the paths again and change them by their sha256)")
	}
	return undoChange(ctx, sb, c, force)
}

// mayUndo refuses, as a whole, a change that names a path the policy in
// force may not write now (naming only the paths it may read), and one
// recorded without its prior contents.
func mayUndo(sb *sandbox.Sandbox, c sandbox.Change) error {
	bad := sb.Unwritable(c)
	// A directory moved back is checked whole, as mv checks it: what lies
	// below it must be writable at both places.
	for _, m := range c.Moved {
		if err := sb.ProbeRename(m.To, m.From); err != nil && fserr.AsError(err).Code == fserr.CodeDenied {
			if _, seen := bad[m.To]; !seen {
				bad[m.To] = err
			}
		}
	}
	if len(bad) > 0 {
		var named []string
		var first error
		for p, err := range bad {
			if sb.MayRead(p, false) {
				named = append(named, p)
			}
			if first == nil || p < fserr.AsError(first).Path {
				first = err
			}
		}
		sort.Strings(named)
		e := fserr.AsError(first)
		if len(named) == 0 {
			return &fserr.Error{Code: fserr.CodeDenied, Rule: e.Rule, Set: e.Set, Msg: fmt.Sprintf("change %s touches a path this policy may not write: nothing was undone", c.ID)}
		}
		return &fserr.Error{Code: fserr.CodeDenied, Rule: e.Rule, Set: e.Set, Path: named[0], Msg: fmt.Sprintf("change %s touches %s, which this policy may not write now: nothing was undone", c.ID, strings.Join(named, ", "))}
	}
	if !c.Kept {
		return fserr.Errorf(fserr.CodeConflict, "", "change %s was recorded without its prior contents (larger than [journal] max_bytes): it cannot be undone", c.ID)
	}
	return nil
}

// undoChange takes c back: one change of every path c names, inside
// which a plan (what each step restores, every path checked through the
// door) is made under the change's locks, so no other change of fsbox
// comes between the plan and its apply; then the apply.
func undoChange(ctx context.Context, sb *sandbox.Sandbox, c sandbox.Change, force bool) (UndoResult, error) {
	res := UndoResult{Undid: c.ID, Files: []UndoneFile{}}
	id, err := sb.Change(undoPaths(c), c.ID, func(tx *sandbox.Tx) error {
		p, err := planUndo(sb, c, force)
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			return err
		}
		return p.apply(sb, tx, &res)
	})
	if id != "" {
		res.ChangeID = changeID(id)
	}
	return res, err
}

// undoPaths is every path an undo of c may name: its paths and both
// ends of its renames (the change's locks and claims).
func undoPaths(c sandbox.Change) []string {
	var paths []string
	for _, pc := range c.Paths {
		paths = append(paths, pc.Path)
	}
	for _, m := range c.Moved {
		paths = append(paths, m.From, m.To)
	}
	return paths
}

// undoPlan is what taking a change back does, decided before anything
// changes: each path holds what the change left there (or force), and
// each step with what it restores, in the order the apply runs them
// (Undo checked every path through the door first: mayUndo). The steps
// are the inverse, in reverse order of what the change did: directories
// it removed come back first (parents first), symlinks it made go; then
// its renames and its files, in the opposite order to the change's; then
// symlinks it removed come back, and directories it made go (deepest
// first, only when empty).
type undoPlan struct {
	c     sandbox.Change
	force bool
	// first runs before the files swap (mkdir, unlink, and the renames
	// when the change renamed last); files are staged, then swapped in
	// at once; then runs after (the renames when the change renamed
	// first, symlink, rmdir).
	first, files, then []undoStep
	// movesFirst: the undo's renames come before its files (its record
	// says so).
	movesFirst bool
}

// undoStep is one step of an undo: its action (as UndoneFile names it),
// the path it restores and, by action, where the entry is now (move),
// the kept content's hash and the mode (restore), what the path must
// hold now (restore, delete; nil with force), a symlink's target (the
// one made; for unlink, the one the path must still hold) and what the
// undo's record notes once the step is done (the files' swap notes
// theirs).
type undoStep struct {
	action string
	path   string
	from   string
	sum    string
	mode   fs.FileMode
	expect *string
	target string
	rec    *sandbox.PathChange
}

// planUndo plans taking c back, or says why it cannot be: a rename whose
// entry is gone, a path that no longer holds what c left there (unless
// force), a directory c made that would not be empty.
func planUndo(sb *sandbox.Sandbox, c sandbox.Change, force bool) (*undoPlan, error) {
	now, movedTo, err := undoState(sb, c, force)
	if err != nil {
		return nil, err
	}
	p := &undoPlan{c: c, force: force, movesFirst: !c.MovesFirst}
	order := parentsFirst(c.Paths)
	p.planFirst(order, now)
	if err := p.planFiles(now, movedTo); err != nil {
		return nil, err
	}
	p.planThen(order)
	return p, nil
}

// undoState is what each path of c holds now, and the paths c's renames
// led to; a conflict when c cannot be taken back as things stand.
func undoState(sb *sandbox.Sandbox, c sandbox.Change, force bool) ([]*sandbox.FileState, map[string]bool, error) {
	movedTo := map[string]bool{}
	moved, gone, err := movesState(sb, c, movedTo)
	if err != nil {
		return nil, nil, err
	}
	now := make([]*sandbox.FileState, len(c.Paths))
	for i, pc := range c.Paths {
		st, err := sb.EntryState(pc.Path)
		if err != nil {
			return nil, nil, err
		}
		now[i] = st
		if !movedTo[pc.Path] && !sameState(st, pc.After) {
			moved = append(moved, pc.Path)
		}
	}
	if len(gone) > 0 {
		sort.Strings(gone)
		return nil, nil, fserr.Errorf(fserr.CodeConflict, gone[0], "change %s cannot be undone: %s, which it moved, no longer exist, so nothing can be moved back; nothing was undone", c.ID, strings.Join(gone, ", "))
	}
	if d := dirsStay(sb, c); d != "" && !force {
		moved = append(moved, d)
	}
	if len(moved) > 0 && !force {
		sort.Strings(moved)
		e := fserr.Errorf(fserr.CodeConflict, moved[0], "change %s cannot be undone: %s changed after it (what is there now is not what change %s wrote), and undo would overwrite that; nothing was undone.", c.ID, strings.Join(moved, ", "), c.ID)
		if sb.RequirePrecondition() {
			return nil, nil, e
		}
		return nil, nil, e.WithHint(fserr.Hint{Option: "force", Text: "Pass %s to restore it anyway."})
	}
	return now, movedTo, nil
}

// movesState checks c's renames: the name each led to (noted in movedTo)
// must hold an entry (else it is gone: nothing to move back, not even
// force can), and the name it came from must be free again, unless the
// change itself put a file there after renaming (an undo's restored
// file), which goes first. It returns the names that moved on.
func movesState(sb *sandbox.Sandbox, c sandbox.Change, movedTo map[string]bool) (moved, gone []string, err error) {
	for _, m := range c.Moved {
		movedTo[m.To] = true
		to, err := sb.EntryState(m.To)
		if err != nil {
			return nil, nil, err
		}
		from, err := sb.EntryState(m.From)
		if err != nil {
			return nil, nil, err
		}
		createdAfter := c.MovesFirst && slices.ContainsFunc(c.Paths, func(pc sandbox.PathChange) bool {
			return pc.Path == m.From && pc.Before == nil && sameState(from, pc.After)
		})
		if to == nil {
			gone = append(gone, m.To)
		}
		if to == nil || (from != nil && !createdAfter) {
			moved = append(moved, m.To)
		}
	}
	return moved, gone, nil
}

// parentsFirst is the indexes of paths, parents before children.
func parentsFirst(paths []sandbox.PathChange) []int {
	order := make([]int, len(paths))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool {
		return strings.Count(paths[order[x]].Path, "/") < strings.Count(paths[order[y]].Path, "/")
	})
	return order
}

func isType(st *sandbox.FileState, typ string) bool { return st != nil && st.Type == typ }

// planFirst plans what runs before the files: the directories c removed
// made again (parents first), the symlinks c made removed, and, when c
// renamed after its other changes, its renames reversed.
func (p *undoPlan) planFirst(order []int, now []*sandbox.FileState) {
	c := p.c
	for _, i := range order {
		if pc := c.Paths[i]; isType(pc.Before, "dir") && now[i] == nil {
			p.first = append(p.first, undoStep{action: "mkdir", path: pc.Path,
				rec: &sandbox.PathChange{Path: pc.Path, After: &sandbox.FileState{Type: "dir"}}})
		}
	}
	for i, pc := range c.Paths {
		if pc.Before == nil && isType(pc.After, "symlink") && sameState(now[i], pc.After) {
			p.first = append(p.first, undoStep{action: "unlink", path: pc.Path, target: pc.After.Target,
				rec: &sandbox.PathChange{Path: pc.Path, Before: pc.After}})
		}
	}
	if !c.MovesFirst {
		p.first = append(p.first, p.movesBack()...)
	}
}

// movesBack is c's renames reversed, newest first, each never over
// anything; each joins the record once it is done.
func (p *undoPlan) movesBack() []undoStep {
	var out []undoStep
	for i := len(p.c.Moved) - 1; i >= 0; i-- {
		m := p.c.Moved[i]
		out = append(out, undoStep{action: "move", path: m.From, from: m.To})
	}
	return out
}

// planFiles plans c's files: each file c replaced or removed restored
// (its kept content and mode), each file c created deleted, each while
// the path still holds what c left there (expect; force: whatever it
// holds).
func (p *undoPlan) planFiles(now []*sandbox.FileState, movedTo map[string]bool) error {
	c := p.c
	for i, pc := range c.Paths {
		cur := now[i]
		if movedTo[pc.Path] && !c.MovesFirst {
			cur = nil // the moved entry went back
		}
		var expect *string
		if !p.force {
			expect = expectOf(cur)
		}
		switch {
		case isType(pc.Before, "file"):
			mode := fs.FileMode(0o644) // an object's record has no mode (nor does its root)
			if pc.Before.Mode != "" {
				m, err := ParseMode(pc.Before.Mode)
				if err != nil {
					return err
				}
				mode = m
			}
			p.files = append(p.files, undoStep{action: "restore", path: pc.Path, sum: pc.Before.SHA256, mode: mode, expect: expect})
		case pc.Before == nil && isType(pc.After, "file") && cur != nil:
			p.files = append(p.files, undoStep{action: "delete", path: pc.Path, expect: expect})
		}
	}
	return nil
}

// planThen plans what runs after the files: c's renames reversed when c
// renamed first, the symlinks c removed made again, the directories c
// made removed (deepest first, only when empty).
func (p *undoPlan) planThen(order []int) {
	c := p.c
	if c.MovesFirst {
		p.then = append(p.then, p.movesBack()...)
	}
	for _, pc := range c.Paths {
		if isType(pc.Before, "symlink") {
			p.then = append(p.then, undoStep{action: "symlink", path: pc.Path, target: pc.Before.Target,
				rec: &sandbox.PathChange{Path: pc.Path, After: pc.Before}})
		}
	}
	for x := len(order) - 1; x >= 0; x-- {
		if pc := c.Paths[order[x]]; pc.Before == nil && isType(pc.After, "dir") {
			p.then = append(p.then, undoStep{action: "rmdir", path: pc.Path,
				rec: &sandbox.PathChange{Path: pc.Path, Before: pc.After}})
		}
	}
}

// apply runs the plan inside the undo's change tx (recorded once, in
// the journal of the change it takes back): the steps before the files,
// the files swapped in all or none, the rest. Each step that changes the
// tree is noted as it is done and marks the undo made, so a later step
// that fails (an outside writer refused by a re-check) leaves in the
// record exactly what was done.
func (p *undoPlan) apply(sb *sandbox.Sandbox, tx *sandbox.Tx, res *UndoResult) error {
	for _, st := range p.first {
		if err := p.step(sb, tx, st, res); err != nil {
			return err
		}
	}
	for _, st := range p.files {
		if err := p.run(sb, tx, st, res); err != nil {
			return err
		}
	}
	if err := tx.Swap(); err != nil {
		return err
	}
	tx.Made()
	for _, st := range p.then {
		if err := p.step(sb, tx, st, res); err != nil {
			return err
		}
	}
	return nil
}

// step runs one step that acts at once (not a file the swap commits),
// then notes it and marks the undo made.
func (p *undoPlan) step(sb *sandbox.Sandbox, tx *sandbox.Tx, st undoStep, res *UndoResult) error {
	n := len(res.Files)
	if err := p.run(sb, tx, st, res); err != nil {
		return err
	}
	if len(res.Files) == n {
		return nil // nothing done (an rmdir left, with force)
	}
	if st.rec != nil {
		tx.Note(*st.rec)
	}
	if st.action == "move" {
		tx.Moves(p.movesFirst, sandbox.Move{From: st.from, To: st.path})
	}
	tx.Made()
	return nil
}

// run runs one step inside the undo's change and lists it in res.
func (p *undoPlan) run(sb *sandbox.Sandbox, tx *sandbox.Tx, st undoStep, res *UndoResult) error {
	shown := st.path
	var err error
	switch st.action {
	case "mkdir":
		err = tx.Mkdir(st.path)
	case "unlink":
		err = tx.RemoveLink(st.path, st.target)
	case "move":
		err = tx.Move(st.from, st.path)
	case "restore":
		var content []byte
		if content, err = sb.JournalContent(p.c, st.sum, sb.Limits().MaxWriteBytes); err == nil {
			shown, err = tx.Put(st.path, content, st.mode, st.expect)
		}
	case "delete":
		shown, err = tx.Delete(st.path, st.expect)
	case "symlink":
		err = tx.Symlink(st.path, st.target)
	case "rmdir":
		var removed bool
		if removed, err = tx.RemoveEmptyDir(st.path, p.force); err == nil && !removed {
			return nil
		}
	}
	if err != nil {
		return err
	}
	res.Files = append(res.Files, UndoneFile{Path: shown, Action: st.action})
	return nil
}

// newestUndoable is the default of undo: the newest change that is not
// an undo and is not undone (an undo marks its change undone; undoing
// that undo, a redo, marks it done again) and that the policy in force
// may see (visible), read from the journal's end only as far as it.
// Repeated undo walks back. any: the journal holds a change at all.
//
// A change is undone when an odd number of undos reach it: an undo u of
// x reaches x and, through x, whatever x (an undo too) took back, and so
// on down. Every undo reaching x is newer than x, so by the time the
// newest-first walk meets x its count is complete: flips[x.Undoes] gains
// flips[x] + 1.
func newestUndoable(newestFirst func(func(sandbox.Change) bool) error, visible func(sandbox.Change) bool) (c sandbox.Change, any, ok bool, err error) {
	flips := map[string]int{}
	err = newestFirst(func(x sandbox.Change) bool {
		any = true
		if x.Undoes != "" {
			flips[x.Undoes] += flips[x.ID] + 1
			return true
		}
		if flips[x.ID]%2 == 0 && (visible == nil || visible(x)) {
			c, ok = x, true
			return false
		}
		return true
	})
	return c, any, ok, err
}

func sameState(a, b *sandbox.FileState) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Type == b.Type && a.SHA256 == b.SHA256 && a.Target == b.Target
}

// expectOf is the sha256 a commit must still find (absent: "").
func expectOf(s *sandbox.FileState) *string {
	e := ""
	if s != nil {
		e = s.SHA256
	}
	return &e
}

// goneAfter is what undo of c removes or moves away: the paths c created
// and the places its moves led to.
func goneAfter(c sandbox.Change) map[string]bool {
	gone := map[string]bool{}
	for _, pc := range c.Paths {
		if pc.Before == nil {
			gone[pc.Path] = true
		}
	}
	for _, m := range c.Moved {
		gone[m.To] = true
	}
	return gone
}

// dirsStay is the first directory c made that would not be empty once
// undo removed what c put in it (another process, or a later change,
// put something there): undo answers conflict before it changes
// anything, rather than after its commit ("": none).
func dirsStay(sb *sandbox.Sandbox, c sandbox.Change) string {
	gone := goneAfter(c)
	for _, pc := range c.Paths {
		if pc.Before != nil || pc.After == nil || pc.After.Type != "dir" {
			continue
		}
		d, err := sb.OpenDir(pc.Path)
		if err != nil {
			continue // gone or not a directory: the undo's own checks say so
		}
		l, err := d.ReadDir()
		d.Close()
		if err != nil || l.Denied > 0 {
			return pc.Path
		}
		for _, e := range l.Entries {
			if !gone[e.Path] {
				return pc.Path
			}
		}
	}
	return ""
}

// Text is one line per change: id, time, command and paths (a move as
// FROM -> TO, as mv -v names it), tab-separated.
func (r HistoryResult) Text(w spec.TextWriter) error {
	for _, c := range r.Changes {
		paths := make([]string, 0, len(c.Paths)+len(c.Moved))
		for _, p := range c.Paths {
			paths = append(paths, w.Name(p.Path))
		}
		for _, m := range c.Moved {
			paths = append(paths, w.Name(m.From)+" -> "+w.Name(m.To))
		}
		if _, err := fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", c.ID, c.Time, c.Command, strings.Join(paths, " ")); err != nil {
			return err
		}
	}
	return nil
}

// Text is two lines, removed and kept, each with its count after a tab.
func (r PurgeResult) Text(w spec.TextWriter) error {
	_, err := fmt.Fprintf(w, "removed\t%d\nkept\t%d\n", r.Removed, r.Kept)
	return err
}

// Text is one line per path: the action and the path.
func (r UndoResult) Text(w spec.TextWriter) error {
	for _, f := range r.Files {
		if _, err := fmt.Fprintf(w, "%s %s\n", f.Action, w.Name(f.Path)); err != nil {
			return err
		}
	}
	return nil
}
