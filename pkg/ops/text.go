package ops

import (
	"fmt"
	"strings"

	"github.com/fsbox/fsbox/pkg/spec"
)

// The text forms of the results that are complete before they are
// printed (--format text), each next to nothing but its result's type:
// the command line prints them through spec.Texter.

// Text is sha256sum's line, so `sha256sum -c` can check it.
func (r WriteResult) Text(w spec.TextWriter) error {
	_, err := fmt.Fprintf(w, "%s  %s\n", r.SHA256, w.Name(r.Path))
	return err
}

// Text names the directory, as mkdir -v does.
func (r MkdirResult) Text(w spec.TextWriter) error {
	_, err := fmt.Fprintln(w, w.Name(r.Path))
	return err
}

// Text is "FROM -> TO", as mv -v prints it.
func (r MoveResult) Text(w spec.TextWriter) error { return arrow(w, r.From, r.To) }

// Text is "FROM -> TO", as cp -v prints it.
func (r CopyResult) Text(w spec.TextWriter) error { return arrow(w, r.From, r.To) }

func arrow(w spec.TextWriter, from, to string) error {
	_, err := fmt.Fprintf(w, "%s -> %s\n", w.Name(from), w.Name(to))
	return err
}

// Text names what was removed, as rm -v does (nothing when nothing was).
func (r RemoveResult) Text(w spec.TextWriter) error {
	if !r.Removed {
		return nil
	}
	_, err := fmt.Fprintln(w, w.Name(r.Path))
	return err
}

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
