package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/fsbox/fsbox/internal/companion"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// Call is one run of fsbox: everything Run reads and writes. Run keeps no
// state between calls and shares none between concurrent ones.
type Call struct {
	Args           []string // argv, argv[0] included
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) (string, bool) // nil: os.LookupEnv
	// Ops is the operations the call may run; nil means ops.Registry.
	Ops *spec.Registry
	// Landlock restricts the whole process to the policy's roots once the
	// sandbox is open: process-wide and one-way, so only the binary's
	// entry (Main) asks for it.
	Landlock bool
	// Extras: the MCP server, where linked (Extras).
	Extras Extras
	// ExecMCP: `fsbox mcp`, in a binary without the server, runs the
	// fsbox-mcp beside this binary in this process's place (only the
	// binary's entry asks).
	ExecMCP bool
}

// call is what a command's run function gets.
type call struct {
	cx    context.Context
	op    *spec.Op
	in    *spec.Input
	sb    *sandbox.Sandbox
	out   *printer
	stdin io.Reader
	args  []string
	reg   *spec.Registry
	// For the commands that open their own sandbox (mcp): the policy the
	// call loaded and its error, whether to apply Landlock, the audit log,
	// the server, the whole normalised argv and the call's environment.
	policy         *sandbox.Policy
	policyErr      error
	landlock       bool
	audit          *sandbox.AuditLog
	serve          Serve
	execMCP        bool
	argv           []string
	getenv         func(string) (string, bool)
	stdout, stderr io.Writer
}

// state is shared by the app's hooks during one Run.
type state struct {
	c         Call
	reg       *spec.Registry
	stdout    io.Writer
	format    string
	policy    *sandbox.Policy
	policyErr error
	start     time.Time
	auditLog  *sandbox.AuditLog // the policy's [audit] log, opened before Landlock
	sb        *sandbox.Sandbox  // the call's sandbox, for the audit record
	shape     *shape            // --fields, --jq
	timeout   time.Duration     // --timeout; 0: the policy's max_call_seconds
	cursor    string            // --cursor: where a list cut before resumes
	argv      []string          // normalised: "fsbox", global flags, command, its flags, "--", arguments
}

// globalFlags are the flags every command takes.
func globalFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "config", Usage: "policy file (refused when FSBOX_CONFIG is set)", TakesFile: true},
		&ucli.StringFlag{Name: "format", Value: formatJSON, Usage: "output format: json, ndjson or text", EnvVars: []string{"FSBOX_FORMAT"}},
		&ucli.BoolFlag{Name: "pretty", Usage: "indent JSON (the default when stdout is a terminal)", EnvVars: []string{"FSBOX_PRETTY"}},
		&ucli.StringFlag{Name: "fields", Usage: "keep only these keys, comma-separated: of each item for list commands (counts, truncated and the summary stay), of the result otherwise"},
		&ucli.StringFlag{Name: "jq", Usage: "filter the JSON result with a jq program (gojq); strings print raw, as gh --jq"},
		&ucli.StringFlag{Name: "color", Value: "auto", Usage: "color in the text form: auto (on a terminal, unless NO_COLOR is set), always or never", EnvVars: []string{"FSBOX_COLOR"}},
		&ucli.StringFlag{Name: "timeout", Usage: "deadline of the call: a Go duration (1.5s, 2m) or a number of seconds; walks and searches print what they found by then (exit 9); can only lower the policy's max_call_seconds"},
		&ucli.StringFlag{Name: "cursor", Usage: "resume a list a limit cut: the next_cursor of the same command with the same arguments, policy and format"},
	}
}

// globalMeta are the metavariables of the global flags that take a value.
var globalMeta = map[string]string{"config": "FILE", "format": "FORMAT", "color": "WHEN", "fields": "FIELDS", "jq": "EXPR", "timeout": "DUR", "cursor": "CURSOR"}

// globalValues are what shells complete for the global flags' values.
var globalValues = map[string][]string{"format": {"json", "ndjson", "text"}, "color": {"auto", "always", "never"}}

func usageErr(format string, args ...any) error {
	return sandbox.Errorf(sandbox.CodeUsage, "", format, args...)
}

// onUsageError words a bad global flag as a command's is worded: unknown
// flag --x, with the nearest global flag when one is close.
func onUsageError(_ *ucli.Context, err error, _ bool) error {
	msg := strings.TrimSpace(err.Error())
	if bad, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		for _, f := range globalFlags() {
			names = append(names, f.Names()[0])
		}
		msg = "unknown flag -" + bad
		if len(bad) > 1 {
			msg = "unknown flag --" + bad
		}
		if best := spec.Nearest(bad, names); best != "" && len(bad) > 1 {
			msg += "; did you mean --" + best + "?"
		} else {
			msg += " (fsbox --help lists the global flags)"
		}
	}
	return usageErr("%s", msg)
}

// newApp builds the parser for one call: the global flags and, of the
// commands, only the one invoked (none when it names none).
func newApp(st *state, command string) *ucli.App {
	app := &ucli.App{
		Name:            "fsbox",
		HelpName:        "fsbox",
		Usage:           "sandboxed file tools that print JSON",
		Flags:           withNames(globalFlags()),
		Reader:          st.c.Stdin,
		Writer:          st.stdout,
		ErrWriter:       st.c.Stderr,
		HideHelp:        true, // help and --version are answered before the parser runs
		HideHelpCommand: true,
		HideVersion:     true,
		ExitErrHandler:  func(*ucli.Context, error) {},
		OnUsageError:    onUsageError,
		Before:          func(c *ucli.Context) error { return st.before(c) },
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				bad := c.Args().First()
				if best := spec.Nearest(bad, st.reg.Names()); best != "" {
					return usageErr("unknown command %q; did you mean %s? (run 'fsbox --help' for the list)", bad, best)
				}
				return usageErr("unknown command %q (run 'fsbox --help' for the list)", bad)
			}
			return usageErr("no command given (run 'fsbox --help' for the list)")
		},
		// -g '*.{go,md}' is one glob: never split slice flags at commas.
		DisableSliceFlagSeparator: true,
	}
	if op, ok := st.reg.Lookup(command); ok {
		app.Commands = []*ucli.Command{st.wire(op)}
	}
	return app
}

// before validates the global flags and loads the policy. A policy error is
// kept and reported by the commands that need a policy, so the
// documentation commands still work.
func (st *state) before(c *ucli.Context) (err error) {
	st.format = c.String("format")
	if st.format == "" && !formatGiven(st.argv) {
		st.format = formatJSON // FSBOX_FORMAT set but empty: as unset
	}
	switch st.format {
	case formatJSON, formatNDJSON, formatText:
	default:
		bad := st.format
		st.format = formatJSON
		return usageErr("--format must be json, ndjson or text, got %q", bad)
	}
	switch c.String("color") {
	case "auto", "always", "never":
	default:
		return usageErr("--color must be auto, always or never, got %q", c.String("color"))
	}
	if c.IsSet("timeout") {
		if st.timeout, err = parseTimeout(c.String("timeout")); err != nil {
			return err
		}
	}
	st.cursor = c.String("cursor")
	st.policy, st.policyErr = st.loadPolicy(c.String("config"), c.IsSet("config"))
	if st.shape, err = parseShape(c.String("fields"), c.String("jq"), st.c.Extras.JQ); err != nil {
		return err
	}
	if st.shape != nil && st.shape.jq != nil && st.format != formatJSON {
		if !formatGiven(st.argv) {
			st.format = formatJSON // --jq filters JSON: FSBOX_FORMAT, a standing preference, yields to it
		} else {
			return usageErr("--jq filters the JSON result: it does not go with --format %s", st.format)
		}
	}
	if st.policy != nil && st.policyErr == nil {
		st.auditLog, st.policyErr = sandbox.OpenAudit(st.policy)
	}
	return nil
}

// parseTimeout reads --timeout: a Go duration (1.5s, 2m, 1h30m) or a
// plain number of seconds (1.5); above 0. A number of seconds past what a
// Duration holds is the longest Duration (the policy's is then shorter).
func parseTimeout(s string) (time.Duration, error) {
	bad := func() (time.Duration, error) {
		return 0, usageErr("--timeout must be a duration above 0 (a Go duration such as 1.5s or 2m, or a number of seconds), got %q", s)
	}
	if plainSeconds(s) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f <= 0 {
			return bad()
		}
		if f >= float64(math.MaxInt64)/float64(time.Second) {
			return math.MaxInt64, nil
		}
		if d := time.Duration(f * float64(time.Second)); d > 0 {
			return d, nil
		}
		return bad() // below a nanosecond
	}
	d, err := time.ParseDuration(s) // past ~292 years: an error too
	if err != nil || d <= 0 {
		return bad()
	}
	return d, nil
}

// plainSeconds: s is digits with at most one '.', and a digit.
func plainSeconds(s string) bool {
	digits, dots := 0, 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '.':
			dots++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1
}

// formatGiven reports whether the command line itself names a format
// (not FSBOX_FORMAT).
func formatGiven(argv []string) bool {
	for _, a := range argv[1:] {
		if a == "--" {
			break
		}
		if a == "--format" || strings.HasPrefix(a, "--format=") {
			return true
		}
	}
	return false
}

// loadPolicy finds the policy as SPEC says and checks its [commands]
// against the operations this call knows.
func (st *state) loadPolicy(config string, set bool) (*sandbox.Policy, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, sandbox.Errorf(sandbox.CodeIO, "", "cannot tell the current directory: %v", err)
	}
	home, _ := os.UserHomeDir()
	known := func(name string) bool { _, ok := st.reg.Lookup(name); return ok }
	p, err := sandbox.Load(sandbox.Env{ConfigFlag: config, ConfigSet: set, Getenv: st.c.Getenv, Cwd: cwd, Home: home, Known: known})
	if err != nil {
		return nil, err
	}
	if err := ops.CheckPolicyIn(st.reg, p); err != nil {
		return nil, err
	}
	return p, nil
}

// wire turns an operation into a urfave command whose action reads the
// input, opens the sandbox, runs the operation and prints its result.
func (st *state) wire(op *spec.Op) *ucli.Command {
	return &ucli.Command{
		Name:      op.Name,
		Usage:     op.Summary,
		ArgsUsage: op.Usage(),
		Flags:     withNames(cliFlags(op)),
		HideHelp:  true,
		OnUsageError: func(_ *ucli.Context, err error, _ bool) error {
			msg := strings.TrimSpace(err.Error())
			if bad, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
				msg = "unknown flag --" + bad
				if len(bad) == 1 {
					msg = "unknown flag -" + bad
				}
			}
			return usageErr("%s%s", msg, suggestFlag(op, err))
		},
		Action: func(c *ucli.Context) error {
			args := c.Args().Slice()
			for _, a := range args {
				if strings.IndexByte(a, 0) >= 0 {
					return usageErr("an argument holds a NUL byte")
				}
			}
			if err := st.shape.checkFields(op); err != nil {
				return err
			}
			in, err := inputOf(op, c, args, st.c.Stdin)
			if err != nil {
				return err
			}
			in.Reg, in.Executable = st.reg, companion.Self
			if st.cursor != "" && !op.Pages {
				return usageErr("%s gives no list to resume: --cursor goes with %s", op.Name, strings.Join(pagingOps(st.reg), ", "))
			}
			in.Cursor, in.Form = st.cursor, st.format
			cx, jqcx := c.Context, c.Context
			if !op.NoPolicy && st.policy != nil {
				// The call's deadline (SPEC §5), from the call's start:
				// walks and searches give their part by then, a change
				// commits before it or not at all, and --jq runs under
				// it, a meta command's too (but mcp, whose server outlives
				// any one call, runs without it).
				dl, cancel := context.WithDeadline(cx, st.start.Add(st.policy.Limits.CallTimeout(st.timeout)))
				defer cancel()
				jqcx = dl
				if op.Run != nil {
					cx = dl
				}
			}
			var live bool // stdout is a pipe or a socket: its reader reads as fsbox writes
			if op.Run != nil && op.Class == spec.Read && !op.NoPolicy {
				// A command that only reads stops when the reader of
				// its output goes (SPEC §3); a change runs to its end.
				// One fstat, and a goroutine only for a pipe.
				ow, _ := st.stdout.(*outWatch)
				if f, fifo := stdoutPipe(st.c.Stdout); f != nil && ow != nil {
					live = true
					if fifo {
						var stop func()
						cx, stop = watchReader(cx, ow, f)
						defer stop()
					}
				}
			}
			x := &call{cx: cx, op: op, in: in, stdin: st.c.Stdin, args: args, out: st.printer(c), reg: st.reg,
				policy: st.policy, policyErr: st.policyErr, landlock: st.c.Landlock, audit: st.auditLog, serve: st.c.Extras.Serve, execMCP: st.c.ExecMCP,
				argv: st.argv, getenv: st.c.Getenv, stdout: st.stdout, stderr: st.c.Stderr}
			x.out.cx, x.out.change, x.out.live = jqcx, !op.ReadOnly(), live || x.out.tty
			if !op.NoPolicy {
				if st.policyErr != nil {
					return st.policyErr
				}
				home, _ := os.UserHomeDir()
				sb, err := sandbox.New(st.policy, home)
				if err != nil {
					return err
				}
				defer sb.Close()
				if !op.ReadOnly() {
					protectOwn(sb) // a call that only reads changes no file, fsbox's own included
				}
				sb.SetStdin(st.c.Stdin)
				if err := ops.CheckCommandIn(st.reg, st.policy, op.Name); err != nil {
					return err
				}
				switch {
				case op.ReadOnly() && !op.Journal:
					sb.ReadsOnly() // no journal to open before Landlock
				case op.ReadOnly():
					sb.ReadsJournal() // the journals that exist, opened to read
				}
				if st.c.Landlock {
					if err := sb.Restrict(); err != nil {
						return err
					}
				}
				x.sb, st.sb = sb, sb
			}
			if op.Run == nil {
				return runMeta(x)
			}
			return runOp(x)
		},
	}
}

// runOp runs an operation through its descriptor, the one path every
// face takes, and prints its result in the format chosen once before the
// call: a streaming operation (Op.Streams) gets a sink in that format (an
// item a line in ndjson, the text form as items come, in json each item
// into the object's list, its other fields after it; with --jq the
// result is collected) and its summary follows the items; any other
// result is printed whole, as its text form (spec.Texter, written next
// to the result's type) with --format text, else as JSON. A call that
// fails after items were sent leaves stdout with what the 64 KiB buffer
// had passed on by then (nothing, for a short list), in every format.
func runOp(x *call) error {
	p := x.out
	x.in.Exact = p.exact()
	var bw *bufio.Writer
	var list *jsonList
	done := func() error { return nil }
	streams := x.op.StreamsWith(x.in)
	if streams && p.format == formatJSON && (p.shape == nil || p.shape.jq == nil) {
		// The items go into the object as they come (jsonList); --jq
		// needs the whole document, so it collects.
		out, flush := p.jsonOut()
		w := bufio.NewWriterSize(out, 64<<10)
		if list = newJSONList(p, w, x.op.Result); list != nil {
			bw, done = w, flush
			x.in.Sink = spec.ItemSink(list.add)
		}
	}
	if streams && (p.format == formatNDJSON || p.format == formatText) {
		var out io.Writer
		switch {
		case p.format == formatNDJSON:
			out, done = p.jsonOut()
			bw = bufio.NewWriterSize(out, 64<<10)
			x.in.Sink = spec.ItemSink(p.itemEncoder(bw).Encode)
		case p.color && paints(x.op):
			// Names and content are escaped (textWriter) before they are
			// painted, so the lines go out past the terminal escaper:
			// only our SGR codes reach the terminal.
			out, done = p.jsonOut()
			bw = bufio.NewWriterSize(out, 64<<10)
			colors := p.typeColors()
			x.in.Sink = textWriter{bw, p, &colors}
		default:
			out, done = p.textOut()
			bw = bufio.NewWriterSize(out, 64<<10)
			x.in.Sink = textWriter{bw, p, nil}
		}
	}
	if bw != nil && p.live {
		// The search waits: what it found so far goes to the reader now
		// (`fsbox grep x | head -1` ends at the first match).
		w := bw
		x.in.Idle = func() {
			if w.Buffered() > 0 {
				w.Flush() // a failure sticks: the next write reports it
			}
		}
	}
	r, err := x.op.Run(x.cx, x.sb, x.in)
	if err != nil {
		return err
	}
	if s, ok := r.(interface{ Silent() bool }); ok && s.Silent() {
		if matched(r) == nil {
			return nil // grep -q: any match is success, whatever else happened
		}
		return outcome(r)
	}
	if f, ok := r.(interface{ Failures() ops.PathErrors }); ok && p.format == formatText {
		defer p.sayFailures(f.Failures()) // on stderr, once the output is out
	}
	if n, ok := r.(interface{ Notes() []string }); ok && p.format == formatText {
		defer p.sayNotes(n.Notes()) // grep's "binary file matches", after the output
	}
	var tr *ops.Truncation
	if t, ok := r.(interface{ Trunc() *ops.Truncation }); ok {
		tr = t.Trunc()
	}
	if bw != nil {
		if list != nil {
			err = list.finish(r) // the list's end and the other fields
		} else {
			p.trailer(bw, r, tr)
		}
		if err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if err := done(); err != nil {
			return err
		}
		return outcome(r)
	}
	// A list (spec.Lister) goes out an item a line in ndjson, and its cut
	// is noted after it.
	var items any
	if l, ok := r.(spec.Lister); ok {
		items = l.Items()
	} else if !x.op.Pages || p.format != formatText {
		tr = nil // no list: no trailer (a list command's cut is still noted in the text form: history)
	}
	if t, ok := r.(spec.Texter); ok && p.format == formatText {
		if _, paints := r.(spec.Painter); paints && p.color {
			// Names escaped first, then painted, past the terminal
			// escaper: only our SGR codes get through.
			colors := p.typeColors()
			err = p.paintedText(r, tr, func(bw *bufio.Writer) error { return t.Text(textWriter{bw, p, &colors}) })
		} else {
			err = p.emit(r, items, tr, func(w *bufio.Writer) error { return t.Text(textWriter{w, p, nil}) })
		}
	} else if b, ok := r.(interface{ BigField() *string }); ok {
		err = p.emitWithString(r, b.BigField()) // the big string is written in place, not copied
	} else {
		err = p.emit(r, items, tr, nil)
	}
	if err != nil {
		return err
	}
	return outcome(r)
}

// paints: the operation's text form passes every name through the
// writer (spec.Painter's promise), so it may be coloured on a terminal.
func paints(op *spec.Op) bool {
	_, ok := op.Result.(interface{ Paints() })
	return ok
}

// outcome is the call's end once its result is printed (SPEC §2): a list
// result a policy limit cut exits 9 (truncated; a cut the caller asked
// for, --limit or -m, is no failure), then a result that finds things
// (grep) and found nothing exits 1, as grep does.
func outcome(r any) error {
	if f, ok := r.(interface{ Failed() error }); ok && f.Failed() != nil {
		return printed{sandbox.AsError(f.Failed())} // the first failing path's class; reported in the result
	}
	if t, ok := r.(interface{ Trunc() *ops.Truncation }); ok {
		if tr := t.Trunc(); tr.Truncated && policyCut(tr.Limit) {
			what := "the " + tr.Limit + " limit"
			if tr.Limit == "timeout" {
				what = "the call's deadline"
			}
			return &sandbox.Error{Code: sandbox.CodeTruncated, Msg: what + " cut the output"}
		}
	}
	return matched(r)
}

// printed is the outcome of a call whose result is printed and already
// reports the error (errors[] of several paths): its class is the exit
// status, and nothing more is printed.
type printed struct{ e *sandbox.Error }

func (p printed) Error() string { return p.e.Error() }

// Unwrap gives the error itself (its code, for the audit record).
func (p printed) Unwrap() error { return p.e }

// sayFailures writes each failing path of a text form's call on stderr,
// as fsbox: CODE: message lines, and how many more there were.
func (p *printer) sayFailures(pe ops.PathErrors) {
	for _, e := range pe.Errors {
		printError(p.errw, formatText, &sandbox.Error{Code: e.Code, Msg: e.Message})
	}
	if pe.ErrorsMore > 0 {
		fmt.Fprintf(p.errw, "fsbox: and %d more failing paths\n", pe.ErrorsMore)
	}
}

// sayNotes writes a text form's notes on stderr, a line each (a name in
// one cannot forge a line, nor reach a terminal raw).
func (p *printer) sayNotes(notes []string) {
	for _, n := range notes {
		n = oneLine(n)
		if isTerminal(p.errw) {
			n = string(escapeControls([]byte(n), true))
		}
		fmt.Fprintf(p.errw, "fsbox: %s\n", n)
	}
}

// policyCut: the limit that cut a list is the policy's (max_results) or
// the call's deadline (timeout: max_call_seconds, or --timeout, which
// only lowers it, so exits as the policy's would), not the caller's own
// cut (--limit, -m); a read page at max_read_bytes is no cut of a list.
func policyCut(limit string) bool {
	return limit == "max_results" || limit == "timeout" || limit == "max_result_bytes"
}

// pagingOps names the commands that take a cursor.
func pagingOps(reg *spec.Registry) []string {
	var names []string
	for _, op := range reg.Ops() {
		if op.Pages {
			names = append(names, op.Name)
		}
	}
	return names
}

// matched: a result that finds things (grep) and found nothing exits 1.
func matched(r any) error {
	if m, ok := r.(interface{ Matched() bool }); ok && !m.Matched() {
		return &sandbox.Error{Code: sandbox.CodeNoMatch, Msg: "no match"}
	}
	return nil
}

// textWriter is a result's text form's writer on the command line: names
// pass the printer's escaping for a terminal.
type textWriter struct {
	*bufio.Writer
	p      *printer
	colors *typeColors // nil: no colour
}

func (t textWriter) Name(s string) string { return t.p.safeName(s) }

func (t textWriter) Typed(name, typ string) string {
	if t.colors == nil {
		return name
	}
	return t.colors.paint(name, typ)
}

func (t textWriter) Content(b []byte) []byte { return t.p.safe(b) }

// The colours of a match listing's pieces, as grep and rg paint them.
const (
	colorPath  = "\x1b[35m"
	colorLine  = "\x1b[32m"
	colorMatch = "\x1b[1;31m"
	colorReset = "\x1b[0m"
)

func (t textWriter) Paint(s string, role spec.Role) string {
	if t.colors == nil {
		return s
	}
	c := colorMatch
	switch role {
	case spec.PaintPath:
		c = colorPath
	case spec.PaintLine:
		c = colorLine
	}
	return c + s + colorReset
}

// inputOf reads a command's flags and arguments into the operation's input.
func inputOf(op *spec.Op, c *ucli.Context, args []string, stdin io.Reader) (*spec.Input, error) {
	in := spec.NewInput(op)
	if stdinHolds(stdin) {
		in.Stdin = stdin // a left-out filter PATH is standard input (ripgrep's rule)
	}
	for i := range op.Options {
		o := &op.Options[i]
		name := o.Flag()
		if !c.IsSet(name) {
			continue
		}
		switch o.Type {
		case spec.Bool:
			in.Set(o.Name, c.Bool(name))
		case spec.Int:
			in.Set(o.Name, c.Int64(name))
		case spec.Strings:
			in.Set(o.Name, c.StringSlice(name))
		case spec.Objects:
			if err := in.SetJSON(o.Name, json.RawMessage(c.String(name))); err != nil {
				return nil, err
			}
		default:
			in.Set(o.Name, c.String(name))
		}
	}
	for _, a := range op.Args {
		if a.Flag && c.IsSet(a.Name) {
			if err := in.SetFlagText(a.Name, c.String(a.Name)); err != nil {
				return nil, err
			}
		}
	}
	if err := in.SetArgs(args); err != nil {
		return nil, err
	}
	return in, in.Check()
}

func (st *state) printer(c *ucli.Context) *printer {
	p := &printer{w: st.stdout, errw: st.c.Stderr, format: st.format, pretty: c.Bool("pretty"), shape: st.shape}
	p.lsColors, _ = st.c.Getenv("LS_COLORS")
	tty := isTerminal(st.stdout)
	p.tty = tty
	if !c.IsSet("pretty") {
		p.pretty = tty
	}
	switch c.String("color") {
	case "always":
		p.color = true
	case "auto":
		// NO_COLOR (no-color.org): set and not empty, auto means never.
		noColor, _ := st.c.Getenv("NO_COLOR")
		p.color = tty && noColor == ""
	}
	return p
}

// isTerminal asks the terminal driver (an ioctl, via golang.org/x/term):
// /dev/null is a character device too, but no terminal.
func isTerminal(w io.Writer) bool {
	if o, ok := w.(*outWatch); ok {
		w = o.w
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// ExitClosedPipe is the exit status of a call whose stdout was closed by
// its reader (`fsbox grep x | head -1`): 128 + SIGPIPE, what a shell
// reports for a pipeline stage the signal ended.
const ExitClosedPipe = 141

// outWatch passes writes through to stdout and notes when its reader has
// gone (EPIPE): the call then ends quietly with ExitClosedPipe.
type outWatch struct {
	w      io.Writer
	closed atomic.Bool
	// gone: the reader was found gone by the watch of a pipe
	// (watchReader), which cancelled the call: a call that the cancel
	// ended is then one whose stdout was closed.
	gone atomic.Bool
}

func (o *outWatch) Write(b []byte) (int, error) {
	n, err := o.w.Write(b)
	if err != nil && errors.Is(err, syscall.EPIPE) {
		o.closed.Store(true)
	}
	return n, err
}

// Main is the binary's entry: it does what is process-wide by nature once
// (SIGPIPE ignored, so a write to a closed pipe fails with EPIPE instead
// of killing the process before the audit record is written; a GC tuned
// for a short-lived process; Landlock once the sandbox is open), then runs
// the call. It links no --jq (MainWith does).
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return MainWith(args, stdin, stdout, stderr, Extras{})
}

// MainWith is Main with x: what only the calling binary links (fsbox:
// --jq's compiler).
func MainWith(args []string, stdin io.Reader, stdout, stderr io.Writer, x Extras) int {
	debug.SetGCPercent(400)
	signal.Ignore(syscall.SIGPIPE)
	return Run(context.Background(), Call{Args: args, Stdin: stdin, Stdout: stdout, Stderr: stderr, Landlock: true, ExecMCP: true, Extras: x})
}

// MainMCP is Main for fsbox-mcp, the binary with the MCP server
// (cmd/fsbox-mcp), given in x (its Serve; no JQ: --jq is refused). It
// may serve for long: its GC keeps
// the default pace.
func MainMCP(args []string, stdin io.Reader, stdout, stderr io.Writer, x Extras) int {
	signal.Ignore(syscall.SIGPIPE)
	return Run(context.Background(), Call{Args: args, Stdin: stdin, Stdout: stdout, Stderr: stderr, Landlock: true, Extras: x})
}

// Run runs one fsbox call and returns its exit code. It is reentrant: it
// touches no package-level mutable state, so calls may run concurrently.
// It never panics: a panic inside a command becomes an io error. Every
// call leaves its audit record, even when stdout is a pipe closed early: a
// closed stdout ends the call quietly, with nothing on stderr and exit
// status ExitClosedPipe, after the record is written.
func Run(ctx context.Context, c Call) (code int) {
	if c.Getenv == nil {
		c.Getenv = os.LookupEnv
	}
	if c.Ops == nil {
		c.Ops = ops.Registry
	}
	out := &outWatch{w: c.Stdout}
	st := &state{c: c, reg: c.Ops, stdout: out, format: formatJSON, start: time.Now()}
	if f, ok := c.Getenv("FSBOX_FORMAT"); ok && (f == formatText || f == formatNDJSON) {
		st.format = f
	}
	command := ""
	defer func() {
		if r := recover(); r != nil {
			err := sandbox.Errorf(sandbox.CodeIO, "", "internal error: %v", r)
			if out.closed.Load() {
				code = st.audit(command, err, ExitClosedPipe)
				return
			}
			code = st.audit(command, err, printError(c.Stderr, st.format, err))
		}
	}()
	args := multicall(c.Args, func(name string) bool { _, ok := st.reg.Lookup(name); return ok })
	args = reorder(args, st.globalSet(), st.commandSet)
	st.argv = args
	for i, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--format="); ok {
			st.format = v
		} else if a == "--format" && i+1 < len(args) {
			st.format = args[i+1]
		}
	}
	command = st.commandOf(args)
	if done, code := st.answerMeta(args, command); done {
		return code
	}
	err := newApp(st, command).RunContext(ctx, args)
	if out.gone.Load() && errors.Is(err, context.Canceled) {
		// Cancelled because the reader went: its record says so, as a
		// failed write's does. (A call that ended all the same printed
		// its whole output, and exits as it would have.)
		out.closed.Store(true)
		err = errReaderGone
	}
	switch {
	case out.closed.Load():
		// The reader has what it wanted; the call's error, if any, is
		// the failed write. Say nothing: a pipeline stage stops quietly.
		code = ExitClosedPipe
	case err != nil:
		code = printError(c.Stderr, st.format, err)
	}
	return st.audit(command, err, code)
}
