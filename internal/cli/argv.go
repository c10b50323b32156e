package cli

import (
	"path/filepath"
	"strings"

	ucli "github.com/urfave/cli/v2"
)

// flagSet knows which flag names exist, which take a value, and the
// first name of each (its primary), so argv can spell each flag one way
// (urfave v2 refuses `-E a --exclude b` as "two forms of the same flag").
type flagSet map[string]flagName

// has reports whether name is one of the set's flags.
func (fs flagSet) has(name string) bool { _, ok := fs[name]; return ok }

type flagName struct {
	value   bool   // takes a value
	primary string // the flag's first name
}

func flagsOf(fs []ucli.Flag) flagSet {
	out := flagSet{}
	for _, f := range fs {
		_, isBool := f.(*ucli.BoolFlag)
		names := flagNames(f)
		for _, n := range names {
			out[n] = flagName{value: !isBool, primary: names[0]}
		}
	}
	return out
}

// flagNames is f.Names() without its cost: urfave/cli runs a regexp over
// every name each time Names is called (a v1 migration guard), and this
// runs at every start. The flags here are fsbox's own, so the fields are
// what Names would return.
func flagNames(f ucli.Flag) []string {
	switch f := f.(type) {
	case *ucli.StringFlag:
		return append([]string{f.Name}, f.Aliases...)
	case *ucli.BoolFlag:
		return append([]string{f.Name}, f.Aliases...)
	case *ucli.Int64Flag:
		return append([]string{f.Name}, f.Aliases...)
	case *ucli.StringSliceFlag:
		return append([]string{f.Name}, f.Aliases...)
	}
	return f.Names()
}

// canonical rewrites a flag token to its primary long name.
func (fs flagSet) canonical(tok string) string {
	name, value, hasValue := strings.Cut(strings.TrimLeft(tok, "-"), "=")
	f, ok := fs[name]
	p := f.primary
	if !ok || p == name && strings.HasPrefix(tok, "--") {
		return tok
	}
	out := "-" + p
	if len(p) > 1 {
		out = "--" + p
	}
	if hasValue {
		out += "=" + value
	}
	return out
}

// isNegativeNumber reports whether tok is a negative number, -N or -N.M:
// an argument, not a flag (checked by hand: a regexp compiled at start-up
// costs every call).
func isNegativeNumber(tok string) bool {
	if len(tok) < 2 || tok[0] != '-' {
		return false
	}
	i, digits := 1, 0
	for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
		i, digits = i+1, digits+1
	}
	if digits == 0 {
		return false
	}
	if i < len(tok) && tok[i] == '.' {
		i++
		for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
			i++
		}
	}
	return i == len(tok)
}

// multicall turns `fsbox-NAME args` or `NAME args` into `fsbox NAME args`.
func multicall(args []string, known func(string) bool) []string {
	if len(args) == 0 {
		return []string{"fsbox"}
	}
	base := strings.TrimSuffix(filepath.Base(args[0]), ".exe")
	name := strings.TrimPrefix(base, "fsbox-")
	if base != "fsbox" && known(name) {
		return append([]string{"fsbox", name}, args[1:]...)
	}
	return append([]string{"fsbox"}, args[1:]...)
}

// reorder rewrites argv so urfave/cli v2, which stops at the first
// positional argument, sees every flag: global flags (wherever they stand)
// go before the command name, the command's flags after it, then "--" and
// the positional arguments in their order. "--" in the input ends flags;
// a negative number is an argument; combined short flags (-in, -A3) are
// split. Unknown flags are kept as flags so the parser reports them.
func reorder(args []string, global flagSet, command func(name string) (flagSet, bool)) []string {
	var globals, flags, positional []string
	i := 1
	// take copies flag token args[i] and, if it needs one, its value.
	take := func(dst *[]string, tok string, fs flagSet) {
		*dst = append(*dst, fs.canonical(tok))
		name := strings.TrimLeft(tok, "-")
		if strings.Contains(name, "=") {
			return
		}
		if fs[name].value && i+1 < len(args) {
			i++
			*dst = append(*dst, args[i])
		}
	}
	for ; i < len(args); i++ {
		tok := args[i]
		if tok == "--" || !isFlag(tok) {
			break
		}
		take(&globals, tok, global)
	}
	if i >= len(args) {
		return append([]string{args[0]}, globals...)
	}
	name := args[i]
	cmdFlags, ok := command(name)
	if !ok || name == "--" {
		// Not a command: leave the rest for the parser to complain about.
		return append(append([]string{args[0]}, globals...), args[i:]...)
	}
	for i++; i < len(args); i++ {
		tok := args[i]
		switch {
		case tok == "--":
			positional = append(positional, args[i+1:]...)
			i = len(args)
		case !isFlag(tok) && !(len(tok) == 2 && tok[0] == '-' && cmdFlags.has(tok[1:])):
			// A negative number is an argument, unless it is a short
			// flag of the command's own (-0, --null).
			positional = append(positional, tok)
		default:
			fname := strings.SplitN(strings.TrimLeft(tok, "-"), "=", 2)[0]
			_, isGlobal := global[fname]
			_, isCmd := cmdFlags[fname]
			switch {
			case isGlobal && !isCmd:
				take(&globals, tok, global)
			case !strings.HasPrefix(tok, "--") && len(fname) > 1 && !isCmd:
				flags = append(flags, splitShort(tok, cmdFlags, args, &i)...)
			default:
				take(&flags, tok, cmdFlags)
			}
		}
	}
	out := append([]string{args[0]}, globals...)
	out = append(out, name)
	out = append(out, flags...)
	out = append(out, "--")
	return append(out, positional...)
}

func isFlag(tok string) bool {
	return len(tok) > 1 && tok[0] == '-' && !isNegativeNumber(tok)
}

// splitShort expands "-abc" into "-a -b -c"; when a letter takes a value,
// the rest of the token (or the next argument) is that value.
func splitShort(tok string, fs flagSet, args []string, i *int) []string {
	var out []string
	letters := tok[1:]
	for j := 0; j < len(letters); j++ {
		l := letters[j : j+1]
		out = append(out, fs.canonical("-"+l))
		if fs[l].value {
			if rest := letters[j+1:]; rest != "" {
				out = append(out, rest)
			} else if *i+1 < len(args) {
				*i++
				out = append(out, args[*i])
			}
			return out
		}
	}
	return out
}
