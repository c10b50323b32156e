package ops

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// HistoryResult lists recorded changes, newest first.
type HistoryResult struct {
	Changes   []sandbox.Change `json:"changes"`
	Count     int              `json:"count"`
	Truncated bool             `json:"truncated"` // more than max_results changes matched
	Purged    bool             `json:"purged"`
}

// History lists the workdir's recorded changes, newest first, all of
// them or those touching path (a file, or anything below a directory).
// With purge it forgets them all, and the content kept for them.
func History(ctx context.Context, sb *sandbox.Sandbox, path string, purge bool) (HistoryResult, error) {
	if err := begin(ctx, sb, "history"); err != nil {
		return HistoryResult{}, err
	}
	if purge {
		if path != "" {
			return HistoryResult{}, usagef(path, "purge forgets every change: it takes no path")
		}
		if err := sb.PurgeJournal(); err != nil {
			return HistoryResult{}, err
		}
		return HistoryResult{Changes: []sandbox.Change{}, Purged: true}, nil
	}
	rel := ""
	if path != "" {
		r, err := sb.WorkdirRel(path)
		if err != nil {
			return HistoryResult{}, err
		}
		rel = r
	}
	changes, err := sb.History(rel)
	if err != nil {
		return HistoryResult{}, err
	}
	res := HistoryResult{Changes: changes}
	if max := int(sb.Limits().MaxResults); len(res.Changes) > max {
		res.Changes, res.Truncated = res.Changes[:max], true
	}
	res.Count = len(res.Changes)
	return res, nil
}

// UndoResult says what an undo restored.
type UndoResult struct {
	Undid    string       `json:"undid"`     // the change taken back
	ChangeID *string      `json:"change_id"` // the undo's own change (undo it to redo)
	Files    []UndoneFile `json:"files"`
}

// UndoneFile is one path an undo put back.
type UndoneFile struct {
	Path   string `json:"path"`
	Action string `json:"action"` // "restore" (content and mode put back) or "delete" (a file the change created)
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
	all, err := sb.History("")
	if err != nil {
		return UndoResult{}, err
	}
	if len(all) == 0 {
		return UndoResult{}, sandbox.Errorf(sandbox.CodeNotFound, "", "the journal holds no change to undo")
	}
	c, ok := newestUndoable(all)
	if !ok && id == "" {
		return UndoResult{}, sandbox.Errorf(sandbox.CodeNotFound, "", "every recorded change is already undone: nothing left to undo (to redo, undo an undo by its id)")
	}
	if id != "" {
		if _, err := strconv.Atoi(id); err != nil {
			return UndoResult{}, usagef("", "a change id is a number, as history shows it, got %q", id)
		}
		found := false
		for _, ch := range all {
			if ch.ID == id {
				c, found = ch, true
				break
			}
		}
		if !found {
			return UndoResult{}, sandbox.Errorf(sandbox.CodeNotFound, "", "the journal holds no change %s (evicted, purged, or never made)", id)
		}
	}
	max := sb.Limits().MaxWriteBytes
	b := sb.NewBatch()
	defer b.Abort()
	b.Undoes = c.ID
	res := UndoResult{Undid: c.ID, Files: []UndoneFile{}}
	var moved []string
	var targets []*sandbox.WriteTarget
	defer func() {
		for _, w := range targets {
			w.Close()
		}
	}()
	for _, pc := range c.Paths {
		w, err := sb.OpenWriteTarget(pc.Path, pc.Before != nil)
		if err != nil {
			return UndoResult{}, err
		}
		targets = append(targets, w)
		now, err := currentState(w)
		if err != nil {
			return UndoResult{}, err
		}
		if !sameState(now, pc.After) {
			moved = append(moved, pc.Path)
		}
		expect := expectOf(now)
		if force {
			expect = nil
		}
		if pc.Before == nil {
			if now == nil {
				continue // already gone
			}
			if err := b.Delete(w, sandbox.CommitOptions{Expect: expect}); err != nil {
				return UndoResult{}, err
			}
			res.Files = append(res.Files, UndoneFile{Path: w.Path, Action: "delete"})
			continue
		}
		content, err := sb.JournalContent(pc.Before.SHA256, max)
		if err != nil {
			return UndoResult{}, err
		}
		mode, err := ParseMode(pc.Before.Mode)
		if err != nil {
			return UndoResult{}, err
		}
		if err := b.Put(w, content, max, sandbox.CommitOptions{Expect: expect, Mode: &mode}); err != nil {
			return UndoResult{}, err
		}
		res.Files = append(res.Files, UndoneFile{Path: w.Path, Action: "restore"})
	}
	if len(moved) > 0 && !force {
		sort.Strings(moved)
		return UndoResult{}, sandbox.Errorf(sandbox.CodeConflict, moved[0], "change %s cannot be undone: %s no longer hold what it left there (force restores anyway)", c.ID, strings.Join(moved, ", "))
	}
	if _, err := b.Commit(); err != nil {
		return UndoResult{}, err
	}
	res.ChangeID = changeID(b.ChangeID)
	return res, nil
}

// newestUndoable is the default of undo: the newest change that is not
// an undo and is not undone (an undo marks its change undone; undoing
// that undo, a redo, marks it done again). Repeated undo walks back.
func newestUndoable(newestFirst []sandbox.Change) (sandbox.Change, bool) {
	target := map[string]string{}
	for _, c := range newestFirst {
		target[c.ID] = c.Undoes
	}
	undone := map[string]bool{}
	// Taking x back flips it, and, when x was itself an undo, flips what
	// x had taken back (its target is done again), and so on down.
	var flip func(x string, depth int)
	flip = func(x string, depth int) {
		if x == "" || depth > len(newestFirst) {
			return
		}
		undone[x] = !undone[x]
		flip(target[x], depth+1)
	}
	for i := len(newestFirst) - 1; i >= 0; i-- { // oldest first
		if c := newestFirst[i]; c.Undoes != "" {
			flip(c.Undoes, 0)
		}
	}
	for _, c := range newestFirst {
		if c.Undoes == "" && !undone[c.ID] {
			return c, true
		}
	}
	return sandbox.Change{}, false
}

// currentState describes the file at a target now (nil: absent).
func currentState(w *sandbox.WriteTarget) (*sandbox.FileState, error) {
	if !w.Exists {
		return nil, nil
	}
	sum, err := w.CurrentSHA256()
	if err != nil {
		return nil, err
	}
	return &sandbox.FileState{SHA256: sum, Size: w.Info.Size, Mode: fmt.Sprintf("%04o", w.Info.Mode.Perm())}, nil
}

func sameState(a, b *sandbox.FileState) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.SHA256 == b.SHA256
}

// expectOf is the sha256 a commit must still find (absent: "").
func expectOf(s *sandbox.FileState) *string {
	e := ""
	if s != nil {
		e = s.SHA256
	}
	return &e
}
