package ops

import (
	"context"
	"fmt"
	"strings"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// Registry describes every fsbox operation. The command line, the man
// pages, the completions, the tool schemas, explain and the policy's
// [commands] table are all generated from it, and every face runs an
// operation through its descriptor's Run. Each descriptor sits in its
// operation's file (readOp in read.go), beside its options, its result
// and its text form; here are only the meta commands, which describe or
// serve the faces themselves and have no Run (the command line answers
// them). (Set in init: the descriptors' Run functions reach back to it.)
var Registry *spec.Registry

func init() {
	Registry = spec.NewRegistry(
		rootsOp, explainOp, readOp, lsOp, statOp, grepOp, wcOp, sliceOp, sortOp, cutOp, findOp,
		writeOp, editOp, patchOp, historyOp, purgeOp, undoOp, mkdirOp, mvOp, cpOp, rmOp, linksOp, storeOp, toolsOp, completionOp, manOp, mcpOp,
	)
}

var (
	min0 = spec.Int64(0)
	min1 = spec.Int64(1)
)

// pathArg is the one PATH argument of most operations.
func pathArg(use sandbox.Need, help string) spec.Arg {
	return spec.Arg{Name: "path", Meta: "PATH", Help: help, Use: use, Complete: spec.CompleteFiles}
}

// stdinArg is the PATH of a filter: "-" (or, on the command line, nothing
// while stdin is a pipe or a file) reads standard input.
func stdinArg(help string) spec.Arg {
	a := pathArg(sandbox.NeedReadFile, help+"; - is standard input (the default on the command line when stdin is a pipe or a file)")
	a.Stdin = true
	return a
}

// Enabled reports whether the policy switches operation name on: its own
// entry in [commands], or the operation's default when the policy says
// nothing. An unknown name is never enabled.
func Enabled(p *policy.Policy, name string) bool { return EnabledIn(Registry, p, name) }

// EnabledIn is Enabled for the operations of reg.
func EnabledIn(reg *spec.Registry, p *policy.Policy, name string) bool {
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
func CommandEnabled(p *policy.Policy, name string) bool { return CheckCommand(p, name) == nil }

// CheckPolicy refuses (config) a policy whose [commands] table names an
// operation that does not exist.
func CheckPolicy(p *policy.Policy) error { return CheckPolicyIn(Registry, p) }

// CheckPolicyIn is CheckPolicy for the operations of reg.
func CheckPolicyIn(reg *spec.Registry, p *policy.Policy) error {
	for name := range p.Commands {
		if _, ok := reg.Lookup(name); !ok {
			return fserr.Errorf(fserr.CodeConfig, p.Source, "%s: [commands]: unknown command %q (one of: %s)",
				policyName(p), name, strings.Join(reg.Names(), ", "))
		}
	}
	return nil
}

func policyName(p *policy.Policy) string {
	if p.Source == "" {
		return "the policy"
	}
	return p.Source
}

// CheckCommand refuses (denied, rule command) an operation the policy
// switches off, or one whose Needs are off. It is the check every
// operation's entry point runs and the one explain reports.
func CheckCommand(p *policy.Policy, name string) error { return CheckCommandIn(Registry, p, name) }

// CheckCommandIn is CheckCommand for the operations of reg.
func CheckCommandIn(reg *spec.Registry, p *policy.Policy, name string) error {
	if err := CheckPolicyIn(reg, p); err != nil {
		return err
	}
	off := func(msg string, args ...any) error {
		return &fserr.Error{Code: fserr.CodeDenied, Rule: fserr.RuleCommand, Msg: fmt.Sprintf(msg, args...)}
	}
	op, ok := reg.Lookup(name)
	if !ok {
		return fserr.Errorf(fserr.CodeUsage, "", "unknown command %q (one of: %s)", name, strings.Join(reg.Names(), ", "))
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

// begin is the first thing every operation does: the policy's switch
// for the operation binds every caller, the command line and a Go
// program alike, and a cancelled context ends it (checked second, so
// that a switched-off command says so whenever it is called).
func begin(ctx context.Context, sb *sandbox.Sandbox, name string) error {
	sb.SetCommand(name) // the journal's records name it
	sb.SetContext(ctx)  // a change gives up waiting for a lock, and checks before it commits, at the deadline
	if err := CheckCommand(sb.Policy(), name); err != nil {
		return err
	}
	return ctx.Err()
}

// The meta commands.

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
		"It never serves the built-in default policy: set FSBOX_CONFIG, give --config, or name the directories (the first is the workdir, the rest read roots, or with --profile reference write roots, as the reference server lets each be written; with a policy they only narrow it: they bound what is served, every rule keeps the anchor the policy gives it, a directory a deny rule matches is config, and under the reference profile each must lie in a writable root and be one no deny or write_deny rule matches or holds). " +
		"The policy is loaded once and Landlock applied once; roots a client announces narrow the served roots, never widen them; a cancelled call stops its walk. " +
		"Each root is opened once, when the server starts, and never again by its path: a root removed, moved away or re-created while the server runs answers every call below it with not_found naming the root and saying to restart the server, and roots (list_allowed_directories) lists it as gone. " +
		"The server is its own binary, fsbox-mcp, installed beside fsbox: a host may run fsbox-mcp [flags] [DIR...] directly, and fsbox mcp runs it in its place (so the MCP SDK's start-up cost is not paid by every other command).",
	Args: []spec.Arg{{Name: "dirs", Meta: "DIR", Help: "directories to serve: the workdir, then read roots (reference profile: write roots)", Many: true, Optional: true, Complete: spec.CompleteDirs}},
	Options: []spec.Option{
		{Name: "profile", Type: spec.String, Meta: "PROFILE", Default: "native", Enum: []string{"native", "reference"}, Help: "tool names and arguments: native (fsbox_COMMAND, as fsbox tools prints them) or reference (the reference MCP filesystem server's)"},
		{Name: "write", Type: spec.Strings, Meta: "DIR", Help: "serve DIR writable too, as a write root beside the workdir (native profile; repeatable; a DIR also listed as an argument becomes writable)"},
		{Name: "http", Type: spec.String, Meta: "ADDR", Help: "serve streamable HTTP on a loopback ADDR (host:port) instead of stdio, at / and /mcp; needs FSBOX_MCP_TOKEN, which every request must carry as a bearer token"},
	},
	Examples: []spec.Example{
		{Cmd: "mcp ~/src/project ~/docs", Says: "serve ~/src/project (writable) and ~/docs (read-only) to an MCP host over stdio", Serves: true},
		{Cmd: "mcp --profile reference ~/src/project", Says: "a drop-in for the reference filesystem server", Serves: true},
	},
	JSONNote: "not JSON on stdout: the MCP protocol",
	Text:     "the MCP protocol",
}
