package cli

import (
	"bufio"
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	register(&command{
		name:      "stat",
		usage:     "describe a path (a symlink as itself); a missing path is exists:false",
		argsUsage: "PATH",
		minArgs:   1, maxArgs: 1,
		flags: []ucli.Flag{&ucli.BoolFlag{Name: "sha256", Usage: "add the SHA-256 of a regular file's content"}},
		run: func(x *call) error {
			r, err := ops.Stat(x.sb, ops.StatOptions{Path: x.args[0], SHA256: x.ctx.Bool("sha256")})
			if err != nil {
				return err
			}
			return x.out.emit(r, nil, nil, func(w *bufio.Writer) error {
				// Names through safeName (one record a line); the rest
				// of the line is escaped by the printer's ttyWriter.
				if !r.Exists {
					fmt.Fprintf(w, "%s\tmissing\n", x.out.safeName(r.Path))
					return nil
				}
				fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s", x.out.safeName(r.Path), r.Type, r.Size, r.Mode, r.Mtime)
				if r.Target != nil {
					fmt.Fprintf(w, "\t-> %s", x.out.safeName(*r.Target))
				}
				if r.SHA256 != nil {
					fmt.Fprintf(w, "\t%s", *r.SHA256)
				}
				w.WriteByte('\n')
				return nil
			})
		},
	})
}
