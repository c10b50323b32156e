package ops

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// Registry describes every fsbox operation. The command line, the man
// pages, the completions, the tool schemas, explain and the policy's
// [commands] table are all generated from it.
// (Set in init: the descriptors' Run functions reach back to it.)
var Registry *spec.Registry

func init() {
	Registry = spec.NewRegistry(
		rootsOp, explainOp, readOp, lsOp, statOp, grepOp, wcOp, sliceOp, sortOp, cutOp, findOp,
		writeOp, editOp, patchOp, historyOp, purgeOp, undoOp, mkdirOp, mvOp, cpOp, rmOp, linksOp, toolsOp, completionOp, manOp, mcpOp,
	)
}

var (
	min0 = spec.Int64(0)
	min1 = spec.Int64(1)
)

// pathArg is the one PATH argument of most operations.
func pathArg(use spec.Use, help string) spec.Arg {
	return spec.Arg{Name: "path", Meta: "PATH", Help: help, Use: use, Complete: spec.CompleteFiles}
}

// stdinArg is the PATH of a filter: "-" (or, on the command line, nothing
// while stdin is a pipe or a file) reads standard input.
func stdinArg(help string) spec.Arg {
	a := pathArg(spec.ReadFile, help+"; - is standard input (the default on the command line when stdin is a pipe or a file)")
	a.Stdin = true
	return a
}

// Enabled reports whether the policy switches operation name on: its own
// entry in [commands], or the operation's default when the policy says
// nothing. An unknown name is never enabled.
func Enabled(p *sandbox.Policy, name string) bool { return EnabledIn(Registry, p, name) }

// EnabledIn is Enabled for the operations of reg.
func EnabledIn(reg *spec.Registry, p *sandbox.Policy, name string) bool {
	op, ok := reg.Lookup(name)
	if !ok {
		return false
	}
	if on, set := p.Commands[name]; set {
		return on
	}
	return !op.Off
}

// CommandEnabled reports whether the policy lets operation name run: its
// own switch and those of the operations it needs.
func CommandEnabled(p *sandbox.Policy, name string) bool { return CheckCommand(p, name) == nil }

// CheckPolicy refuses (config) a policy whose [commands] table names an
// operation that does not exist.
func CheckPolicy(p *sandbox.Policy) error { return CheckPolicyIn(Registry, p) }

// CheckPolicyIn is CheckPolicy for the operations of reg.
func CheckPolicyIn(reg *spec.Registry, p *sandbox.Policy) error {
	for name := range p.Commands {
		if _, ok := reg.Lookup(name); !ok {
			return sandbox.Errorf(sandbox.CodeConfig, p.Source, "%s: [commands]: unknown command %q (one of: %s)",
				policyName(p), name, strings.Join(reg.Names(), ", "))
		}
	}
	return nil
}

func policyName(p *sandbox.Policy) string {
	if p.Source == "" {
		return "the policy"
	}
	return p.Source
}

// CheckCommand refuses (denied, rule command) an operation the policy
// switches off, or one whose Needs are off. It is the check every
// operation's entry point runs and the one explain reports.
func CheckCommand(p *sandbox.Policy, name string) error { return CheckCommandIn(Registry, p, name) }

// CheckCommandIn is CheckCommand for the operations of reg.
func CheckCommandIn(reg *spec.Registry, p *sandbox.Policy, name string) error {
	if err := CheckPolicyIn(reg, p); err != nil {
		return err
	}
	off := func(msg string, args ...any) error {
		return &sandbox.Error{Code: sandbox.CodeDenied, Rule: sandbox.RuleCommand, Msg: fmt.Sprintf(msg, args...)}
	}
	op, ok := reg.Lookup(name)
	if !ok {
		return sandbox.Errorf(sandbox.CodeUsage, "", "unknown command %q (one of: %s)", name, strings.Join(reg.Names(), ", "))
	}
	if !EnabledIn(reg, p, name) {
		return off("the command %q is switched off by the policy", name)
	}
	for _, n := range op.Needs {
		if !EnabledIn(reg, p, n) {
			return off("%s creates directories and files, and the command %q is switched off by the policy", name, n)
		}
	}
	return nil
}

// begin is the first thing every operation does: a cancelled context
// ends it, and the policy's switch for the operation binds every caller,
// the command line and a Go program alike.
func begin(ctx context.Context, sb *sandbox.Sandbox, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sb.SetCommand(name) // the journal's records name it
	return CheckCommand(sb.Policy(), name)
}

var rootsOp = &spec.Op{
	Name: "roots", Class: spec.Meta, Result: RootsResult{}, Journal: true,
	Summary:  "show the policy in force: workdir, read roots, commands, limits",
	Help:     "Prints the policy this call runs under: the writable workdir, the read roots, where the policy came from, the commands it switches on and off, its limits and path rules, whether Landlock holds, and which of the platform's guarantees hold (descriptor_path_check, dir_lock, no_follow, no_replace_rename) and which the policy requires ([sandbox] require, all four by default: fsbox refuses to run, with config, where a required one is missing).",
	Examples: []spec.Example{{Cmd: "roots --format text", Says: "the workdir, read roots and commands, one per line"}},
	Text:     "tab-separated lines: workdir, read_root (one per root), config, audit_log, commands, landlock, guarantees, require, journal",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, _ *spec.Input) (any, error) {
		return Roots(ctx, sb)
	},
}

var explainOp = &spec.Op{
	Name: "explain", Class: spec.Meta, Result: Decision{}, Journal: true,
	Summary: "say whether COMMAND on PATH would be allowed, and which rule decides",
	Help:    "Runs the checks a real call of COMMAND on PATH would run, reading and changing nothing, and reports the first rule that refuses. For a command with two paths (mv, cp) it checks the one written. For patch, PATH is checked as a file a patch writes, and actions lists each kind of change a patch makes (update, add, delete, move, move_and_update) with the commands it needs and those the policy switches off. For undo, PATH is a change id: the answer is what undo of it would say (denied when the policy may not write one of its paths now). For purge (no PATH), how many changes it would remove and keep.",
	Args: []spec.Arg{
		{Name: "command", Meta: "COMMAND", Help: "the command to ask about", Complete: spec.CompleteCommands},
		{Name: "path", Meta: "PATH", Help: "the path the command would be given (undo: a change id; purge, roots and other commands without a path: none)", Optional: true, Complete: spec.CompleteFiles},
	},
	Examples: []spec.Example{{Cmd: "explain read /etc/passwd --format text", Says: "denied, rule root: the path lies outside every root"}},
	JSONNote: "exit 0 whatever the verdict",
	Text:     "one line: allowed|denied, the command, the path, the reason and the rule",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		reg := Registry
		if in.Reg != nil {
			reg = in.Reg // a face serving more operations asks about them
		}
		return ExplainIn(ctx, reg, sb, in.String("command"), in.String("path"))
	},
}

var readOp = &spec.Op{
	Name: "read", Class: spec.Read, Result: ReadResult{}, Limit: "max_read_bytes",
	Summary: "print a file's content, or a page of its lines",
	Help:    "Prints a text file whole, or LIMIT lines from line OFFSET. A file over max_read_bytes is refused unless read in pages. A UTF-8 BOM and CRLF line ends are reported, not changed.",
	Args:    []spec.Arg{stdinArg("the file to read")},
	Options: []spec.Option{
		{Name: "offset", Type: spec.Int, Meta: "N", Min: min0, Help: "first line to return, 0-based"},
		{Name: "limit", Type: spec.Int, Meta: "N", Min: min1, DefaultText: "all", Help: "number of lines to return"},
		{Name: "max-bytes", Type: spec.Int, Meta: "N", Unit: "bytes", Min: min1, Narrows: "max_read_bytes", Help: "largest file to read whole"},
		{Name: "encoding", Type: spec.String, Meta: "ENC", Default: "utf-8", Enum: []string{"utf-8", "base64"}, Help: "how content is given: utf-8 text, or base64 for a binary file"},
	},
	Examples: []spec.Example{
		{Cmd: "read main.go", Says: "the file as JSON, with its size, line count and SHA-256"},
		{Cmd: "read notes.txt --offset 1 --limit 2 --format text", Says: "lines 2 and 3, as sed -n 2,3p prints them"},
	},
	Text: "the selected bytes exactly as the file holds them (BOM and CRLF kept; base64 text with --encoding base64), as cat or sed -n would",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		o := ReadInput(in)
		o.RawOnly = in.Exact && o.Encoding != "base64" // a text form prints the bytes alone
		r, err := Read(ctx, sb, o)
		return &r, err
	},
}

// ReadInput is read's options from its descriptor's input (every face
// builds them here).
func ReadInput(in *spec.Input) ReadOptions {
	return ReadOptions{Path: in.String("path"), Offset: in.Int("offset"), Limit: in.Int("limit"),
		MaxBytes: in.Int("max-bytes"), Encoding: in.String("encoding")}
}

var lsOp = &spec.Op{
	Name: "ls", Class: spec.Read, Result: LsResult{},
	Summary:  "list a directory, sorted by name",
	Help:     "Lists DIR (the workdir when left out) sorted by name, with each entry's type, size, mode and mtime; a symlink is listed as itself.",
	Args:     []spec.Arg{{Name: "path", Meta: "DIR", Help: "the directory to list", Use: spec.ReadDir, Optional: true, Complete: spec.CompleteDirs}},
	Options:  []spec.Option{{Name: "all", Short: "a", Type: spec.Bool, Help: "include names starting with a dot"}},
	Examples: []spec.Example{{Cmd: "ls src --format text", Says: "one name a line, as ls -1"}},
	Text:     "one name a line, as ls -1",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		dir := "."
		if in.IsSet("path") {
			dir = in.String("path")
		}
		return Ls(ctx, sb, LsOptions{Path: dir, All: in.Bool("all")})
	},
}

var statOp = &spec.Op{
	Name: "stat", Class: spec.Read, Result: StatResult{},
	Summary:  "describe a path (a symlink as itself); a missing path is exists:false",
	Help:     "Describes PATH without following a final symlink: its type, size, mode, mtime and, for a symlink, its target. A path that does not exist is no error: exists is false.",
	Args:     []spec.Arg{pathArg(spec.Look, "the path to describe")},
	Options:  []spec.Option{{Name: "sha256", Type: spec.Bool, Help: "add the SHA-256 of a regular file's content"}},
	Examples: []spec.Example{{Cmd: "stat main.go --sha256", Says: "type, size, mode, mtime and content hash"}},
	Text:     "one tab-separated line: path type size mode mtime [-> target] [sha256]",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		return Stat(ctx, sb, StatOptions{Path: in.String("path"), SHA256: in.Bool("sha256")})
	},
}

var grepOp = &spec.Op{
	Name: "grep", Class: spec.Read, Result: GrepResult{},
	Streams: true,
	Summary: "search files and trees for an RE2 pattern, honouring .gitignore",
	Help:    "Searches each PATH (the workdir when none is given) for lines matching PATTERN, an RE2 regular expression. Directories are walked in path order, honouring .gitignore, .ignore and .git/info/exclude and leaving out hidden names; a file named on the command line is always searched. Binary files are skipped and counted. A file of 32 MiB or more is searched through bounded windows mapped from the page cache, on every core; if it is truncated or written during the search the result is an io error, never a mix of two versions.",
	Args: []spec.Arg{
		{Name: "pattern", Meta: "PATTERN", Help: "an RE2 regular expression (a literal string with fixed_strings)", OmitWith: []string{"regexp", "file"}},
		{Name: "paths", Meta: "PATH", Help: "files or directories to search; - is standard input (the default on the command line when stdin is a pipe or a file, else the workdir)", Use: spec.ReadAny, Many: true, Optional: true, Stdin: true, Complete: spec.CompleteFiles},
	},
	Options: []spec.Option{
		{Name: "ignore-case", Short: "i", Type: spec.Bool, Help: "match case-insensitively"},
		{Name: "fixed-strings", Short: "F", Type: spec.Bool, Help: "PATTERN is a literal string"},
		{Name: "word-regexp", Short: "w", Type: spec.Bool, Help: "match whole words only"},
		{Name: "invert-match", Short: "v", Type: spec.Bool, Help: "select lines that do not match"},
		{Name: "regexp", Short: "e", Type: spec.Strings, Meta: "PATTERN", CLIOnly: true, Help: "a pattern (repeatable: a line matches when any does); PATTERN is then no argument"},
		{Name: "file", Short: "f", Type: spec.String, Meta: "FILE", CLIOnly: true, Complete: spec.CompleteFiles, Help: "read patterns from FILE, one a line (an empty file matches nothing); PATTERN is then no argument"},
		{Name: "line-regexp", Short: "x", Type: spec.Bool, Help: "match whole lines only"},
		{Name: "only-matching", Short: "o", Type: spec.Bool, Help: "give each match alone: its text is the match, column where it starts (the line count stays)"},
		{Name: "quiet", Short: "q", Type: spec.Bool, CLIOnly: true, Help: "print nothing; exit 0 at the first match, 1 when there is none"},
		{Name: "extended-regexp", Short: "E", Type: spec.Bool, CLIOnly: true, Help: "accepted for GNU grep: patterns are always RE2, which is extended syntax"},
		{Name: "recursive", Short: "r", Type: spec.Bool, CLIOnly: true, Help: "accepted for GNU grep: directories are always searched recursively"},
		{Name: "dereference-recursive", Short: "R", Type: spec.Bool, CLIOnly: true, Help: "as GNU grep -R: recursive, following symlinks (the same as --follow)"},
		{Name: "max-columns", Type: spec.Int, Meta: "N", Min: min1, CLIOnly: true, Help: "in the text form, print a line longer than N bytes as a note, as rg does (JSON cuts at max_line_bytes)"},
		{Name: "numbered", Short: "n", Aliases: []string{"line-number"}, Type: spec.Bool, CLIOnly: true, Help: "prefix each line of the text form with its number (JSON always has it)"},
		{Name: "no-filename", Short: "h", Type: spec.Bool, CLIOnly: true, Help: "never prefix lines of the text form with the file name"},
		{Name: "with-filename", Short: "H", Type: spec.Bool, CLIOnly: true, Help: "always prefix lines of the text form with the file name"},
		{Name: "count", Short: "c", Type: spec.Bool, Help: "count matching lines per file instead of listing them"},
		{Name: "files-with-matches", Short: "l", Type: spec.Bool, Help: "list the files that match instead of the lines"},
		{Name: "after-context", Short: "A", Type: spec.Int, Meta: "N", Min: min0, Help: "show N lines after each match"},
		{Name: "before-context", Short: "B", Type: spec.Int, Meta: "N", Min: min0, Help: "show N lines before each match"},
		{Name: "context", Short: "C", Type: spec.Int, Meta: "N", Min: min0, Help: "show N lines before and after each match"},
		{Name: "max-count", Short: "m", Type: spec.Int, Meta: "N", Min: min0, DefaultText: "no limit", Help: "stop searching a file after N matching lines (0: print nothing, as GNU grep and rg)"},
		{Name: "limit", Type: spec.Int, Meta: "N", Unit: "matches", Min: min1, Narrows: "max_results", Help: "stop after N matches in all"},
		{Name: "glob", Short: "g", Type: spec.Strings, Meta: "GLOB", Help: "search only files matching GLOB; !GLOB leaves files out (repeatable)"},
		{Name: "hidden", Type: spec.Bool, Help: "search names starting with a dot"},
		{Name: "no-ignore", Type: spec.Bool, Help: "do not honour .gitignore, .ignore and .git/info/exclude"},
		{Name: "follow", Short: "L", Type: spec.Bool, Help: "follow symlinks (never out of their root, never in a loop)"},
	},
	Examples: []spec.Example{
		{Cmd: "grep -n TODO . --format text", Says: "every TODO under the workdir, as grep -rn prints it"},
		{Cmd: "grep -c -i todo src", Says: "matching lines per file, ignoring case"},
	},
	JSONNote: "-c gives counts[{path, count}] and -l paths[] in place of matches; exit 1 when nothing matches",
	Text:     "path:line:text with -n, path:text without (no path for one named file, or with -h), context lines with '-', groups split by '--'; -c path:count; -l one path a line; colors on a terminal",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		if err := begin(ctx, sb, "grep"); err != nil {
			return nil, err // before a pattern file is read
		}
		o, err := GrepInput(sb, in)
		if err != nil {
			return nil, err
		}
		o.Exact = in.Exact
		if in.Bool("quiet") {
			// -q: nothing printed; the first match ends the search.
			o.Limit, o.Count, o.FilesWithMatches, o.OnlyMatching = 1, false, true, false
			r, err := Grep(ctx, sb, o)
			r.quiet = true
			return r, err
		}
		o.Sink = grepSink(in.Sink, sb, in, o)
		return Grep(ctx, sb, o)
	},
}

// GrepInput turns a grep input into options (Run adds the face's sink).
func GrepInput(sb *sandbox.Sandbox, in *spec.Input) (GrepOptions, error) {
	o := GrepOptions{LineRegexp: in.Bool("line-regexp"), OnlyMatching: in.Bool("only-matching"), Pattern: in.String("pattern"), Paths: in.Strings("paths"), IgnoreCase: in.Bool("ignore-case"), Fixed: in.Bool("fixed-strings"),
		Word: in.Bool("word-regexp"), Invert: in.Bool("invert-match"), Count: in.Bool("count"), FilesWithMatches: in.Bool("files-with-matches"),
		Before: int(in.Int("before-context")), After: int(in.Int("after-context")), Limit: in.Int("limit"),
		Globs: in.Strings("glob"), Hidden: in.Bool("hidden"), NoIgnore: in.Bool("no-ignore"), Follow: in.Bool("follow") || in.Bool("dereference-recursive")}
	if in.IsSet("regexp") || in.IsSet("file") {
		o.Patterns = append([]string{}, in.Strings("regexp")...)
		if in.IsSet("file") {
			f, err := openInput(sb, in.String("file"))
			if err != nil {
				return o, err
			}
			data, err := io.ReadAll(io.LimitReader(f, sb.Limits().MaxReadBytes+1))
			f.Close()
			if err != nil {
				return o, sandbox.AsError(err)
			}
			if int64(len(data)) > sb.Limits().MaxReadBytes {
				return o, sandbox.Errorf(sandbox.CodeTooLarge, in.String("file"), "the pattern file %s is over max_read_bytes = %d", in.String("file"), sb.Limits().MaxReadBytes)
			}
			for _, l := range strings.SplitAfter(string(data), "\n") {
				if l != "" {
					o.Patterns = append(o.Patterns, strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r"))
				}
			}
		}
		o.Pattern = strings.Join(o.Patterns, "\n")
	}
	if in.IsSet("max-count") {
		m := in.Int("max-count")
		o.MaxCount = &m
	}
	if in.IsSet("context") {
		if !in.IsSet("before-context") {
			o.Before = int(in.Int("context"))
		}
		if !in.IsSet("after-context") {
			o.After = int(in.Int("context"))
		}
	}
	if o.Count && o.FilesWithMatches {
		return o, usageErr("count and files-with-matches do not go together")
	}
	if in.Bool("no-filename") && in.Bool("with-filename") {
		return o, usageErr("no-filename and with-filename do not go together")
	}
	return o, nil
}

var wcOp = &spec.Op{
	Name: "wc", Class: spec.Read, Result: WcResult{},
	Summary: "count lines, words, bytes and characters",
	Help:    "Counts each file's lines, words (runs of non-space), bytes and UTF-8 characters, as wc -lwmc, with a total.",
	Args:    []spec.Arg{{Name: "paths", Meta: "PATH", Help: "the files to count; - is standard input (the default on the command line when stdin is a pipe or a file)", Use: spec.ReadFile, Many: true, Stdin: true, Complete: spec.CompleteFiles}},
	Options: []spec.Option{
		{Name: "lines", Short: "l", Type: spec.Bool, CLIOnly: true, Help: "the text form prints the line count (JSON always has all four)"},
		{Name: "words", Short: "w", Type: spec.Bool, CLIOnly: true, Help: "the text form prints the word count"},
		{Name: "chars", Short: "m", Type: spec.Bool, CLIOnly: true, Help: "the text form prints the character count"},
		{Name: "bytes", Short: "c", Type: spec.Bool, CLIOnly: true, Help: "the text form prints the byte count"},
	},
	Examples: []spec.Example{{Cmd: "wc main.go notes.txt --format text", Says: "lines words chars bytes per file, and a total"}},
	Text:     "lines words chars bytes path (or only those -l -w -m -c select, in that order), one line per file, and a total line for several; columns padded as GNU wc 9.1",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		r, err := Wc(ctx, sb, WcOptions{Paths: in.Strings("paths")})
		// -l -w -m -c select what the text form prints, in wc's order.
		for _, n := range []string{"lines", "words", "chars", "bytes"} {
			if in.Bool(n) {
				r.show = append(r.show, n)
			}
		}
		return r, err
	},
}

var sliceOp = &spec.Op{
	Name: "slice", Class: spec.Read, Result: SliceResult{},
	Streams: true,
	Summary: "select lines START to END, as Python's lines[START:END] (negatives count from the end)",
	Help:    "Selects the lines from START (0-based) up to, not including, END. A negative START or END counts from the end of the file: slice f -10 is tail -n 10.",
	Args: []spec.Arg{
		stdinArg("the file to take lines from (standard input takes non-negative bounds only)"),
		{Name: "start", Meta: "START", Type: spec.Int, Optional: true, Flag: true, Help: "first line, 0-based; negative counts from the end"},
		{Name: "end", Meta: "END", Type: spec.Int, Optional: true, Flag: true, Help: "line to stop before; negative counts from the end"},
	},
	Examples: []spec.Example{{Cmd: "slice notes.txt -2 --format text", Says: "the last two lines, as tail -n 2"}},
	Text:     "the lines exactly as the file holds them",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		o := SliceInput(in)
		o.Sink = lineSink(in.Sink)
		o.Exact = in.Exact
		return Slice(ctx, sb, o)
	},
}

// SliceInput turns a slice input into options.
func SliceInput(in *spec.Input) SliceOptions {
	o := SliceOptions{Path: in.String("path")}
	if in.IsSet("start") {
		v := in.Int("start")
		o.Start = &v
	}
	if in.IsSet("end") {
		v := in.Int("end")
		o.End = &v
	}
	return o
}

var sortOp = &spec.Op{
	Name: "sort", Class: spec.Read, Result: SortResult{}, Limit: "max_sort_bytes",
	Streams: true,
	Summary: "sort a file's lines (byte order, as LC_ALL=C sort)",
	Help:    "Sorts a file's lines in byte order, as LC_ALL=C sort does; the sort is stable. Files over max_sort_bytes are refused.",
	Args:    []spec.Arg{stdinArg("the file to sort")},
	Options: []spec.Option{
		{Name: "reverse", Short: "r", Type: spec.Bool, Help: "reverse the order"},
		{Name: "numeric", Short: "n", Type: spec.Bool, Help: "compare leading numbers, as sort -n"},
		{Name: "human-numeric", Short: "h", Type: spec.Bool, CLIOnly: true, Help: "GNU sort -h; refused (usage): fsbox does not compare SI suffixes"},
		{Name: "ignore-case", Short: "f", Type: spec.Bool, Help: "fold lower case to upper case (ASCII)"},
		{Name: "unique", Short: "u", Type: spec.Bool, Help: "keep the first of lines with equal keys"},
		{Name: "key", Short: "k", Type: spec.Strings, Meta: "POS1[,POS2]", Help: "sort on a key, as GNU sort -k (repeatable: the first key decides, then the next): POS is F[.C][OPTS], field F and byte C 1-based, OPTS from n, f, r, b; without POS2 the key runs to the line's end"},
		{Name: "stable", Short: "s", Type: spec.Bool, Help: "keep lines with equal keys in input order (no last-resort whole-line comparison)"},
		{Name: "separator", Short: "t", Type: spec.String, Meta: "SEP", DefaultText: "blanks", Help: "field separator for key"},
	},
	Examples: []spec.Example{{Cmd: "sort -u notes.txt --format text", Says: "the distinct lines, sorted"}},
	Text:     "the sorted lines, each ended by a newline, as GNU sort",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		o, err := SortInput(in)
		if err != nil {
			return nil, err
		}
		o.Sink = lineSink(in.Sink)
		o.Exact = in.Exact
		return Sort(ctx, sb, o)
	},
}

// SortInput turns a sort input into options.
func SortInput(in *spec.Input) (SortOptions, error) {
	o := SortOptions{Path: in.String("path"), Reverse: in.Bool("reverse"), Numeric: in.Bool("numeric"),
		IgnoreCase: in.Bool("ignore-case"), Unique: in.Bool("unique"), Keys: in.Strings("key"), Stable: in.Bool("stable"), Separator: in.String("separator")}
	if in.IsSet("separator") && o.Separator == "" {
		return o, usageErr("separator must not be empty")
	}
	if in.Bool("human-numeric") {
		return o, sandbox.Errorf(sandbox.CodeUsage, "", "human-numeric sort (GNU's) is not supported:").WithHint(sandbox.Hint{Option: "numeric", Short: true, Text: "%s compares plain numbers"})
	}
	return o, nil
}

var cutOp = &spec.Op{
	Name: "cut", Class: spec.Read, Result: CutResult{},
	Streams: true,
	Summary: "select fields from each line",
	Help:    "Keeps the listed fields of each line, split at a delimiter (a tab unless told), at an RE2 pattern with regex, or as RFC 4180 CSV records with csv.",
	Args:    []spec.Arg{stdinArg("the file to cut")},
	Options: []spec.Option{
		{Name: "fields", Short: "f", Type: spec.String, Meta: "LIST", ToolRequired: true, Help: "fields to keep, 1-based: 1,3 or 2-4 or 3- (required)"},
		{Name: "delimiter", Short: "d", Type: spec.String, Meta: "DELIM", DefaultText: "tab; comma with csv", Help: "field delimiter"},
		{Name: "regex", Type: spec.Bool, Help: "the delimiter is an RE2 regular expression"},
		{Name: "csv", Type: spec.Bool, Help: "parse RFC 4180 CSV (quoted fields, embedded delimiters and newlines)"},
		{Name: "only-delimited", Short: "s", Type: spec.Bool, Help: "drop lines without the delimiter"},
		{Name: "output-delimiter", Type: spec.String, Meta: "DELIM", CLIOnly: true, DefaultText: "the delimiter; tab with regex", Help: "join the fields of the text form with DELIM"},
	},
	Examples: []spec.Example{{Cmd: "cut --csv -f 1 data.csv --format text", Says: "the first column of a CSV file"}},
	Text:     "the fields joined by the delimiter (or --output-delimiter), as cut; CSV re-quoted with --csv",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		o, err := CutInput(in)
		if err != nil {
			return nil, err
		}
		o.Exact = in.Exact
		o.Sink = rowSink(in.Sink, in, o)
		return Cut(ctx, sb, o)
	},
}

// CutInput turns a cut input into options.
func CutInput(in *spec.Input) (CutOptions, error) {
	o := CutOptions{Path: in.String("path"), Fields: in.String("fields"), Delimiter: in.String("delimiter"),
		Regex: in.Bool("regex"), CSV: in.Bool("csv"), OnlyDelimited: in.Bool("only-delimited")}
	if !in.IsSet("fields") {
		return o, sandbox.Errorf(sandbox.CodeUsage, "", "cut needs fields").WithHint(sandbox.Hint{Option: "fields", Short: true, Text: "(%s LIST), such as 1,3 or 2-"})
	}
	if in.IsSet("delimiter") && o.Delimiter == "" {
		return o, usageErr("delimiter must not be empty")
	}
	return o, nil
}

var findOp = &spec.Op{
	Name: "find", Class: spec.Read, Result: FindResult{},
	Streams: true,
	Summary: "list paths below DIR matching a glob, honouring .gitignore",
	Help:    "Lists the paths below DIR (the workdir when left out) in path order, honouring ignore files and leaving out hidden names. GLOB is a doublestar glob: without '/' it matches the base name, as fd -g. One argument with glob characters is a GLOB, else a DIR.",
	Args: []spec.Arg{
		{Name: "dir", Meta: "DIR", Help: "the directory to walk", Use: spec.ReadDir, Optional: true, Complete: spec.CompleteDirs},
		{Name: "glob", Meta: "GLOB", Help: "keep only paths matching this glob", Optional: true, Complete: spec.CompleteNone},
	},
	Options: []spec.Option{
		{Name: "max-depth", Type: spec.Int, Meta: "N", Min: min0, DefaultText: "no limit", Help: "deepest level to list (DIR's entries are 1)"},
		{Name: "type", Short: "t", Type: spec.String, Meta: "TYPE", Enum: []string{"f", "d", "l"}, Help: "only f (files), d (directories) or l (symlinks)"},
		{Name: "exclude", Short: "E", Type: spec.Strings, Meta: "GLOB", Help: "leave out paths matching GLOB (repeatable); excluded directories are not entered"},
		{Name: "hidden", Type: spec.Bool, Help: "include names starting with a dot"},
		{Name: "no-ignore", Type: spec.Bool, Help: "do not honour .gitignore, .ignore and .git/info/exclude"},
		{Name: "follow", Short: "L", Type: spec.Bool, Help: "follow symlinks (never out of their root, never in a loop)"},
	},
	Examples: []spec.Example{{Cmd: "find . '*.go' --format text", Says: "every Go file under the workdir, as fd -g '*.go'"}},
	Text:     "one path a line, as find or fd",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		o := FindInput(in)
		o.TypedSink = pathSink(in.Sink)
		return Find(ctx, sb, o)
	},
}

// FindInput turns a find input into options.
func FindInput(in *spec.Input) FindOptions {
	o := FindOptions{MaxDepth: -1, Type: in.String("type"), Exclude: in.Strings("exclude"),
		Hidden: in.Bool("hidden"), NoIgnore: in.Bool("no-ignore"), Follow: in.Bool("follow"), Dir: ".", Glob: in.String("glob")}
	if in.IsSet("max-depth") {
		o.MaxDepth = int(in.Int("max-depth"))
	}
	if in.IsSet("dir") {
		o.Dir = in.String("dir")
		// One argument: a glob if it has glob characters, else a directory.
		if !in.IsSet("glob") && strings.ContainsAny(o.Dir, "*?[{") {
			o.Dir, o.Glob = ".", o.Dir
		}
	}
	return o
}

var writeOp = &spec.Op{
	Name: "write", Class: spec.Destructive, Result: WriteResult{}, Idempotent: true,
	Summary: "write a file atomically from --content or stdin (parents created)",
	Help:    "Writes PATH in the workdir atomically: the new content goes to a temporary file that replaces PATH only when complete. Missing parent directories are created; an existing file keeps its mode unless mode is given. Content over max_write_bytes is too_large, whether it is given as content or on stdin.",
	Args: []spec.Arg{
		pathArg(spec.Change, "the file to write"),
		{Name: "stdin", Meta: "-", Help: "read the content from stdin", Optional: true, CLIOnly: true, Complete: spec.CompleteNone},
	},
	Options: []spec.Option{
		{Name: "content", Type: spec.String, Meta: "TEXT", ToolRequired: true, Help: "the content, taken literally (empty: an empty file); on the command line, stdin when left out"},
		{Name: "append", Type: spec.Bool, Help: "append instead of replacing"},
		{Name: "no-clobber", Type: spec.Bool, Help: "refuse (exists) if the file exists"},
		{Name: "expect-sha256", Type: spec.String, Meta: "HEX", Help: "refuse (conflict) unless the current content has this SHA-256"},
		{Name: "mode", Type: spec.String, Meta: "OCTAL", DefaultText: "keep; 0666 less umask when new", Help: "permission bits, octal 0 to 0777"},
	},
	Examples: []spec.Example{{Cmd: "write out/hello.txt --content 'hello' --format text", Says: "the file's SHA-256 and path, as sha256sum prints them"}},
	Text:     "SHA256  PATH, the line sha256sum prints, so sha256sum -c can check it",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		o := WriteOptions{Path: in.String("path"), Append: in.Bool("append"), NoClobber: in.Bool("no-clobber"), ExpectSHA256: in.String("expect-sha256")}
		if err := begin(ctx, sb, "write"); err != nil {
			return nil, err // before stdin is read
		}
		content, err := writeContent(sb, in)
		if err != nil {
			return nil, err
		}
		o.Content = content
		if in.IsSet("mode") {
			m, err := ParseMode(in.String("mode"))
			if err != nil {
				return nil, err
			}
			o.Mode = &m
		}
		return Write(ctx, sb, o)
	},
}

// writeContent picks write's content. content is taken as given (even
// "-" or ""); a second operand "-" reads stdin whatever it is, as cat
// reads "-"; with neither, stdin is read only when the face passed it
// (the command line does when it is a pipe or socket or a regular file:
// a terminal would wait forever, and /dev/null, what exec tools often
// give, would silently empty the file).
func writeContent(sb *sandbox.Sandbox, in *spec.Input) (io.Reader, error) {
	dash, given := in.IsSet("stdin"), in.IsSet("content")
	switch {
	case dash && in.String("stdin") != sandbox.StdinPath:
		return nil, usageErr("usage: fsbox write PATH [-]: the only operand after PATH is -, to read the content from stdin")
	case dash && given:
		return nil, sandbox.Errorf(sandbox.CodeUsage, "", "write takes its content from").WithHint(sandbox.Hint{Option: "content", Text: "%s or from stdin (-), not both"})
	case given:
		return strings.NewReader(in.String("content")), nil
	case dash && !sb.HasStdin():
		return strings.NewReader(""), nil
	case dash:
		return sb.OpenStdin()
	case in.Stdin != nil:
		return in.Stdin, nil
	}
	return nil, sandbox.Errorf(sandbox.CodeUsage, "", "write needs content:").WithHint(sandbox.Hint{Option: "content", Text: "give %[1]s TEXT (%[1]s '' for an empty file) or pipe the content (stdin is not a pipe or a file; - after PATH reads it anyway)"})
}

var editOp = &spec.Op{
	Name: "edit", Class: spec.Destructive, Result: EditResult{},
	Summary: "replace exact text in a file (atomic; CRLF, BOM and mode kept)",
	Help:    "Replaces OLD with NEW in PATH. OLD must occur exactly once unless all is given; several edits are matched against the original text, must not overlap, and apply together or not at all. The result shows the unified diff. An old or new text over max_write_bytes is too_large, however it is given.",
	Args:    []spec.Arg{pathArg(spec.Change, "the file to edit")},
	Options: []spec.Option{
		{Name: "old", Type: spec.String, Meta: "TEXT", Help: "the exact text to replace"},
		{Name: "new", Type: spec.String, Meta: "TEXT", Help: "the text to put in its place (empty: delete)"},
		{Name: "old-file", Type: spec.String, Meta: "FILE", CLIOnly: true, Complete: spec.CompleteFiles, Help: "read the old text from FILE"},
		{Name: "new-file", Type: spec.String, Meta: "FILE", CLIOnly: true, Complete: spec.CompleteFiles, Help: "read the new text from FILE"},
		{Name: "edits", Type: spec.Objects, Meta: "JSON", Help: `several edits, each {"old", "new", "all"}, applied together`, Fields: []spec.Option{
			{Name: "old", Type: spec.String, ToolRequired: true, Help: "the exact text to replace"},
			{Name: "new", Type: spec.String, ToolRequired: true, Help: "the text to put in its place"},
			{Name: "all", Type: spec.Bool, Help: "replace every occurrence"},
		}},
		{Name: "all", Type: spec.Bool, Help: "replace every occurrence"},
		{Name: "dry-run", Type: spec.Bool, Help: "show the diff, change nothing"},
		{Name: "expect-sha256", Type: spec.String, Meta: "HEX", Help: "refuse (conflict) unless the current content has this SHA-256"},
	},
	Examples: []spec.Example{{Cmd: "edit main.go --old 'TODO: flags' --new 'DONE: flags' --dry-run --format text", Says: "the diff the edit would make"}},
	Text:     "the unified diff",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
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
	o := EditOptions{Path: in.String("path"), DryRun: in.Bool("dry-run"), ExpectSHA256: in.String("expect-sha256")}
	if in.IsSet("edits") {
		if in.IsSet("old") || in.IsSet("new") || in.IsSet("old-file") || in.IsSet("new-file") || in.IsSet("all") {
			return o, usageErr("edits does not go with old, new or all")
		}
		err := in.Decode("edits", &o.Edits)
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
	return o, nil
}

var mkdirOp = &spec.Op{
	Name: "mkdir", Class: spec.Write, Result: MkdirResult{}, Idempotent: true,
	Summary:  "create a directory and its parents in the workdir",
	Help:     "Creates DIR in the workdir and any missing parents, one at a time; an existing directory is no error (created is false).",
	Args:     []spec.Arg{{Name: "path", Meta: "DIR", Help: "the directory to create", Use: spec.Make, Complete: spec.CompleteDirs}},
	Options:  []spec.Option{{Name: "parents", Short: "p", Type: spec.Bool, CLIOnly: true, Help: "accepted for mkdir -p: parents are always made, and an existing directory is no error"}},
	Examples: []spec.Example{{Cmd: "mkdir build/logs --format text", Says: "the directory's path, as mkdir -v names it"}},
	Text:     "the directory's path, as mkdir -v names it",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		return Mkdir(ctx, sb, in.String("path"))
	},
}

var forceOpt = spec.Option{Name: "force", Short: "f", Type: spec.Bool, Help: "replace an existing DST"}

var mvOp = &spec.Op{
	Name: "mv", Class: spec.Destructive, Result: MoveResult{},
	Summary: "move or rename within the workdir",
	Help:    "Renames SRC to DST, both in the workdir; an existing DST is refused (exists) unless force is given.",
	Args: []spec.Arg{
		{Name: "src", Meta: "SRC", Help: "what to move", Use: spec.Entry, Complete: spec.CompleteFiles},
		{Name: "dst", Meta: "DST", Help: "where it goes", Use: spec.Entry, Complete: spec.CompleteFiles},
	},
	Options:  []spec.Option{forceOpt},
	Examples: []spec.Example{{Cmd: "mv notes.txt notes.md --format text", Says: "FROM -> TO, as mv -v"}},
	Text:     "FROM -> TO, as mv -v",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		return Move(ctx, sb, in.String("src"), in.String("dst"), in.Bool("force"))
	},
}

var cpOp = &spec.Op{
	Name: "cp", Class: spec.Destructive, Result: CopyResult{}, Idempotent: true,
	Summary: "copy a readable file into the workdir (atomic)",
	Help:    "Copies the regular file SRC (anywhere readable) to DST in the workdir, atomically; an existing DST is refused (exists) unless force is given.",
	Args: []spec.Arg{
		{Name: "src", Meta: "SRC", Help: "the file to copy", Use: spec.ReadFile, Complete: spec.CompleteFiles},
		{Name: "dst", Meta: "DST", Help: "the copy's path", Use: spec.Change, Complete: spec.CompleteFiles},
	},
	Options:  []spec.Option{forceOpt},
	Examples: []spec.Example{{Cmd: "cp main.go main.go.orig --format text", Says: "FROM -> TO, as cp -v"}},
	Text:     "FROM -> TO, as cp -v",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		return Copy(ctx, sb, in.String("src"), in.String("dst"), in.Bool("force"))
	},
}

var rmOp = &spec.Op{
	Name: "rm", Class: spec.Destructive, Result: RemoveResult{}, Off: true,
	Summary:  "remove a file, a symlink, or (-r) a tree in the workdir; off unless the policy turns it on",
	Help:     "Removes PATH from the workdir: a file, a symlink (never what it points to) or, with recursive, a directory tree. A missing PATH is no error (removed is false). The built-in policy switches rm off.",
	Args:     []spec.Arg{pathArg(spec.Entry, "what to remove")},
	Options:  []spec.Option{{Name: "recursive", Short: "r", Type: spec.Bool, Help: "remove a directory and everything below"}},
	Examples: []spec.Example{{Cmd: "rm -r build --format text", Says: "the removed path, as rm -v names it"}},
	Text:     "the removed path, as rm -v names it",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		return Remove(ctx, sb, in.String("path"), in.Bool("recursive"))
	},
}

var linksOp = &spec.Op{
	Name: "links", Class: spec.Write, Result: LinksResult{}, Idempotent: true, NoTool: true, Needs: []string{"mkdir", "write"},
	Summary:  "create fsbox-COMMAND links to this binary in DIR (inside the workdir)",
	Help:     "Creates one symlink per command in DIR, named PREFIX followed by the command, pointing at this binary, so fsbox-grep runs fsbox grep. It needs mkdir and write on as well.",
	Args:     []spec.Arg{{Name: "dir", Meta: "DIR", Help: "where to put the links", Use: spec.Make, Complete: spec.CompleteDirs}},
	Options:  []spec.Option{{Name: "prefix", Type: spec.String, Meta: "PREFIX", Default: "fsbox-", Help: "name prefix of each link (empty: bare command names)"}},
	Examples: []spec.Example{{Cmd: "links bin --format text", Says: "one link path a line"}},
	Text:     "one link path a line",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		return Links(ctx, sb, in.String("dir"), in.String("prefix"), Registry.Names())
	},
}

var toolsOp = &spec.Op{
	Name: "tools", Class: spec.Meta, NoTool: true,
	Summary:  "describe every enabled command as a tool (JSON Schema inputs and outputs, MCP/OpenAI shape)",
	Help:     "Prints one tool per enabled command, with a JSON Schema (draft 2020-12) for its input and its output and MCP's annotations. A host runs a tool as: fsbox COMMAND --flag value ... -- ARGS..., or passes the arguments as JSON.",
	Examples: []spec.Example{{Cmd: "tools", Says: "the tool list, as JSON"}},
	Text:     "the same JSON: a tool list is for programs",
}

var completionOp = &spec.Op{
	Name: "completion", Class: spec.Meta, NoTool: true, NoPolicy: true,
	Summary:  "print the completion script for bash, zsh or fish",
	Help:     "Prints a completion script: source it, or install it where the shell looks (see the README).",
	Args:     []spec.Arg{{Name: "shell", Meta: "SHELL", Help: "the shell", Enum: []string{"bash", "zsh", "fish"}}},
	Examples: []spec.Example{{Cmd: "completion bash", Says: "the bash completion script"}},
	JSONNote: "not JSON: the script",
	Text:     "the completion script",
}

var manOp = &spec.Op{
	Name: "man", Class: spec.Meta, NoTool: true, NoPolicy: true,
	Summary:  "print the man page (roff) of fsbox or of one command",
	Help:     "Prints fsbox(1), or fsbox-COMMAND(1), in roff: pipe it to man -l -.",
	Args:     []spec.Arg{{Name: "command", Meta: "COMMAND", Help: "the command", Optional: true, Complete: spec.CompleteCommands}},
	Examples: []spec.Example{{Cmd: "man grep", Says: "fsbox-grep(1) in roff"}},
	JSONNote: "not JSON: the roff page",
	Text:     "the roff man page",
}

var mcpOp = &spec.Op{
	Name: "mcp", Class: spec.Meta, NoTool: true, NoPolicy: true,
	Summary: "serve the enabled commands as MCP tools over stdio (or loopback HTTP)",
	Help: "Serves the Model Context Protocol on stdin and stdout: one tool per command the policy enables, with the input and output schemas of fsbox tools, results as structuredContent plus one text block, errors as isError results with the same {code, message, path, rule}. " +
		"It never serves the built-in default policy: set FSBOX_CONFIG, give --config, or name the directories (the first is the workdir, the rest read roots; with a policy they only narrow it). " +
		"The policy is loaded once and Landlock applied once; roots a client announces narrow the served roots, never widen them; a cancelled call stops its walk. " +
		"The server is built into fsbox-full, installed beside fsbox, which fsbox mcp runs in its place (so the MCP SDK's start-up cost is not paid by every other command).",
	Args: []spec.Arg{{Name: "dirs", Meta: "DIR", Help: "directories to serve: the workdir, then read roots", Many: true, Optional: true, Complete: spec.CompleteDirs}},
	Options: []spec.Option{
		{Name: "profile", Type: spec.String, Meta: "PROFILE", Default: "native", Enum: []string{"native", "reference"}, Help: "tool names and arguments: native (fsbox_COMMAND, as fsbox tools prints them) or reference (the reference MCP filesystem server's)"},
		{Name: "http", Type: spec.String, Meta: "ADDR", Help: "serve streamable HTTP on a loopback ADDR (host:port) instead of stdio; needs FSBOX_MCP_TOKEN, which every request must carry as a bearer token"},
	},
	Examples: []spec.Example{
		{Cmd: "mcp ~/src/project ~/docs", Says: "serve ~/src/project (writable) and ~/docs (read-only) to an MCP host over stdio", Serves: true},
		{Cmd: "mcp --profile reference ~/src/project", Says: "a drop-in for the reference filesystem server", Serves: true},
	},
	JSONNote: "not JSON on stdout: the MCP protocol",
	Text:     "the MCP protocol",
}

var patchOp = &spec.Op{
	Name: "patch", Class: spec.Destructive, Result: PatchResult{},
	Summary: "apply a multi-file patch all or nothing (the *** Begin Patch envelope, or a unified diff)",
	Help: "Applies a patch to files in the workdir as one change: every file lands, or none does. The patch is the envelope agents emit (*** Begin Patch ... *** End Patch, with Add File, Update File with an optional Move to, Delete File, @@ hunks with optional anchor text, *** End of File) or a unified diff as diff -u and git diff write it (several files, new and deleted files, renames, no-newline markers); the format is detected. " +
		"The patch text is capped by max_write_bytes however it arrives (argument, file, stdin, tool argument): over it, too_large. Besides patch, each change needs its command switched on: an update edit, an add write, a delete rm, a rename mv (and edit too when it also changes the content or the mode); a change whose command is off is denied (rule command), and explain patch PATH lists them. " +
		"Every path is checked as write checks it (deny and write_deny on old and new names); every hunk is applied in memory first, matched exactly, else ignoring trailing whitespace, else line endings, never re-indented; a hunk that matches nowhere is text_not_found with the closest lines, one that matches in several places is placed by its line numbers or anchors, else ambiguous. Then all files are swapped in under the workdir's lock, each re-checked to be what was read (conflict otherwise, and nothing changes). Line endings, BOM, final newline and mode are kept.",
	Args: []spec.Arg{{Name: "stdin", Meta: "-", Help: "read the patch from stdin", Optional: true, CLIOnly: true, Complete: spec.CompleteNone}},
	Options: []spec.Option{
		{Name: "patch", Type: spec.String, Meta: "TEXT", Help: "the patch text; on the command line, --patch-file or stdin when left out"},
		{Name: "patch-file", Type: spec.String, Meta: "PATH", Complete: spec.CompleteFiles, Help: "read the patch from PATH (readable under the policy)"},
		{Name: "dry-run", Type: spec.Bool, Help: "check and show every file's diff and sha256 before and after, change nothing"},
		{Name: "expect-sha256", Type: spec.Strings, Meta: "PATH=HEX", Help: "refuse (conflict) unless PATH's current content has this SHA-256; repeatable"},
	},
	Examples: []spec.Example{
		{Cmd: "patch --patch-file fix.patch --dry-run --format text", Says: "the diff of every file the patch would change"},
		{Cmd: "patch --patch-file fix.patch --format text", Says: "one line per file: its action and path"},
	},
	Text: "one line per file: add, update, delete or move, and the path (move: OLD -> NEW); with --dry-run the unified diffs",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
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

var historyOp = &spec.Op{
	Name: "history", Class: spec.Read, Result: HistoryResult{}, Journal: true,
	Summary:  "list the workdir's recorded changes, newest first",
	Help:     "Lists the changes the journal recorded in the writable roots, newest first: change_id, time, command, kept, and each path's sha256, size and mode before and after (null: absent). Only what the policy in force may read is shown: hidden counts the paths left out, a change with every path hidden is left out, bytes are recomputed from what is shown, and a move with one hidden end shows as an add or a delete. With PATH, only the changes touching it (or, for a directory, anything below it); a path the policy denies is denied. The journal keeps prior contents until max_bytes evicts the oldest changes, whole; the purge command (off unless the policy turns it on) forgets them now.",
	Args:     []spec.Arg{{Name: "path", Meta: "PATH", Help: "only changes touching this file or directory", Optional: true, Complete: spec.CompleteFiles}},
	Options:  []spec.Option{{Name: "limit", Short: "n", Type: spec.Int, Meta: "N", Min: min1, DefaultText: "all", Help: "only the newest N changes shown (read from the journal's end)"}},
	Examples: []spec.Example{{Cmd: "history --format text", Says: "one line per change: id, time, command and paths", After: "write notes.txt --content 'new notes'"}},
	Text:     "one line per change: its id, time, command and paths, tab-separated",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		if in.IsSet("path") && in.String("path") == "" {
			return nil, usageErr("an empty path: leave it out to list every change")
		}
		return History(ctx, sb, in.String("path"), int(in.Int("limit")))
	},
}

var purgeOp = &spec.Op{
	Name: "purge", Class: spec.Destructive, Result: PurgeResult{}, Journal: true, Off: true,
	Summary:  "forget the journal's recorded changes and the content kept for them",
	Help:     "Forgets every recorded change whose paths the policy in force may all write, and the prior content kept only for them: deleted and overwritten content kept for undo is gone after it. A change naming a path the policy may not write stays (kept counts them). Not undoable; change ids go on rising. The built-in policy switches purge off.",
	Examples: []spec.Example{{Cmd: "purge --format text", Says: "how many changes were forgotten and how many stayed", After: "write notes.txt --content 'new notes'"}},
	Text:     "two lines, removed and kept, each with its count after a tab",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
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
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		return Undo(ctx, sb, in.String("change_id"), in.Bool("force"))
	},
}
