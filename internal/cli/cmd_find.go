package cli

import (
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	register(&command{
		name:      "find",
		usage:     "list paths below DIR matching a glob, honouring .gitignore",
		argsUsage: "[DIR] [GLOB]",
		maxArgs:   2,
		flags: []ucli.Flag{
			&ucli.IntFlag{Name: "max-depth", Value: -1, Usage: "deepest level to list (DIR's entries are 1)", DefaultText: "no limit"},
			&ucli.StringFlag{Name: "type", Aliases: []string{"t"}, Usage: "only f (files), d (directories) or l (symlinks)"},
			&ucli.StringSliceFlag{Name: "exclude", Aliases: []string{"E"}, Usage: "leave out paths matching GLOB (repeatable); excluded directories are not entered"},
			&ucli.BoolFlag{Name: "hidden", Usage: "include names starting with a dot"},
			&ucli.BoolFlag{Name: "no-ignore", Usage: "do not honour .gitignore, .ignore and .git/info/exclude"},
			&ucli.BoolFlag{Name: "follow", Aliases: []string{"L"}, Usage: "follow symlinks (never out of their root, never in a loop)"},
		},
		run: func(x *call) error {
			c := x.ctx
			o := ops.FindOptions{MaxDepth: c.Int("max-depth"), Type: c.String("type"), Exclude: c.StringSlice("exclude"),
				Hidden: c.Bool("hidden"), NoIgnore: c.Bool("no-ignore"), Follow: c.Bool("follow"), Dir: "."}
			switch len(x.args) {
			case 2:
				o.Dir, o.Glob = x.args[0], x.args[1]
			case 1:
				// One argument: a glob if it has glob characters, else a directory.
				if strings.ContainsAny(x.args[0], "*?[{") {
					o.Glob = x.args[0]
				} else {
					o.Dir = x.args[0]
				}
			}
			if c.IsSet("max-depth") && o.MaxDepth < 0 {
				return usageErr("--max-depth must be 0 or more")
			}
			return x.out.paths(func(sink func(string) error) (any, *ops.Truncation, error) {
				o.Sink = sink
				r, err := ops.Find(x.sb, o)
				return r, &r.Truncation, err
			})
		},
	})
}
