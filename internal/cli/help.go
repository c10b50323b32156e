package cli

import (
	"fmt"
	"strings"

	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// helpFlag is one line of a flag table: "-i, --ignore-case" and its text.
type helpFlag struct{ names, text string }

// optionNames spells an option's flags as a user types them, with its
// metavariable: "-A, --after-context N".
func optionNames(o *spec.Option) string {
	var parts []string
	if o.Short != "" {
		parts = append(parts, "-"+o.Short)
	}
	parts = append(parts, "--"+o.Flag())
	for _, a := range o.Aliases {
		parts = append(parts, "--"+a)
	}
	s := strings.Join(parts, ", ")
	if o.Type != spec.Bool {
		meta := o.Meta
		if meta == "" {
			meta = "VALUE"
		}
		s += " " + meta
	}
	return s
}

// commandFlags lists an operation's flags for help and man pages.
func commandFlags(op *spec.Op) []helpFlag {
	var out []helpFlag
	for i := range op.Options {
		o := &op.Options[i]
		text := spec.OptionHelp(o)
		if len(o.Enum) > 0 {
			text += "; one of " + strings.Join(o.Enum, ", ")
		}
		out = append(out, helpFlag{optionNames(o), text})
	}
	for _, a := range op.Args {
		if a.Flag {
			out = append(out, helpFlag{"--" + a.Name + " " + a.Meta, a.Help + " (or as the argument " + a.Meta + ")"})
		}
	}
	return out
}

// globalHelpFlags lists the global flags, --help and --version.
func globalHelpFlags() []helpFlag {
	var out []helpFlag
	for _, f := range globalFlags() {
		name := f.Names()[0]
		s := "--" + name
		if m := globalMeta[name]; m != "" {
			s += " " + m
		}
		out = append(out, helpFlag{s, flagUsage(f) + envNote(f)})
	}
	return append(out, helpFlag{"-h, --help", "show help (fsbox help COMMAND too); -h is a flag of its own in grep and sort"},
		helpFlag{"--version", "print the version, the commit and the Go version"})
}

func writeFlagTable(b *strings.Builder, fs []helpFlag) {
	w := 0
	for _, f := range fs {
		w = max(w, len(f.names))
	}
	w = min(w, 32)
	for _, f := range fs {
		if len(f.names) > w {
			fmt.Fprintf(b, "  %s\n  %*s  %s\n", f.names, w, "", f.text)
			continue
		}
		fmt.Fprintf(b, "  %-*s  %s\n", w, f.names, f.text)
	}
}

// commandHelp is `fsbox COMMAND --help`.
func commandHelp(op *spec.Op) string {
	var b strings.Builder
	fmt.Fprintf(&b, "fsbox %s - %s\n\nUsage:\n  fsbox %s [flags] %s\n", op.Name, op.Summary, op.Name, op.Usage())
	if op.Help != "" {
		b.WriteString("\n" + wrap(op.Help, 76, "") + "\n")
	}
	if len(op.Args) > 0 {
		b.WriteString("\nArguments:\n")
		var fs []helpFlag
		for _, a := range op.Args {
			h := a.Help
			if a.Use != sandbox.NeedNone {
				h += " (relative: from the workdir)"
			}
			if len(a.Enum) > 0 {
				h += "; one of " + strings.Join(a.Enum, ", ")
			}
			fs = append(fs, helpFlag{a.Meta, h})
		}
		writeFlagTable(&b, fs)
	}
	if fs := commandFlags(op); len(fs) > 0 {
		b.WriteString("\nFlags:\n")
		writeFlagTable(&b, fs)
	}
	b.WriteString("\nGlobal flags:\n")
	writeFlagTable(&b, globalHelpFlags())
	b.WriteString("\nExamples:\n")
	for _, e := range op.Examples {
		fmt.Fprintf(&b, "  fsbox %s\n      %s\n", e.Cmd, e.Says)
	}
	if op.Text != "" {
		fmt.Fprintf(&b, "\nOutput:\n  JSON: %s\n", spec.Outline(op))
		if op.JSONNote != "" {
			fmt.Fprintf(&b, "  (%s)\n", op.JSONNote)
		}
		fmt.Fprintf(&b, "  --format text: %s\n", op.Text)
	}
	b.WriteString("\nExit status:\n")
	for _, l := range tool.ExitLinesOf(op.NoMatch) {
		b.WriteString("  " + l + "\n")
	}
	fmt.Fprintf(&b, "\nSee fsbox man %s for the manual page.\n", op.Name)
	return b.String()
}

// mainHelp is `fsbox --help`: the commands the policy switches on, and
// the others marked off.
func mainHelp(reg *spec.Registry, enabled func(string) bool) string {
	var b strings.Builder
	b.WriteString("fsbox - sandboxed file tools that print JSON\n\nUsage:\n  fsbox [global flags] COMMAND [flags] [args]\n  fsbox-COMMAND [flags] [args]\n  fsbox help COMMAND\n\nCommands:\n")
	var fs []helpFlag
	var off []string
	for _, op := range reg.Ops() {
		if !enabled(op.Name) {
			off = append(off, op.Name)
			continue
		}
		fs = append(fs, helpFlag{op.Name, op.Summary})
	}
	writeFlagTable(&b, fs)
	if len(off) > 0 {
		b.WriteString("\nSwitched off by the policy: " + strings.Join(off, ", ") + "\n")
	}
	b.WriteString("\nGlobal flags:\n")
	writeFlagTable(&b, globalHelpFlags())
	b.WriteString("\nEvery file access passes through one sandbox built from one TOML policy; fsbox roots shows it.\nRun 'fsbox COMMAND --help' or 'fsbox man' for more.\n")
	return b.String()
}

// wrap fills text to width columns, each line after the first indented.
func wrap(text string, width int, indent string) string {
	var b strings.Builder
	col := 0
	for _, w := range strings.Fields(text) {
		if col > 0 && col+1+len(w) > width {
			b.WriteString("\n" + indent)
			col = len(indent)
		} else if col > 0 {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += len(w)
	}
	return b.String()
}

// opsEnabled reports whether the policy lets name run.
func opsEnabled(reg *spec.Registry, p *policy.Policy, name string) bool {
	return ops.CheckCommandIn(reg, p, name) == nil
}

// suggestFlag names the spelling nearest an unknown flag, as git and gh
// do: "; did you mean --ignore-case?" ("" when none is near).
func suggestFlag(op *spec.Op, err error) string {
	bad, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return ""
	}
	bad = strings.TrimLeft(bad, "-")
	var names []string
	for i := range op.Options {
		o := &op.Options[i]
		for _, n := range append([]string{o.Flag(), o.Short}, o.Aliases...) {
			if n != "" {
				names = append(names, n)
			}
		}
	}
	for _, f := range globalFlags() {
		names = append(names, f.Names()[0])
	}
	best := spec.Nearest(bad, names)
	if best == "" || (len(bad) == 1 && len(best) == 1) {
		return fmt.Sprintf(" (fsbox %s --help lists its flags)", op.Name)
	}
	if len(best) == 1 {
		return "; did you mean -" + best + "?"
	}
	return "; did you mean --" + best + "?"
}
