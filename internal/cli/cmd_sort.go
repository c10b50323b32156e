package cli

import (
	ucli "github.com/urfave/cli/v2"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	register(&command{
		name:      "sort",
		usage:     "sort a file's lines (byte order, as LC_ALL=C sort)",
		argsUsage: "PATH",
		minArgs:   1, maxArgs: 1,
		flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "reverse", Aliases: []string{"r"}, Usage: "reverse the order"},
			&ucli.BoolFlag{Name: "numeric", Aliases: []string{"n"}, Usage: "compare leading numbers, as sort -n"},
			&ucli.BoolFlag{Name: "ignore-case", Aliases: []string{"f"}, Usage: "fold lower case to upper case"},
			&ucli.BoolFlag{Name: "unique", Aliases: []string{"u"}, Usage: "keep the first of lines with equal keys"},
			&ucli.StringFlag{Name: "key", Aliases: []string{"k"}, Usage: "sort on fields N (to the end of the line) or N,M"},
			&ucli.StringFlag{Name: "separator", Aliases: []string{"t"}, Usage: "field separator for --key (default: blanks)"},
		},
		run: func(x *call) error {
			c := x.ctx
			o := ops.SortOptions{Path: x.args[0], Reverse: c.Bool("reverse"), Numeric: c.Bool("numeric"),
				IgnoreCase: c.Bool("ignore-case"), Unique: c.Bool("unique"), Key: c.String("key"), Separator: c.String("separator"),
				Exact: x.out.exact()}
			if c.IsSet("separator") && o.Separator == "" {
				return usageErr("--separator must not be empty")
			}
			return x.out.lines(func(sink ops.LineSink) (any, *ops.Truncation, error) {
				o.Sink = sink
				r, err := ops.Sort(x.sb, o)
				return r, &r.Truncation, err
			})
		},
	})
}
