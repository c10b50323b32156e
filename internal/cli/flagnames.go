package cli

import (
	"fmt"

	ucli "github.com/urfave/cli/v2"
)

// The parser's flags carry their names ready. urfave/cli v2 finds a flag
// by asking each flag of the command for its Names, and Names runs a
// regexp over every name (FlagNames strips the "name, alias" form of v1);
// it finds one for every flag at every call (runFlagActions asks IsSet of
// each, and IsSet of a flag not given looks it up among all the command's
// flags, twice), so the lookups cost regexp runs quadratic in the number
// of flags: about 0.4 M instructions of a stat call, 5 M of a grep call.
// A flag here answers Names from its fields (flagNames), found once.
type (
	namedBool struct {
		*ucli.BoolFlag
		names []string
	}
	namedInt64 struct {
		*ucli.Int64Flag
		names []string
	}
	namedString struct {
		*ucli.StringFlag
		names []string
	}
	namedStrings struct {
		*ucli.StringSliceFlag
		names []string
	}
)

func (f namedBool) Names() []string    { return f.names }
func (f namedInt64) Names() []string   { return f.names }
func (f namedString) Names() []string  { return f.names }
func (f namedStrings) Names() []string { return f.names }

// withNames are the parser's flags for fs (the kinds cliFlags and
// globalFlags make), each answering Names from names found once.
func withNames(fs []ucli.Flag) []ucli.Flag {
	out := make([]ucli.Flag, len(fs))
	for i, f := range fs {
		switch f := f.(type) {
		case *ucli.BoolFlag:
			out[i] = namedBool{f, flagNames(f)}
		case *ucli.Int64Flag:
			out[i] = namedInt64{f, flagNames(f)}
		case *ucli.StringFlag:
			out[i] = namedString{f, flagNames(f)}
		case *ucli.StringSliceFlag:
			out[i] = namedStrings{f, flagNames(f)}
		default:
			panic(fmt.Sprintf("cli: withNames: a %T flag", f))
		}
	}
	return out
}
