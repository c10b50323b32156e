package cli

import (
	"fmt"
	"sort"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// This file renders the documentation that ships with fsbox from the
// operation descriptors, so it cannot drift from the code: man pages
// (fsbox.1 and fsbox-CMD.1) and shell completions. internal/gendocs writes
// the same text into man/ and completions/, and a test fails when the
// checked-in copies are stale.

// ManPage renders fsbox.1 (name "") or fsbox-NAME.1, in roff, section 1.
// It holds no date and nothing that depends on the machine.
func ManPage(reg *spec.Registry, name string) (string, error) {
	var b strings.Builder
	if name == "" {
		b.WriteString(".TH FSBOX 1 \"\" \"fsbox\" \"User Commands\"\n.SH NAME\nfsbox \\- sandboxed file tools that print JSON\n")
		b.WriteString(".SH SYNOPSIS\n.B fsbox\n[global flags] COMMAND [flags] [args]\n.br\n.B fsbox-COMMAND\n[flags] [args]\n.br\n.B fsbox help\nCOMMAND\n")
		b.WriteString(".SH DESCRIPTION\nEvery file access passes through one sandbox built from one TOML policy:\nreadable roots, one writable working directory, per-command switches, deny and allow\npatterns, and size limits. Flags may stand before or after arguments; \\fB--\\fR ends flags;\na negative number is an argument.\n")
		b.WriteString(".SH GLOBAL OPTIONS\n")
		writeManFlags(&b, globalHelpFlags())
		b.WriteString(".SH COMMANDS\n")
		for _, op := range reg.Ops() {
			fmt.Fprintf(&b, ".TP\n.B %s %s\n%s (see \\fBfsbox-%s\\fR(1))\n", op.Name, roffEscape(op.Usage()), roffEscape(op.Summary), op.Name)
		}
		b.WriteString(".SH EXAMPLES\n")
		for _, op := range reg.Ops() {
			writeManExample(&b, op.Examples[0])
		}
		b.WriteString(manNotes)
		b.WriteString(".SS The [commands] table\nEach command's default in the built-in policy:\n.nf\n" + roffEscape(CommandsTOML(reg)) + ".fi\n")
		writeManExit(&b, true)
		return roffSafe(b.String()), nil
	}
	op, ok := reg.Lookup(name)
	if !ok {
		return "", usageErr("no command %q", name)
	}
	fmt.Fprintf(&b, ".TH FSBOX-%s 1 \"\" \"fsbox\" \"User Commands\"\n.SH NAME\nfsbox-%s \\- %s\n", strings.ToUpper(name), name, roffEscape(op.Summary))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.B fsbox %s\n[flags] %s\n", name, roffEscape(op.Usage()))
	fmt.Fprintf(&b, ".SH DESCRIPTION\n%s\n.PP\nAccess: %s.", roffEscape(op.Help), op.Class)
	if op.Off {
		b.WriteString(" Off unless the policy turns it on.")
	}
	if len(op.Needs) > 0 {
		fmt.Fprintf(&b, " Runs only while %s are on too.", strings.Join(op.Needs, " and "))
	}
	b.WriteString("\n")
	if len(op.Args) > 0 {
		b.WriteString(".SH ARGUMENTS\n")
		for _, a := range op.Args {
			h := a.Help
			if a.Use != sandbox.NeedNone {
				h += " (" + spec.PathHelp + "; needs " + string(a.Use) + ")"
			}
			fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", roffEscape(a.Meta), roffEscape(h))
		}
	}
	if fs := commandFlags(op); len(fs) > 0 {
		b.WriteString(".SH OPTIONS\n")
		writeManFlags(&b, fs)
	}
	b.WriteString(".SH GLOBAL OPTIONS\n")
	writeManFlags(&b, globalHelpFlags())
	if op.Text != "" {
		out := ""
		if o := spec.Outline(op); o != "" {
			out = "JSON: " + o
			if op.JSONNote != "" {
				out += "; " + op.JSONNote
			}
		} else {
			out = op.JSONNote
		}
		fmt.Fprintf(&b, ".SH OUTPUT\n%s.\n.br\n\\-\\-format text: %s.\n", roffEscape(out), roffEscape(op.Text))
	}
	b.WriteString(".SH EXAMPLES\n")
	for _, e := range op.Examples {
		writeManExample(&b, e)
	}
	writeManExit(&b, op.NoMatch)
	b.WriteString(".SH SEE ALSO\n\\fBfsbox\\fR(1)\n")
	return roffSafe(b.String()), nil
}

func writeManFlags(b *strings.Builder, fs []helpFlag) {
	for _, f := range fs {
		fmt.Fprintf(b, ".TP\n.B %s\n%s\n", roffEscape(f.names), roffEscape(f.text))
	}
}

func writeManExample(b *strings.Builder, e spec.Example) {
	fmt.Fprintf(b, ".TP\n.B fsbox %s\n%s\n", roffEscape(e.Cmd), roffEscape(upperFirst(e.Says)+"."))
}

func writeManExit(b *strings.Builder, noMatch bool) {
	b.WriteString(".SH EXIT STATUS\n")
	for _, l := range tool.ExitLinesOf(noMatch) {
		status, says, _ := strings.Cut(l, ": ")
		fmt.Fprintf(b, ".TP\n.B %s\n%s\n", roffEscape(status), roffEscape(upperFirst(says)+"."))
	}
}

// CommandsTOML is the policy's [commands] table with every command at its
// built-in default.
func CommandsTOML(reg *spec.Registry) string {
	var b strings.Builder
	b.WriteString("[commands]\n")
	w := 0
	for _, op := range reg.Ops() {
		w = max(w, len(op.Name))
	}
	for _, op := range reg.Ops() {
		fmt.Fprintf(&b, "%-*s = %-5v # %s\n", w, op.Name, !op.Off, op.Class)
	}
	return b.String()
}

// CommandTable is the README's table of commands (Markdown).
func CommandTable(reg *spec.Registry) string {
	var b strings.Builder
	b.WriteString("| command | arguments | access | what it does |\n|---|---|---|---|\n")
	for _, op := range reg.Ops() {
		args := op.Usage()
		if args != "" {
			args = "`" + args + "`"
		}
		s := op.Summary
		if op.Off {
			s += " (off by default)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", op.Name, args, op.Class, strings.ReplaceAll(s, "|", `\|`))
	}
	return b.String()
}

// roffEscape makes text safe inside a roff line.
func roffEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	return s
}

// roffMacros are the requests fsbox's pages use; any other line that
// starts with '.' or '\” is text and gets a zero-width escape, or roff
// would take it for a request and drop it (".gitignore ...").
var roffMacros = map[string]bool{"TH": true, "SH": true, "SS": true, "TP": true, "B": true, "I": true, "BR": true,
	"br": true, "PP": true, "IP": true, "RS": true, "RE": true, "nf": true, "fi": true}

func roffSafe(page string) string {
	lines := strings.Split(page, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, ".") && !strings.HasPrefix(l, "'") {
			continue
		}
		macro, _, _ := strings.Cut(l[1:], " ")
		if l[0] == '.' && roffMacros[macro] {
			continue
		}
		lines[i] = `\&` + l
	}
	return strings.Join(lines, "\n")
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func flagUsage(f ucli.Flag) string {
	if d, ok := f.(ucli.DocGenerationFlag); ok {
		return d.GetUsage()
	}
	return ""
}

func envNote(f ucli.Flag) string {
	if d, ok := f.(ucli.DocGenerationFlag); ok {
		if env := d.GetEnvVars(); len(env) > 0 {
			return " (env " + strings.Join(env, ", ") + ")"
		}
	}
	return ""
}

// valueWords are what a shell completes for an option's value: its enum,
// "@files", "@dirs", "@commands", or nothing.
func valueWords(reg *spec.Registry, enum []string, c spec.Complete) []string {
	switch {
	case len(enum) > 0:
		return enum
	case c == spec.CompleteFiles:
		return []string{"@files"}
	case c == spec.CompleteDirs:
		return []string{"@dirs"}
	case c == spec.CompleteCommands:
		return reg.Names()
	}
	return nil
}

// argComplete is what a positional argument completes to.
func argComplete(reg *spec.Registry, a spec.Arg) []string {
	c := a.Complete
	if c == "" && a.Use != sandbox.NeedNone {
		c = spec.CompleteFiles
	}
	return valueWords(reg, a.Enum, c)
}

// bashWords renders completion words as a compgen call.
func bashWords(words []string) string {
	switch {
	case len(words) == 0:
		return "COMPREPLY=()"
	case words[0] == "@files":
		return `COMPREPLY=( $(compgen -f -- "$cur") )`
	case words[0] == "@dirs":
		return `COMPREPLY=( $(compgen -d -- "$cur") )`
	}
	return `COMPREPLY=( $(compgen -W "` + strings.Join(words, " ") + `" -- "$cur") )`
}

func flagSpellings(o *spec.Option) []string {
	out := []string{"--" + o.Flag()}
	if o.Short != "" {
		out = append(out, "-"+o.Short)
	}
	for _, a := range o.Aliases {
		out = append(out, "--"+a)
	}
	return out
}

// Completion renders the completion script for bash, zsh or fish.
func Completion(reg *spec.Registry, shell string) (string, error) {
	names := reg.Names()
	var global, globalValued []string
	for _, f := range globalFlags() {
		global = append(global, "--"+f.Names()[0])
		if globalMeta[f.Names()[0]] != "" {
			globalValued = append(globalValued, "--"+f.Names()[0])
		}
	}
	global = append(global, "--version", "--help")
	var b strings.Builder
	switch shell {
	case "bash":
		writeBash(&b, reg, names, global, globalValued)
	case "zsh":
		writeZsh(&b, reg, names)
	case "fish":
		writeFish(&b, reg, names)
	default:
		return "", usageErr("completion: shell must be bash, zsh or fish, got %q", shell)
	}
	return b.String(), nil
}

func writeBash(b *strings.Builder, reg *spec.Registry, names, global, globalValued []string) {
	b.WriteString("# bash completion for fsbox (generated; do not edit)\n")
	// _fsbox_valued CMD FLAG: does FLAG take a value?
	b.WriteString("_fsbox_valued() {\n  case \"$2\" in " + strings.Join(globalValued, "|") + ") return 0 ;; esac\n  case \"$1 $2\" in\n")
	for _, op := range reg.Ops() {
		var pats []string
		for i := range op.Options {
			o := &op.Options[i]
			if o.Type == spec.Bool {
				continue
			}
			for _, s := range flagSpellings(o) {
				pats = append(pats, fmt.Sprintf("%q", op.Name+" "+s))
			}
		}
		for _, a := range op.Args {
			if a.Flag {
				pats = append(pats, fmt.Sprintf("%q", op.Name+" --"+a.Name))
			}
		}
		if len(pats) > 0 {
			fmt.Fprintf(b, "    %s) return 0 ;;\n", strings.Join(pats, "|"))
		}
	}
	b.WriteString("  esac\n  return 1\n}\n")
	b.WriteString("_fsbox() {\n  local cur prev cmd w i npos=0 skip=0\n  cur=\"${COMP_WORDS[COMP_CWORD]}\"\n  prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n  cmd=\"\"\n")
	b.WriteString("  w=\"${COMP_WORDS[0]##*/}\"\n  case \"$w\" in fsbox-*) cmd=\"${w#fsbox-}\" ;; esac\n")
	b.WriteString("  for ((i=1; i<COMP_CWORD; i++)); do\n    w=\"${COMP_WORDS[i]}\"\n    if ((skip)); then skip=0; continue; fi\n")
	b.WriteString("    case \"$w\" in\n      --*=*) ;;\n      -*) _fsbox_valued \"$cmd\" \"$w\" && skip=1 ;;\n      *) if [ -z \"$cmd\" ]; then cmd=\"$w\"; else npos=$((npos+1)); fi ;;\n    esac\n  done\n")
	b.WriteString("  if ((skip)); then\n    case \"$prev\" in\n")
	for _, f := range globalFlags() {
		n := f.Names()[0]
		if vs := globalValues[n]; len(vs) > 0 {
			fmt.Fprintf(b, "      --%s) %s; return ;;\n", n, bashWords(vs))
		} else if globalMeta[n] != "" {
			fmt.Fprintf(b, "      --%s) %s; return ;;\n", n, bashWords([]string{"@files"}))
		}
	}
	b.WriteString("    esac\n    case \"$cmd $prev\" in\n")
	for _, op := range reg.Ops() {
		for i := range op.Options {
			o := &op.Options[i]
			if o.Type == spec.Bool {
				continue
			}
			var pats []string
			for _, s := range flagSpellings(o) {
				pats = append(pats, fmt.Sprintf("%q", op.Name+" "+s))
			}
			fmt.Fprintf(b, "      %s) %s; return ;;\n", strings.Join(pats, "|"), bashWords(valueWords(reg, append(o.Enum, o.Values...), o.Complete)))
		}
	}
	b.WriteString("    esac\n    COMPREPLY=(); return\n  fi\n")
	b.WriteString("  if [ -z \"$cmd\" ]; then\n    " + bashWords(append(append([]string{}, names...), global...)) + "\n    return\n  fi\n")
	b.WriteString("  case \"$cmd\" in\n")
	for _, op := range reg.Ops() {
		var fl []string
		for i := range op.Options {
			fl = append(fl, flagSpellings(&op.Options[i])...)
		}
		for _, a := range op.Args {
			if a.Flag {
				fl = append(fl, "--"+a.Name)
			}
		}
		sort.Strings(fl)
		fl = append(append(fl, "--help"), global...)
		fmt.Fprintf(b, "    %s)\n      if [[ \"$cur\" == -* ]]; then %s; return; fi\n      case $npos in\n", op.Name, bashWords(fl))
		for i, a := range op.Args {
			if a.CLIOnly {
				continue
			}
			pos := fmt.Sprint(i)
			if a.Many {
				pos = "*"
			}
			fmt.Fprintf(b, "        %s) %s ;;\n", pos, bashWords(argComplete(reg, a)))
		}
		b.WriteString("        *) COMPREPLY=() ;;\n      esac ;;\n")
	}
	b.WriteString("  esac\n}\ncomplete -o filenames -F _fsbox fsbox\n")
	for _, n := range names {
		fmt.Fprintf(b, "complete -o filenames -F _fsbox fsbox-%s\n", n)
	}
}

func zshAction(words []string) string {
	switch {
	case len(words) == 0:
		return " "
	case words[0] == "@files":
		return "_files"
	case words[0] == "@dirs":
		return "_files -/"
	}
	return "(" + strings.Join(words, " ") + ")"
}

func zshQuote(s string) string {
	return strings.NewReplacer("'", `'\''`, "[", `\[`, "]", `\]`, ":", `\:`).Replace(s)
}

func writeZsh(b *strings.Builder, reg *spec.Registry, names []string) {
	b.WriteString("#compdef fsbox")
	for _, n := range names {
		b.WriteString(" fsbox-" + n)
	}
	b.WriteString("\n# zsh completion for fsbox (generated; do not edit)\n_fsbox() {\n  local cmd=${service#fsbox-}\n  [[ $service == fsbox ]] && cmd=''\n")
	b.WriteString("  if [[ -z $cmd ]]; then\n    _arguments -C \\\n")
	for _, f := range globalFlags() {
		n := f.Names()[0]
		val := ""
		if vs := globalValues[n]; len(vs) > 0 {
			val = ":" + globalMeta[n] + ":" + zshAction(vs)
		} else if globalMeta[n] != "" {
			val = ":" + globalMeta[n] + ":_files"
		}
		fmt.Fprintf(b, "      '--%s[%s]%s' \\\n", n, zshQuote(flagUsage(f)), val)
	}
	b.WriteString("      '--version[print the version]' '(-h --help)'{-h,--help}'[show help]' \\\n      '1:command:->cmds' '*::arg:->args'\n")
	b.WriteString("    case $state in\n      cmds)\n        local -a cmds\n        cmds=(\n")
	for _, op := range reg.Ops() {
		fmt.Fprintf(b, "          '%s:%s'\n", op.Name, strings.ReplaceAll(op.Summary, "'", `'\''`))
	}
	b.WriteString("        )\n        _describe command cmds\n        return ;;\n    esac\n    cmd=${words[1]}\n  fi\n  case $cmd in\n")
	for _, op := range reg.Ops() {
		var parts []string
		for i := range op.Options {
			o := &op.Options[i]
			val := ""
			if o.Type != spec.Bool {
				val = ":" + o.Meta + ":" + zshAction(valueWords(reg, append(o.Enum, o.Values...), o.Complete))
			}
			for _, s := range flagSpellings(o) {
				parts = append(parts, fmt.Sprintf("'%s[%s]%s'", s, zshQuote(spec.OptionHelp(o)), val))
			}
		}
		for i, a := range op.Args {
			if a.CLIOnly {
				continue
			}
			pos := fmt.Sprint(i + 1)
			if a.Many {
				pos = "*"
			}
			opt := ""
			if a.Optional && !a.Many {
				opt = ":"
			}
			parts = append(parts, fmt.Sprintf("'%s:%s%s:%s'", pos, opt, a.Meta, zshAction(argComplete(reg, a))))
		}
		fmt.Fprintf(b, "    %s) _arguments %s ;;\n", op.Name, strings.Join(parts, " "))
	}
	b.WriteString("  esac\n}\n_fsbox \"$@\"\n")
}

func fishQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

func fishAction(words []string) string {
	switch {
	case len(words) == 0:
		return " -x"
	case words[0] == "@files":
		return " -r -F"
	case words[0] == "@dirs":
		return " -x -a '(__fish_complete_directories)'"
	}
	return " -x -a " + fishQuote(strings.Join(words, " "))
}

func writeFish(b *strings.Builder, reg *spec.Registry, names []string) {
	b.WriteString("# fish completion for fsbox (generated; do not edit)\n")
	for _, f := range globalFlags() {
		n := f.Names()[0]
		val := ""
		if vs := globalValues[n]; len(vs) > 0 {
			val = fishAction(vs)
		} else if globalMeta[n] != "" {
			val = fishAction([]string{"@files"})
		}
		fmt.Fprintf(b, "complete -c fsbox -l %s%s -d %s\n", n, val, fishQuote(flagUsage(f)))
	}
	for _, op := range reg.Ops() {
		fmt.Fprintf(b, "complete -c fsbox -f -n __fish_use_subcommand -a %s -d %s\n", op.Name, fishQuote(op.Summary))
		cmds := []string{"-c fsbox -n '__fish_seen_subcommand_from " + op.Name + "'", "-c fsbox-" + op.Name}
		for i := range op.Options {
			o := &op.Options[i]
			names := " -l " + o.Flag()
			if o.Short != "" {
				names += " -s " + o.Short
			}
			for _, a := range o.Aliases {
				names += " -l " + a
			}
			val := ""
			if o.Type != spec.Bool {
				val = fishAction(valueWords(reg, append(o.Enum, o.Values...), o.Complete))
			}
			for _, c := range cmds {
				fmt.Fprintf(b, "complete %s%s%s -d %s\n", c, names, val, fishQuote(spec.OptionHelp(o)))
			}
		}
		if len(op.Args) > 0 && !op.Args[0].CLIOnly {
			if ws := argComplete(reg, op.Args[0]); len(ws) > 0 && !strings.HasPrefix(ws[0], "@") {
				for _, c := range cmds {
					fmt.Fprintf(b, "complete %s -f -a %s\n", c, fishQuote(strings.Join(ws, " ")))
				}
			}
		}
	}
}
