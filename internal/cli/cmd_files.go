package cli

import (
	"bufio"
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	register(&command{
		name: "mkdir", usage: "create a directory and its parents in the workdir", argsUsage: "PATH",
		minArgs: 1, maxArgs: 1,
		run: func(x *call) error {
			r, err := ops.Mkdir(x.sb, x.args[0])
			if err != nil {
				return err
			}
			return x.out.emit(r, nil, nil, func(w *bufio.Writer) error {
				_, err := fmt.Fprintln(w, x.out.safeName(r.Path)) // as mkdir -v names it
				return err
			})
		},
	})
	register(&command{
		name: "mv", usage: "move or rename within the workdir", argsUsage: "SRC DST",
		minArgs: 2, maxArgs: 2,
		flags: []ucli.Flag{&ucli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "replace an existing DST"}},
		run: func(x *call) error {
			r, err := ops.Move(x.sb, x.args[0], x.args[1], x.ctx.Bool("force"))
			if err != nil {
				return err
			}
			return x.out.emit(r, nil, nil, arrow(x, r.From, r.To))
		},
	})
	register(&command{
		name: "cp", usage: "copy a readable file into the workdir (atomic)", argsUsage: "SRC DST",
		minArgs: 2, maxArgs: 2,
		flags: []ucli.Flag{&ucli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "replace an existing DST"}},
		run: func(x *call) error {
			r, err := ops.Copy(x.sb, x.args[0], x.args[1], x.ctx.Bool("force"))
			if err != nil {
				return err
			}
			return x.out.emit(r, nil, nil, arrow(x, r.From, r.To))
		},
	})
	register(&command{
		name: "rm", usage: "remove a file, a symlink, or (-r) a tree in the workdir; off unless the policy turns it on", argsUsage: "PATH",
		minArgs: 1, maxArgs: 1,
		flags: []ucli.Flag{&ucli.BoolFlag{Name: "recursive", Aliases: []string{"r"}, Usage: "remove a directory and everything below"}},
		run: func(x *call) error {
			r, err := ops.Remove(x.sb, x.args[0], x.ctx.Bool("recursive"))
			if err != nil {
				return err
			}
			return x.out.emit(r, nil, nil, func(w *bufio.Writer) error {
				if !r.Removed {
					return nil
				}
				_, err := fmt.Fprintln(w, x.out.safeName(r.Path)) // as rm -v names it
				return err
			})
		},
	})
}

// arrow is the text form of mv and cp: "FROM -> TO", as their -v prints.
func arrow(x *call, from, to string) textFunc {
	return func(w *bufio.Writer) error {
		_, err := fmt.Fprintf(w, "%s -> %s\n", x.out.safeName(from), x.out.safeName(to))
		return err
	}
}
