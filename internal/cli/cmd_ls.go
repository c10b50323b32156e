package cli

import (
	"bufio"

	ucli "github.com/urfave/cli/v2"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	register(&command{
		name:      "ls",
		usage:     "list a directory, sorted by name",
		argsUsage: "[DIR]",
		maxArgs:   1,
		flags:     []ucli.Flag{&ucli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "include names starting with a dot"}},
		run: func(x *call) error {
			// No argument is the workdir; an empty argument is no path
			// at all, and the sandbox refuses it (usage) as it does for
			// every command.
			dir := "."
			if len(x.args) > 0 {
				dir = x.args[0]
			}
			r, err := ops.Ls(x.sb, ops.LsOptions{Path: dir, All: x.ctx.Bool("all")})
			if err != nil {
				return err
			}
			return x.out.emit(r, r.Entries, &r.Truncation, func(w *bufio.Writer) error {
				for _, e := range r.Entries {
					w.WriteString(x.out.safeName(e.Name))
					w.WriteByte('\n')
				}
				return nil
			})
		},
	})
}
