package ops

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/fsbox/fsbox/pkg/spec"
	"github.com/fsbox/fsbox/pkg/textio"
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

// Text is one link path a line.
func (r LinksResult) Text(w spec.TextWriter) error {
	for _, l := range r.Links {
		if _, err := w.WriteString(w.Name(l.Path) + "\n"); err != nil {
			return err
		}
	}
	return nil
}

// Text is wc's: the picked counts (all four by default) of each file and
// their total, each padded, as GNU wc 9.1 pads them, to the width of the
// files' total size (one count of one file is not padded).
func (r WcResult) Text(w spec.TextWriter) error {
	picked := r.show
	if len(picked) == 0 {
		picked = []string{"lines", "words", "chars", "bytes"}
	}
	n := len(strconv.FormatInt(r.Total.Bytes, 10))
	if len(picked) == 1 && len(r.Files) == 1 {
		n = 1
	}
	row := func(c textio.Counts, name string) {
		for i, p := range picked {
			if i > 0 {
				w.WriteByte(' ')
			}
			fmt.Fprintf(w, "%*d", n, countOf(c, p))
		}
		fmt.Fprintf(w, " %s\n", name)
	}
	for _, f := range r.Files {
		row(f.Counts, w.Name(f.Path))
	}
	if len(r.Files) > 1 {
		row(r.Total, "total")
	}
	return nil
}

func countOf(c textio.Counts, name string) int64 {
	switch name {
	case "lines":
		return c.Lines
	case "words":
		return c.Words
	case "chars":
		return c.Chars
	}
	return c.Bytes
}

// Text is one "key<TAB>value" line per part of the policy (paths are
// names: one a line).
func (r RootsResult) Text(w spec.TextWriter) error {
	name := w.Name
	fmt.Fprintf(w, "workdir\t%s\n", name(r.Workdir))
	for _, d := range r.WriteRoots {
		fmt.Fprintf(w, "write_root\t%s\n", name(d))
	}
	for _, d := range r.ReadRoots {
		fmt.Fprintf(w, "read_root\t%s\n", name(d))
	}
	cfg := "(built-in default)"
	if r.Config != nil {
		cfg = name(*r.Config)
	}
	fmt.Fprintf(w, "config\t%s\n", cfg)
	if r.AuditLog != nil {
		fmt.Fprintf(w, "audit_log\t%s\n", name(*r.AuditLog))
	}
	fmt.Fprintf(w, "commands\t%s\n", strings.Join(r.Commands, " "))
	fmt.Fprintf(w, "landlock\t%s (enforced: %v)\n", r.Landlock.Mode, r.Landlock.Enforced)
	g := r.Guarantees
	fmt.Fprintf(w, "guarantees\tdescriptor_path_check=%v dir_lock=%v no_follow=%v no_replace_rename=%v\n",
		g.DescriptorPathCheck, g.DirLock, g.NoFollow, g.NoReplaceRename)
	fmt.Fprintf(w, "require\t%s\n", strings.Join(r.Require, " "))
	if !r.Journal.Enabled {
		_, err := fmt.Fprintf(w, "journal\toff: %s\n", r.Journal.Reason)
		return err
	}
	fmt.Fprintf(w, "journal\t%s\n", name(r.Journal.Dir))
	for _, jr := range r.Journal.Roots {
		fmt.Fprintf(w, "journal_root\t%s\t%s\n", name(jr.Root), name(jr.Dir))
	}
	for _, is := range r.Journal.Ignored {
		fmt.Fprintf(w, "journal_ignored\t%s\t%s\n", name(is.Dir), is.Reason)
	}
	var err error
	if r.Journal.RecoveryPending > 0 {
		_, err = fmt.Fprintf(w, "recovery_pending\t%d\n", r.Journal.RecoveryPending)
	}
	return err
}

// Text is one line: allowed or denied, the command, the path, the reason
// and the rule.
func (d Decision) Text(w spec.TextWriter) error {
	verdict := "allowed"
	if !d.Allowed {
		verdict = "denied"
	}
	_, err := fmt.Fprintf(w, "%s %s %s: %s (rule %s)\n", verdict, d.Op, w.Name(d.Path), w.Name(strings.ReplaceAll(d.Reason, "\n", `\n`)), d.Rule)
	return err
}

// Text is the unified diff the edit made (or, with a dry run, would
// make).
func (r *EditResult) Text(w spec.TextWriter) error {
	_, err := w.WriteString(r.Diff)
	return err
}

// BigField is the diff: a face may write it into the JSON document
// without copying it (it can be tens of MiB).
func (r *EditResult) BigField() *string { return &r.Diff }

// Text is the selected bytes exactly as the file holds them (base64 text
// and a newline with that encoding), escaped by the face on a terminal.
func (r *ReadResult) Text(w spec.TextWriter) error {
	if r.Encoding == "base64" {
		w.WriteString(r.Content)
		return w.WriteByte('\n')
	}
	_, err := w.Write(w.Content(r.Raw))
	return err
}

// BigField is the content (up to max_read_bytes).
func (r *ReadResult) BigField() *string { return &r.Content }

// cutRowsText is cut's text form as a row sink writing to w: the fields
// joined by the output delimiter (the delimiter by default; a tab with a
// regex delimiter, a comma with CSV; an empty one is a NUL, as GNU cut
// has it), each row ended as its line was; CSV rows re-quoted.
func cutRowsText(in *spec.Input, o CutOptions, w io.Writer) RowSink {
	out := o.Delimiter
	switch {
	case in.IsSet("output-delimiter"):
		out = in.String("output-delimiter")
		if out == "" {
			out = "\x00"
		}
	case o.Regex || out == "":
		out = "\t"
		if o.CSV {
			out = ","
		}
	}
	if o.CSV && !in.IsSet("output-delimiter") {
		cw := csv.NewWriter(w)
		if len(out) == 1 {
			cw.Comma = rune(out[0])
		}
		var rec []string
		return func(fields [][]byte, _ []byte) error {
			rec = rec[:0]
			for _, f := range fields {
				rec = append(rec, string(f))
			}
			cw.Write(rec)
			cw.Flush()
			return cw.Error()
		}
	}
	sep := []byte(out)
	return func(fields [][]byte, eol []byte) error {
		for i, f := range fields {
			if i > 0 {
				w.Write(sep)
			}
			w.Write(f)
		}
		if len(eol) == 0 {
			eol = []byte("\n")
		}
		_, err := w.Write(eol)
		return err
	}
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

// Paints: ls's names may be coloured by type.
func (r LsResult) Paints() {}

// Items are ls's entries, an item a line in ndjson.
func (r LsResult) Items() any { return r.Entries }
