package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// Version is set at build time with -ldflags "-X ...cli.Version=...".
var Version = "dev"

// call is what a command's run function gets.
type call struct {
	ctx   *ucli.Context
	sb    *sandbox.Sandbox
	out   *printer
	stdin io.Reader
	args  []string
}

// state is shared by the app's hooks during one Main call.
type state struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) (string, bool)
	format         string
	policy         *sandbox.Policy
	policyErr      error
	start          time.Time
	auditLog       *sandbox.AuditLog // the policy's [audit] log, opened before Landlock
	sb             *sandbox.Sandbox  // the call's sandbox, for the audit record
}

func globalFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "config", Usage: "policy file (refused when FSBOX_CONFIG is set)", TakesFile: true},
		&ucli.StringFlag{Name: "format", Value: formatJSON, Usage: "output format: json, ndjson or text", EnvVars: []string{"FSBOX_FORMAT"}},
		&ucli.BoolFlag{Name: "pretty", Usage: "indent JSON (the default when stdout is a terminal)", EnvVars: []string{"FSBOX_PRETTY"}},
		&ucli.StringFlag{Name: "color", Value: "auto", Usage: "color in the text form: auto, always or never", EnvVars: []string{"FSBOX_COLOR"}},
	}
}

func usageErr(format string, args ...any) error {
	return sandbox.Errorf(sandbox.CodeUsage, "", format, args...)
}

func onUsageError(_ *ucli.Context, err error, _ bool) error {
	return usageErr("%s", strings.TrimSpace(err.Error()))
}

func newApp(st *state) *ucli.App {
	// -v means --invert-match to grep users; --version has no short form.
	ucli.VersionFlag = &ucli.BoolFlag{Name: "version", Usage: "print the version"}
	app := &ucli.App{
		Name:                 "fsbox",
		HelpName:             "fsbox",
		Usage:                "sandboxed file tools that print JSON",
		UsageText:            "fsbox [global flags] COMMAND [flags] [args]\n   fsbox-COMMAND [flags] [args]",
		Version:              Version,
		Flags:                globalFlags(),
		Reader:               st.stdin,
		Writer:               st.stdout,
		ErrWriter:            st.stderr,
		HideHelpCommand:      true,
		EnableBashCompletion: true,
		ExitErrHandler:       func(*ucli.Context, error) {},
		OnUsageError:         onUsageError,
		Before:               func(c *ucli.Context) error { return st.before(c) },
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageErr("unknown command %q (run 'fsbox --help' for the list)", c.Args().First())
			}
			return ucli.ShowAppHelp(c)
		},
		// -g '*.{go,md}' is one glob: never split slice flags at commas.
		DisableSliceFlagSeparator: true,
	}
	for _, name := range commandNames() {
		app.Commands = append(app.Commands, st.wire(registry[name]))
	}
	return app
}

// before validates the global flags and loads the policy. A policy error is
// kept and reported by the commands that need a policy, so --help and the
// documentation commands still work.
func (st *state) before(c *ucli.Context) error {
	st.format = c.String("format")
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
	cwd, err := os.Getwd()
	if err != nil {
		st.policyErr = sandbox.Errorf(sandbox.CodeIO, "", "cannot tell the current directory: %v", err)
		return nil
	}
	home, _ := os.UserHomeDir()
	st.policy, st.policyErr = sandbox.Load(sandbox.Env{ConfigFlag: c.String("config"), ConfigSet: c.IsSet("config"), Getenv: st.getenv, Cwd: cwd, Home: home})
	if st.policy != nil && st.policyErr == nil {
		st.auditLog, st.policyErr = sandbox.OpenAudit(st.policy)
	}
	if st.policy != nil {
		for _, cmd := range c.App.Commands {
			if !ops.CommandEnabled(st.policy, cmd.Name) { // links needs mkdir and write too
				cmd.Hidden = true
			}
		}
	}
	return nil
}

// wire turns a registry entry into a urfave command whose action checks
// arguments, opens the sandbox, runs the command and prints its result.
func (st *state) wire(cmd *command) *ucli.Command {
	return &ucli.Command{
		Name:         cmd.name,
		Usage:        cmd.usage,
		ArgsUsage:    cmd.argsUsage,
		Flags:        cmd.flags,
		OnUsageError: onUsageError,
		Action: func(c *ucli.Context) error {
			args := c.Args().Slice()
			if len(args) < cmd.minArgs || (cmd.maxArgs >= 0 && len(args) > cmd.maxArgs) {
				return usageErr("usage: fsbox %s %s", cmd.name, cmd.argsUsage)
			}
			for _, a := range args {
				if strings.IndexByte(a, 0) >= 0 {
					return usageErr("an argument holds a NUL byte")
				}
			}
			x := &call{ctx: c, stdin: st.stdin, args: args, out: st.printer(c)}
			if !cmd.noPolicy {
				if st.policyErr != nil {
					return st.policyErr
				}
				home, _ := os.UserHomeDir()
				sb, err := sandbox.New(st.policy, home)
				if err != nil {
					return err
				}
				defer sb.Close()
				if err := sb.CheckCommand(cmd.name); err != nil {
					return err
				}
				if err := sb.Restrict(); err != nil {
					return err
				}
				x.sb, st.sb = sb, sb
			}
			return cmd.run(x)
		},
	}
}

func (st *state) printer(c *ucli.Context) *printer {
	p := &printer{w: st.stdout, errw: st.stderr, format: st.format, pretty: c.Bool("pretty")}
	tty := isTerminal(st.stdout)
	p.tty = tty
	if !c.IsSet("pretty") {
		p.pretty = tty
	}
	switch c.String("color") {
	case "always":
		p.color = true
	case "auto":
		p.color = tty
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
}

func (o *outWatch) Write(b []byte) (int, error) {
	n, err := o.w.Write(b)
	if err != nil && errors.Is(err, syscall.EPIPE) {
		o.closed.Store(true)
	}
	return n, err
}

// Main runs fsbox and returns the exit code. It never panics: a panic
// inside a command becomes an io error. Every call leaves its audit
// record, even when stdout or stderr is a pipe closed early: SIGPIPE is
// ignored (so such a write fails with EPIPE instead of killing the
// process), and a closed stdout ends the call quietly, with nothing on
// stderr and exit status ExitClosedPipe, after the record is written.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	// A short-lived process: collect garbage less often than the default.
	debug.SetGCPercent(400)
	// One sigaction: Go's runtime kills the process on EPIPE at fd 1 or 2
	// unless SIGPIPE is ignored or caught.
	signal.Ignore(syscall.SIGPIPE)
	out := &outWatch{w: stdout}
	st := &state{stdin: stdin, stdout: out, stderr: stderr, getenv: os.LookupEnv, format: formatJSON, start: time.Now()}
	if f, ok := os.LookupEnv("FSBOX_FORMAT"); ok && (f == formatText || f == formatNDJSON) {
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
			code = st.audit(command, err, printError(stderr, st.format, err))
		}
	}()
	args = multicall(args, isCommand)
	global := flagsOf(globalFlags())
	global["help"], global["h"], global["version"] = false, false, false
	args = reorder(args, global, func(name string) (flagSet, bool) {
		c, ok := registry[name]
		if !ok {
			return nil, false
		}
		fs := flagsOf(c.flags)
		fs["help"], fs["h"] = false, false
		return fs, true
	})
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
	command = commandOf(args)
	err := newApp(st).RunContext(context.Background(), args)
	switch {
	case out.closed.Load():
		// The reader has what it wanted; the call's error, if any, is
		// the failed write. Say nothing: a pipeline stage stops quietly.
		code = ExitClosedPipe
	case err != nil:
		code = printError(stderr, st.format, err)
	}
	return st.audit(command, err, code)
}
