package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/spec"
)

// cliFlags are an operation's flags, generated from its options: fresh
// values on every call, as urfave records what it parsed in them. Only
// the long names: argv reaches the parser with every flag spelt by its
// long name (reorder), so a short -h of the command's own is never taken
// for urfave's help.
func cliFlags(op *spec.Op) []ucli.Flag {
	var out []ucli.Flag
	for i := range op.Options {
		o := &op.Options[i]
		name, usage := o.Flag(), spec.OptionHelp(o)
		switch o.Type {
		case spec.Bool:
			out = append(out, &ucli.BoolFlag{Name: name, Usage: usage})
		case spec.Int:
			out = append(out, &ucli.Int64Flag{Name: name, Usage: usage})
		case spec.Strings:
			out = append(out, &ucli.StringSliceFlag{Name: name, Usage: usage})
		default:
			out = append(out, &ucli.StringFlag{Name: name, Usage: usage})
		}
	}
	for _, a := range op.Args {
		if a.Flag {
			out = append(out, &ucli.StringFlag{Name: a.Name, Usage: a.Help})
		}
	}
	return out
}

// specFlags is an operation's flag set, every spelling of each option.
func specFlags(op *spec.Op) flagSet {
	fs := flagSet{}
	for i := range op.Options {
		o := &op.Options[i]
		f := flagName{value: o.Type != spec.Bool, primary: o.Flag()}
		for _, n := range append([]string{o.Flag(), o.Short}, o.Aliases...) {
			if n != "" {
				fs[n] = f
			}
		}
	}
	for _, a := range op.Args {
		if a.Flag {
			fs[a.Name] = flagName{value: true, primary: a.Name}
		}
	}
	return fs
}

// globalSet is the flag set before the command name.
func (st *state) globalSet() flagSet {
	fs := flagsOf(globalFlags())
	for _, n := range []string{"help", "h", "version"} {
		fs[n] = flagName{primary: n}
	}
	return fs
}

// commandSet is a command's flag set: its own flags, --help, and -h where
// the command gives -h no meaning of its own (grep -h is --no-filename).
func (st *state) commandSet(name string) (flagSet, bool) {
	op, ok := st.reg.Lookup(name)
	if !ok {
		return nil, false
	}
	fs := specFlags(op)
	fs["help"] = flagName{primary: "help"}
	if _, taken := fs["h"]; !taken {
		fs["h"] = flagName{primary: "h"}
	}
	return fs, true
}

// commandOf names the command an argument list (already reordered) runs,
// "" when it names none.
func (st *state) commandOf(args []string) string {
	for _, a := range args[1:] {
		if a == "--" {
			break
		}
		if _, ok := st.reg.Lookup(a); ok {
			return a
		}
	}
	return ""
}

// answerMeta answers what needs no command run: --help, -h, `help [CMD]`,
// --version, and no command at all (usage, exit 2).
func (st *state) answerMeta(args []string, command string) (bool, int) {
	help, version, words := metaWords(args)
	if len(words) > 0 && words[0] == "help" {
		help, command = true, ""
		if len(words) > 1 {
			if _, ok := st.reg.Lookup(words[1]); !ok {
				return true, printError(st.c.Stderr, st.format, usageErr("no command %q (run 'fsbox --help' for the list)", words[1]))
			}
			command = words[1]
		}
	}
	switch {
	case help && command != "":
		op, _ := st.reg.Lookup(command)
		fmt.Fprint(st.stdout, commandHelp(op))
		return true, 0
	case help:
		fmt.Fprint(st.stdout, mainHelp(st.reg, st.enabledFunc()))
		return true, 0
	case version && command == "":
		fmt.Fprintln(st.stdout, VersionLine())
		return true, 0
	case command == "" && len(words) == 0 && !hasGlobalError(args) && isTerminal(st.c.Stderr):
		// A person typed fsbox alone: the usage text, as gh and git give
		// it (a program gets the one-line error below).
		fmt.Fprint(st.c.Stderr, mainHelp(st.reg, st.enabledFunc()))
		return true, tool.ExitCode(fserr.CodeUsage)
	case command == "" && len(words) == 0 && !hasGlobalError(args):
		return true, printError(st.c.Stderr, st.format, usageErr("no command given: fsbox COMMAND [flags] [args] (run 'fsbox --help' for the list)"))
	}
	return false, 0
}

// metaWords reads argv up to "--": whether it asks for help (--help,
// -h) or the version, and its words (what is no flag).
func metaWords(args []string) (help, version bool, words []string) {
	for _, a := range args[1:] {
		if a == "--" {
			break
		}
		switch a {
		case "--help", "-h":
			help = true
		case "--version":
			version = true
		}
		if !strings.HasPrefix(a, "-") {
			words = append(words, a)
		}
	}
	return help, version, words
}

// hasGlobalError: leave a malformed global flag for the parser to report.
func hasGlobalError(args []string) bool {
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") {
			return true
		}
	}
	return false
}

// enabledFunc says which commands the policy in force switches on, for
// the help's list; every command when the policy cannot be loaded.
func (st *state) enabledFunc() func(string) bool {
	config, set := "", false
	for i, a := range st.c.Args {
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			config, set = v, true
		} else if a == "--config" && i+1 < len(st.c.Args) {
			config, set = st.c.Args[i+1], true
		}
	}
	p, err := st.loadPolicy(config, set)
	if err != nil {
		return func(string) bool { return true }
	}
	return func(name string) bool { return opsEnabled(st.reg, p, name) }
}

// Version is set at build time with -ldflags "-X ...cli.Version=..."
// (make build uses git describe); under go install it stays "" and the
// module version from the build info is used.
var Version = ""

// VersionLine is what --version prints: the version, the commit and the
// Go version, from the build info.
func VersionLine() string {
	v, commit, dirty := Version, "", ""
	info, ok := debug.ReadBuildInfo()
	if ok {
		if v == "" && info.Main.Version != "" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "-dirty"
				}
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	line := "fsbox " + v
	if commit != "" {
		if len(commit) > 12 {
			commit = commit[:12]
		}
		line += " commit " + commit + dirty
	}
	return line + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}
