package ops

import (
	"context"
	"strings"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

var lsOp = &spec.Op{
	Name: "ls", Class: spec.Read, Result: LsResult{}, Pages: true, Paints: true,
	Summary: "list a directory, sorted by name",
	Help:    "Lists DIR (the workdir when left out) sorted by name, with each entry's type, size, mode and mtime; a symlink is listed as itself.",
	Args:    []spec.Arg{{Name: "path", Meta: "DIR", Help: "the directory to list", Use: sandbox.NeedReadDir, Optional: true, Complete: spec.CompleteDirs}},
	Options: []spec.Option{
		{Name: "all", Short: "a", Type: spec.Bool, Help: "include names starting with a dot"},
		{Name: "limit", Type: spec.Int, Meta: "N", Unit: "entries", Min: min1, Narrows: "max_results", Help: "stop after N entries (in name order)"},
	},
	Examples: []spec.Example{{Cmd: "ls src --format text", Says: "one name a line, as ls -1"}},
	Text:     "one name a line, as ls -1",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		dir := "."
		if in.IsSet("path") {
			dir = in.String("path")
		}
		pg, err := pagingOf(sb, in)
		if err != nil {
			return nil, err
		}
		return Ls(ctx, sb, LsOptions{Path: dir, All: in.Bool("all"), Limit: in.Int("limit"), Paging: pg})
	},
}

// LsOptions are ls's inputs.
type LsOptions struct {
	Path string // the directory, "." for the workdir; "" is usage (an empty path is never a path)
	// Paging: a page starts after the entry named From.Key (names are
	// compared, never looked up).
	Paging
	All bool // show dotfiles
	// Limit, when above 0 and below max_results, is where the list stops
	// (--limit: the caller's own cut, limit "limit").
	Limit int64
}

// LsEntry is one directory entry; a symlink is shown as itself.
type LsEntry struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Size, Mtime and Mode are left out where the root has none: an
	// object root's directory has no size or mtime, and nothing there
	// has a mode.
	Size   *int64  `json:"size,omitempty"`
	Mtime  string  `json:"mtime,omitempty"`
	Mode   string  `json:"mode,omitempty"`
	Target *string `json:"target,omitempty"`
}

// LsSkipped counts the entries left out, so an empty listing is never
// ambiguous.
type LsSkipped struct {
	Hidden int `json:"hidden"`
	Denied int `json:"denied"`
}

// LsResult is a directory listing sorted by name.
type LsResult struct {
	Path    string    `json:"path"`
	Entries []LsEntry `json:"entries" fsbox:"items"`
	Count   int       `json:"count"`
	Skipped LsSkipped `json:"skipped"`
	Truncation
}

// Ls lists one directory.
func Ls(ctx context.Context, sb *sandbox.Sandbox, o LsOptions) (LsResult, error) {
	if err := beginWalk(ctx, sb, "ls"); err != nil {
		return LsResult{}, err
	}
	d, err := sb.OpenDir(o.Path)
	if err != nil {
		return LsResult{}, err
	}
	defer d.Close()
	list, err := d.ReadDirContext(ctx)
	cut := timedOut(ctx, err) // the entries described by the deadline: the first, in name order
	if err != nil && !cut {
		return LsResult{}, err
	}
	res := LsResult{Path: d.Info.Path, Entries: []LsEntry{}, Skipped: LsSkipped{Denied: list.Denied}}
	pg := newPager(sb, o.Limit)
	var after *string // the last entry given: the page starts after it
	if o.From != nil {
		after = &o.From.Key
	}
	next := func() string {
		if after == nil {
			return o.next(Cursor{}) // none given: the next page is this one again
		}
		return o.next(Cursor{Key: *after})
	}
	for _, e := range list.Entries {
		if o.From != nil && e.Name <= o.From.Key {
			continue // on an earlier page (entries come sorted by name)
		}
		if !o.All && strings.HasPrefix(e.Name, ".") {
			res.Skipped.Hidden++
			continue
		}
		ent := LsEntry{Name: e.Name, Type: e.Type, Size: &e.Size, Mtime: rfc3339(e.ModTime), Mode: modeString(e.Mode)}
		if e.OnObjectRoot() {
			ent.Mode = ""
			if e.Type == "dir" {
				ent.Size, ent.Mtime = nil, ""
			}
		}
		if e.Type == "symlink" {
			t := e.Target
			ent.Target = &t
		}
		if lim := pg.admit(jsonLen(ent)); lim != "" {
			res.cut(lim, next())
			break
		}
		res.Entries = append(res.Entries, ent)
		after = &e.Name
	}
	if cut {
		cutByDeadline(ctx, &res.Truncation)
		res.NextCursor = next()
	}
	res.Count = len(res.Entries)
	return res, nil
}

// Text is one name a line, as ls -1 (by type on a colour terminal).
func (r LsResult) Text(w spec.TextWriter) error {
	for _, e := range r.Entries {
		w.WriteString(w.Typed(w.Name(e.Name), e.Type))
		if err := w.WriteByte('\n'); err != nil {
			return err
		}
	}
	return nil
}

// Bytes is the entry's size, 0 where it has none.
func (e LsEntry) Bytes() int64 {
	if e.Size == nil {
		return 0
	}
	return *e.Size
}
