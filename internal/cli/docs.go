package cli

import (
	"fmt"
	"sort"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// This file renders the documentation that ships with fsbox from the
// command registry itself, so it cannot drift from the code: man pages
// (fsbox.1 and fsbox-CMD.1), shell completions, and the `tools` schema.
// internal/gendocs writes the same text into man/ and completions/, and a
// test fails when the checked-in copies are stale.

// ManPage renders fsbox.1 (name "") or fsbox-NAME.1, in roff, section 1.
// It holds no date and nothing that depends on the machine.
func ManPage(name string) (string, error) {
	var b strings.Builder
	if name == "" {
		b.WriteString(".TH FSBOX 1 \"\" \"fsbox\" \"User Commands\"\n.SH NAME\nfsbox \\- sandboxed file tools that print JSON\n")
		b.WriteString(".SH SYNOPSIS\n.B fsbox\n[global flags] COMMAND [flags] [args]\n.br\n.B fsbox-COMMAND\n[flags] [args]\n")
		b.WriteString(".SH DESCRIPTION\nEvery file access passes through one sandbox built from one TOML policy:\nreadable roots, one writable working directory, per-command switches, deny and allow\npatterns, and size limits. Flags may stand before or after arguments; \\fB--\\fR ends flags;\na negative number is an argument.\n")
		b.WriteString(".SH GLOBAL OPTIONS\n")
		for _, f := range globalFlags() {
			writeFlag(&b, f)
		}
		b.WriteString(".TP\n.B --version\nprint the version\n.TP\n.B --help, -h\nshow help\n")
		b.WriteString(".SH COMMANDS\n")
		for _, n := range commandNames() {
			c := registry[n]
			fmt.Fprintf(&b, ".TP\n.B %s %s\n%s (see \\fBfsbox-%s\\fR(1))\n", n, roffEscape(c.argsUsage), roffEscape(c.usage), n)
		}
		b.WriteString(manNotes)
		return b.String(), nil
	}
	c, ok := registry[name]
	if !ok {
		return "", usageErr("no command %q", name)
	}
	fmt.Fprintf(&b, ".TH FSBOX-%s 1 \"\" \"fsbox\" \"User Commands\"\n.SH NAME\nfsbox-%s \\- %s\n", strings.ToUpper(name), name, roffEscape(c.usage))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.B fsbox %s\n[flags] %s\n", name, roffEscape(c.argsUsage))
	acc, _ := sandbox.CommandAccess(name)
	fmt.Fprintf(&b, ".SH DESCRIPTION\n%s.\nAccess: %s.", roffEscape(upperFirst(c.usage)), acc)
	if name == "rm" {
		b.WriteString(" Off unless the policy turns it on.")
	}
	b.WriteString("\n")
	if len(c.flags) > 0 {
		b.WriteString(".SH OPTIONS\n")
		for _, f := range c.flags {
			writeFlag(&b, f)
		}
	}
	if out, ok := outputs[name]; ok {
		fmt.Fprintf(&b, ".SH OUTPUT\nJSON: %s.\n.br\n\\-\\-format text: %s.\n", roffEscape(out.json), roffEscape(out.text))
	}
	b.WriteString(".SH SEE ALSO\n\\fBfsbox\\fR(1)\n")
	return b.String(), nil
}

func writeFlag(b *strings.Builder, f ucli.Flag) {
	names := f.Names()
	var parts []string
	for _, n := range names {
		if len(n) == 1 {
			parts = append(parts, "-"+n)
		} else {
			parts = append(parts, "--"+n)
		}
	}
	arg := ""
	if _, isBool := f.(*ucli.BoolFlag); !isBool {
		arg = " " + strings.ToUpper(strings.ReplaceAll(names[0], "-", "_"))
	}
	usage := ""
	if d, ok := f.(ucli.DocGenerationFlag); ok {
		usage = d.GetUsage()
		if env := d.GetEnvVars(); len(env) > 0 {
			usage += " (env " + strings.Join(env, ", ") + ")"
		}
	}
	fmt.Fprintf(b, ".TP\n.B %s%s\n%s\n", roffEscape(strings.Join(parts, ", ")), roffEscape(arg), roffEscape(usage))
}

func roffEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// flagWords lists a command's flags as completion words.
func flagWords(fs []ucli.Flag) []string {
	var out []string
	for _, f := range fs {
		for _, n := range f.Names() {
			if len(n) == 1 {
				out = append(out, "-"+n)
			} else {
				out = append(out, "--"+n)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Completion renders the completion script for bash, zsh or fish.
func Completion(shell string) (string, error) {
	names := commandNames()
	var global []string
	for _, f := range globalFlags() {
		global = append(global, "--"+f.Names()[0])
	}
	global = append(global, "--version", "--help")
	var b strings.Builder
	switch shell {
	case "bash":
		b.WriteString("# bash completion for fsbox (generated; do not edit)\n_fsbox() {\n  local cur cmd i\n  cur=\"${COMP_WORDS[COMP_CWORD]}\"\n  cmd=\"\"\n")
		b.WriteString("  case \"${COMP_WORDS[0]##*/}\" in fsbox-*) cmd=\"${COMP_WORDS[0]##*/fsbox-}\"; cmd=\"${cmd#fsbox-}\" ;; esac\n")
		b.WriteString("  for ((i=1; i<COMP_CWORD; i++)); do case \"${COMP_WORDS[i]}\" in -*) ;; *) [ -z \"$cmd\" ] && cmd=\"${COMP_WORDS[i]}\" ;; esac; done\n")
		b.WriteString("  if [ -z \"$cmd\" ]; then\n    COMPREPLY=( $(compgen -W \"" + strings.Join(names, " ") + " " + strings.Join(global, " ") + "\" -- \"$cur\") )\n    return\n  fi\n")
		b.WriteString("  case \"$cmd\" in\n")
		for _, n := range names {
			fmt.Fprintf(&b, "    %s) COMPREPLY=( $(compgen -W \"%s %s\" -- \"$cur\") ) ;;\n", n, strings.Join(flagWords(registry[n].flags), " "), strings.Join(global, " "))
		}
		b.WriteString("  esac\n  if [[ \"$cur\" != -* ]]; then COMPREPLY+=( $(compgen -f -- \"$cur\") ); fi\n}\ncomplete -o filenames -F _fsbox fsbox\n")
		for _, n := range names {
			fmt.Fprintf(&b, "complete -o filenames -F _fsbox fsbox-%s\n", n)
		}
	case "zsh":
		b.WriteString("#compdef fsbox")
		for _, n := range names {
			b.WriteString(" fsbox-" + n)
		}
		b.WriteString("\n# zsh completion for fsbox (generated; do not edit)\n_fsbox() {\n  local cmd=${service#fsbox-}\n  [[ $service == fsbox ]] && cmd=''\n")
		b.WriteString("  if [[ -z $cmd ]]; then\n    if (( CURRENT == 2 )); then\n      local -a cmds\n      cmds=(\n")
		for _, n := range names {
			fmt.Fprintf(&b, "        '%s:%s'\n", n, strings.ReplaceAll(registry[n].usage, "'", `'\''`))
		}
		b.WriteString("      )\n      _describe command cmds\n      return\n    fi\n    cmd=${words[2]}\n  fi\n  case $cmd in\n")
		for _, n := range names {
			fmt.Fprintf(&b, "    %s) _arguments '*:file:_files' %s ;;\n", n, zshFlags(registry[n].flags))
		}
		b.WriteString("  esac\n}\n_fsbox \"$@\"\n")
	case "fish":
		b.WriteString("# fish completion for fsbox (generated; do not edit)\n")
		for _, f := range globalFlags() {
			fmt.Fprintf(&b, "complete -c fsbox -l %s -d %s\n", f.Names()[0], fishQuote(flagUsage(f)))
		}
		for _, n := range names {
			fmt.Fprintf(&b, "complete -c fsbox -f -n __fish_use_subcommand -a %s -d %s\n", n, fishQuote(registry[n].usage))
			for _, f := range registry[n].flags {
				for _, cmd := range []string{"-c fsbox -n '__fish_seen_subcommand_from " + n + "'", "-c fsbox-" + n} {
					fmt.Fprintf(&b, "complete %s%s -d %s\n", cmd, fishNames(f), fishQuote(flagUsage(f)))
				}
			}
		}
	default:
		return "", usageErr("completion: shell must be bash, zsh or fish, got %q", shell)
	}
	return b.String(), nil
}

func flagUsage(f ucli.Flag) string {
	if d, ok := f.(ucli.DocGenerationFlag); ok {
		return d.GetUsage()
	}
	return ""
}

func fishNames(f ucli.Flag) string {
	var s string
	for _, n := range f.Names() {
		if len(n) == 1 {
			s += " -s " + n
		} else {
			s += " -l " + n
		}
	}
	if _, isBool := f.(*ucli.BoolFlag); !isBool {
		s += " -r"
	}
	return s
}

func fishQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

func zshFlags(fs []ucli.Flag) string {
	var parts []string
	for _, f := range fs {
		val := ""
		if _, isBool := f.(*ucli.BoolFlag); !isBool {
			val = ":value:"
		}
		u := strings.NewReplacer("'", `'\''`, "[", `\[`, "]", `\]`, ":", `\:`).Replace(flagUsage(f))
		for _, n := range f.Names() {
			dash := "--"
			if len(n) == 1 {
				dash = "-"
			}
			parts = append(parts, fmt.Sprintf("'%s%s[%s]%s'", dash, n, u, val))
		}
	}
	return strings.Join(parts, " ")
}
