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
	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
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
	// ExecS3: a call whose policy names an object root, in a binary that
	// cannot open one, runs the fsbox-s3 beside this binary in this
	// process's place (only a binary's entry asks).
	ExecS3 bool
}

// call is what a command's run function gets.
type call struct {
	cx    context.Context
	op    *spec.Op
	in    *spec.Input
	sb    *sandbox.Sandbox
	out   *output
	stdin io.Reader
	args  []string
	reg   *spec.Registry
	// For the commands that open their own sandbox (mcp): the policy the
	// call loaded and its error, whether to apply Landlock, the audit log,
	// the server, the whole normalised argv and the call's environment.
	policy         *policy.Policy
	policyErr      error
	landlock       bool
	audit          *sandbox.AuditLog
	serve          Serve
	execMCP        bool
	execS3         bool
	argv           []string
	getenv         func(string) (string, bool)
	stdout, stderr io.Writer
	// deadline is the call's time budget (max_call_seconds, or a lower
	// --timeout): 0 when the call has none.
	deadline time.Duration
}

// state is shared by the app's hooks during one Run.
type state struct {
	c         Call
	reg       *spec.Registry
	stdout    io.Writer
	format    string
	policy    *policy.Policy
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
	return fserr.Errorf(fserr.CodeUsage, "", format, args...)
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
func (st *state) loadPolicy(config string, set bool) (*policy.Policy, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fserr.Errorf(fserr.CodeIO, "", "cannot tell the current directory: %v", err)
	}
	home, _ := os.UserHomeDir()
	known := func(name string) bool { _, ok := st.reg.Lookup(name); return ok }
	p, err := policy.Load(policy.Env{ConfigFlag: config, ConfigSet: set, Getenv: st.c.Getenv, Cwd: cwd, Home: home, Known: known})
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
		Action: func(c *ucli.Context) error { return st.action(op, c) },
	}
}

// action reads the input, opens the sandbox, runs the operation and
// prints its result.
func (st *state) action(op *spec.Op, c *ucli.Context) error {
	args := c.Args().Slice()
	in, err := st.input(op, c, args)
	if err != nil {
		return err
	}
	cx, jqcx := c.Context, c.Context
	if !op.NoPolicy && st.policy != nil {
		// The call's deadline (SPEC §5), from the call's start: walks
		// and searches give their part by then, a change commits before
		// it or not at all, and --jq runs under it, a meta command's too
		// (but mcp, whose server outlives any one call, runs without it).
		dl, cancel := context.WithDeadline(cx, st.start.Add(st.policy.Limits.CallTimeout(st.timeout)))
		defer cancel()
		if st.policy.HasObjectRoot() { // [store] max_requests ends the call as its deadline does
			dl = sandbox.WithRequestCap(dl, st.policy.Store.MaxRequests)
		}
		jqcx = dl
		if op.Run != nil {
			cx = dl
		}
	}
	cx, live, stop := st.watch(op, cx)
	defer stop()
	x := &call{cx: cx, op: op, in: in, stdin: st.c.Stdin, args: args, out: st.output(c), reg: st.reg,
		policy: st.policy, policyErr: st.policyErr, landlock: st.c.Landlock, audit: st.auditLog, serve: st.c.Extras.Serve, execMCP: st.c.ExecMCP, execS3: st.c.ExecS3,
		argv: st.argv, getenv: st.c.Getenv, stdout: st.stdout, stderr: st.c.Stderr}
	x.out.cx, x.out.change, x.out.live = jqcx, !op.ReadOnly(), live || x.out.tty
	if !op.NoPolicy && st.policy != nil {
		x.deadline = st.policy.Limits.CallTimeout(st.timeout)
	}
	if !op.NoPolicy {
		sb, err := st.open(op)
		if err != nil {
			return err
		}
		defer sb.Close()
		x.sb, st.sb = sb, sb
	}
	if op.Run == nil {
		return runMeta(x)
	}
	return runOp(x)
}

// input reads the command's flags and arguments, and the global flags
// that concern it, into the operation's input.
func (st *state) input(op *spec.Op, c *ucli.Context, args []string) (*spec.Input, error) {
	for _, a := range args {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, usageErr("an argument holds a NUL byte")
		}
	}
	if err := st.shape.checkFields(op); err != nil {
		return nil, err
	}
	in, err := inputOf(op, c, args, st.c.Stdin)
	if err != nil {
		return nil, err
	}
	in.Reg, in.Executable = st.reg, companion.Self
	if st.cursor != "" && !op.Pages {
		return nil, usageErr("%s gives no list to resume: --cursor goes with %s", op.Name, strings.Join(pagingOps(st.reg), ", "))
	}
	in.Cursor, in.Form = st.cursor, st.format
	return in, nil
}

// watch: a command that only reads stops when the reader of its output
// goes (SPEC §3); a change runs to its end. One fstat, and a goroutine
// only for a pipe (stop ends it). live: stdout is a pipe or a socket,
// whose reader reads as fsbox writes.
func (st *state) watch(op *spec.Op, cx context.Context) (_ context.Context, live bool, stop func()) {
	stop = func() {}
	if op.Run == nil || op.Class != spec.Read || op.NoPolicy {
		return cx, false, stop
	}
	ow, _ := st.stdout.(*outWatch)
	f, fifo := stdoutPipe(st.c.Stdout)
	if f == nil || ow == nil {
		return cx, false, stop
	}
	if fifo {
		cx, stop = watchReader(cx, ow, f)
	}
	return cx, true, stop
}

// open opens the call's sandbox for op, ready to run it: fsbox's own
// files protected from a change, the command checked against the
// policy, the journals a reading call needs opened, and Landlock up
// where the call asks for it.
func (st *state) open(op *spec.Op) (*sandbox.Sandbox, error) {
	if st.policyErr != nil {
		return nil, st.policyErr
	}
	if err := needsS3(st.policy, st.c.ExecS3, st.argv); err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	sb, err := sandbox.New(st.policy, home)
	if err != nil {
		return nil, err
	}
	if !op.ReadOnly() {
		protectOwn(sb) // a call that only reads changes no file, fsbox's own included
	}
	sb.SetStdin(st.c.Stdin)
	if err := ops.CheckCommandIn(st.reg, st.policy, op.Name); err != nil {
		sb.Close()
		return nil, err
	}
	switch {
	case op.ReadOnly() && !op.Journal:
		sb.ReadsOnly() // no journal to open before Landlock
	case op.ReadOnly():
		sb.ReadsJournal() // the journals that exist, opened to read
	}
	if st.c.Landlock {
		if err := sb.Restrict(); err != nil {
			sb.Close()
			return nil, err
		}
	}
	return sb, nil
}

// runOp runs an operation through its descriptor, the one path every
// face takes, and prints its result through the printer picked once for
// the call's format (Printer): a streaming operation (Op.Streams) sends
// its items to the printer's sink as they come (an item a line in
// ndjson, the text form as items come, in json each item into the
// object's list, its other fields after it; with --jq the result is
// collected), and the printer ends the output once Run returns; any other
// result is printed whole. The result's outcome is the call's end.
func runOp(x *call) error {
	x.in.Exact = x.out.exact()
	x.out.limitValue = x.limitValue
	pr := x.out.printerFor(x.op, x.op.StreamsWith(x.in))
	x.in.Sink = pr.Sink()
	r, err := x.op.Run(x.cx, x.sb, x.in)
	if err != nil {
		return err
	}
	o := r.Outcome()
	if o.Quiet {
		return quietEnd(o)
	}
	if err := pr.Done(r, o); err != nil {
		return err
	}
	return exitOf(o)
}

// limitValue is the value of the limit that cut the call's list, as the
// text form's note says it: the policy's max_results or
// max_result_bytes, the call's --limit, the call's deadline.
func (x *call) limitValue(limit string) string {
	if x.sb == nil {
		return ""
	}
	l := x.sb.Limits()
	switch limit {
	case "max_results":
		return fmt.Sprintf("%d", l.MaxResults)
	case "max_result_bytes":
		return fmt.Sprintf("%d bytes", l.MaxResultBytes)
	case "limit":
		if x.in != nil && x.in.IsSet("limit") {
			return fmt.Sprintf("%d", x.in.Int("limit"))
		}
	case "timeout":
		if x.deadline > 0 {
			return x.deadline.String()
		}
	}
	return ""
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

// textWriter is a result's text form's writer on the command line: names
// pass the printer's escaping for a terminal.
type textWriter struct {
	*bufio.Writer
	p      *output
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

// output is where the call prints, and how, as the global flags and the
// terminal say.
func (st *state) output(c *ucli.Context) *output {
	p := &output{w: st.stdout, errw: st.c.Stderr, format: st.format, pretty: c.Bool("pretty"), shape: st.shape}
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

// outWatch passes writes through to stdout and notes when its reader has
// gone (EPIPE): the call then ends quietly with tool.ExitClosedPipe.
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
	return Run(context.Background(), Call{Args: args, Stdin: stdin, Stdout: stdout, Stderr: stderr, Landlock: true, ExecMCP: true, ExecS3: true, Extras: x})
}

// MainMCP is Main for fsbox-mcp, the binary with the MCP server
// (cmd/fsbox-mcp), given in x (its Serve; no JQ: --jq is refused). It
// may serve for long: its GC keeps
// the default pace.
func MainMCP(args []string, stdin io.Reader, stdout, stderr io.Writer, x Extras) int {
	signal.Ignore(syscall.SIGPIPE)
	return Run(context.Background(), Call{Args: args, Stdin: stdin, Stdout: stdout, Stderr: stderr, Landlock: true, ExecS3: true, Extras: x})
}

// Run runs one fsbox call and returns its exit code. It is reentrant: it
// touches no package-level mutable state, so calls may run concurrently.
// It never panics: a panic inside a command becomes an io error. Every
// call leaves its audit record, even when stdout is a pipe closed early: a
// closed stdout ends the call quietly, with nothing on stderr and exit
// status tool.ExitClosedPipe, after the record is written.
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
			err := fserr.Errorf(fserr.CodeIO, "", "internal error: %v", r)
			if out.closed.Load() {
				code = st.audit(command, err, tool.ExitClosedPipe)
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
		code = tool.ExitClosedPipe
	case err != nil:
		code = printError(c.Stderr, st.format, err)
	}
	return st.audit(command, err, code)
}
