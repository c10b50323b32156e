package ops

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/fsbox/fsbox/pkg/sandbox"
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

// The streaming operations' sinks: each takes the sink a face set
// (spec.Input.Sink) and returns what the operation calls for each item,
// in the form the face prints, chosen once before the call; nil when the
// face set none (the result collects the items). A face that shapes the
// items itself (the reference MCP profile) may set the operation's own
// sink type (LineSink, RowSink, PathSink), which is called as it is.

// lineSink sends each line as the file has it (the text form), or as a
// JSON string without its line end (an item).
func lineSink(s any) LineSink {
	switch s := s.(type) {
	case LineSink:
		return s
	case spec.ItemSink:
		return func(line []byte) error { return s(string(textio.TrimEOL(line))) }
	case spec.TextWriter:
		return func(line []byte) error { _, err := s.Write(s.Content(line)); return err }
	}
	return nil
}

// rowSink sends each row as its fields (an item, a JSON array of
// strings), or as cut's text form.
func rowSink(s any, in *spec.Input, o CutOptions) RowSink {
	switch s := s.(type) {
	case RowSink:
		return s
	case spec.ItemSink:
		var row []string
		return func(fields [][]byte, _ []byte) error {
			row = row[:0]
			for _, f := range fields {
				row = append(row, string(f))
			}
			return s(row)
		}
	case spec.TextWriter:
		return cutRowsText(in, o, s)
	}
	return nil
}

// pathSink sends each path (an item, a JSON string), or one a line, by
// type in colour where the face colours (fd, ls).
func pathSink(s any) PathSink {
	switch s := s.(type) {
	case PathSink:
		return s
	case spec.ItemSink:
		return func(p, _ string) error { return s(p) }
	case spec.TextWriter:
		return func(p, typ string) error {
			s.WriteString(s.Typed(s.Name(p), typ))
			return s.WriteByte('\n')
		}
	}
	return nil
}

// Paints: find's paths may be coloured by type.
func (r FindResult) Paints() {}

// grepSink sends each searched file's findings: as items (its count,
// its path, or its matches, by the mode chosen once), or as grep's text
// form.
func grepSink(s any, sb *sandbox.Sandbox, in *spec.Input, o GrepOptions) func(*FileResult) error {
	switch s := s.(type) {
	case spec.ItemSink:
		switch {
		case o.Count:
			return func(fr *FileResult) error { return s(FileCount{Path: fr.Path, Count: fr.Count}) }
		case o.FilesWithMatches:
			return func(fr *FileResult) error { return s(fr.Path) }
		}
		return func(fr *FileResult) error {
			for i := range fr.Matches {
				if err := s(&fr.Matches[i]); err != nil {
					return err
				}
			}
			return nil
		}
	case spec.TextWriter:
		// Lines name their file unless one file is searched, as grep
		// does; -h and -H say otherwise.
		withPath := !GrepNamesOneFile(sb, o.Paths)
		switch {
		case in.Bool("no-filename"):
			withPath = false
		case in.Bool("with-filename"):
			withPath = true
		}
		t := &grepText{w: s, numbered: in.Bool("numbered"), context: (o.Before > 0 || o.After > 0) && !o.OnlyMatching,
			withPath: withPath, maxColumns: int(in.Int("max-columns")), painted: s.Paint("", spec.PaintMatch) != ""}
		switch {
		case o.Count:
			return func(fr *FileResult) error {
				t.prefix(fr.Path, 0, ':')
				s.WriteString(strconv.FormatInt(fr.Count, 10))
				return s.WriteByte('\n')
			}
		case o.FilesWithMatches:
			return func(fr *FileResult) error {
				s.WriteString(s.Paint(t.name(fr.Path), spec.PaintPath))
				return s.WriteByte('\n')
			}
		}
		return t.file
	}
	return nil
}

// Paints: grep's text form passes every name and line through the
// writer, and may colour paths, line numbers and matches.
func (r GrepResult) Paints() {}

// Matched: grep exits 1 on the command line when nothing matched.
func (r GrepResult) Matched() bool { return r.Count > 0 }

// Silent: grep -q prints nothing.
func (r GrepResult) Silent() bool { return r.quiet }

// grepText is grep's text form, as grep and ripgrep print matches in a
// pipeline: path:line:text (the path and number as asked), context lines
// with '-', groups split by "--".
type grepText struct {
	w        spec.TextWriter
	numbered bool
	context  bool
	withPath bool
	last     int64 // last line printed in the current file, for "--"
	printed  bool
	// maxColumns > 0: a line longer prints as a note (rg --max-columns).
	maxColumns int
	painted    bool // the writer colours: a match is written apart
}

// name is how the text form names a file: standard input is "<stdin>",
// as rg names it.
func (t *grepText) name(path string) string {
	if path == sandbox.StdinPath {
		return "<stdin>"
	}
	return t.w.Name(path)
}

func (t *grepText) prefix(path string, line int64, sep byte) {
	if t.withPath {
		t.w.WriteString(t.w.Paint(t.name(path), spec.PaintPath))
		t.w.WriteByte(sep)
	}
	if line > 0 && t.numbered {
		t.w.WriteString(t.w.Paint(strconv.FormatInt(line, 10), spec.PaintLine))
		t.w.WriteByte(sep)
	}
}

func (t *grepText) file(fr *FileResult) error {
	t.last = 0
	for _, m := range fr.Matches {
		first := m.Line
		if len(m.BeforeRaw) > 0 {
			first = m.BeforeRaw[0].Line
		}
		if t.context && t.printed && (t.last == 0 || first > t.last+1) {
			t.w.WriteString("--\n")
		}
		for _, b := range m.BeforeRaw {
			t.prefix(m.Path, b.Line, '-')
			t.w.Write(t.w.Content(b.Raw))
			t.w.WriteByte('\n')
		}
		t.prefix(m.Path, m.Line, ':')
		t.highlight(m)
		t.w.WriteByte('\n')
		t.last = m.Line
		for _, a := range m.AfterRaw {
			t.prefix(m.Path, a.Line, '-')
			t.w.Write(t.w.Content(a.Raw))
			t.w.WriteByte('\n')
			t.last = a.Line
		}
		t.printed = true
	}
	return nil
}

// highlight writes the line with its first match (the column grep found)
// painted.
func (t *grepText) highlight(m Match) {
	switch {
	case t.maxColumns > 0 && len(m.Raw) > t.maxColumns:
		t.w.WriteString("[Omitted long line with " + strconv.Itoa(len(m.Raw)) + " bytes]")
	case m.Only:
		t.w.WriteString(t.w.Paint(string(t.w.Content(m.Raw)), spec.PaintMatch))
	case m.Column == 0 || !t.painted:
		t.w.Write(t.w.Content(m.Raw))
	default:
		a, b := m.Column-1, m.Column-1+m.MatchLen
		t.w.Write(t.w.Content(m.Raw[:a]))
		t.w.WriteString(t.w.Paint(string(t.w.Content(m.Raw[a:b])), spec.PaintMatch))
		t.w.Write(t.w.Content(m.Raw[b:]))
	}
}
