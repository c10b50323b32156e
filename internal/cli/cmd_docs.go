package cli

import (
	"bufio"

	ucli "github.com/urfave/cli/v2"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	register(&command{
		name: "completion", usage: "print the completion script for bash, zsh or fish", argsUsage: "bash|zsh|fish",
		minArgs: 1, maxArgs: 1, noPolicy: true,
		run: func(x *call) error {
			s, err := Completion(x.args[0])
			if err != nil {
				return err
			}
			return rawOut(x, s)
		},
	})
	register(&command{
		name: "man", usage: "print the man page (roff) of fsbox or of one command", argsUsage: "[COMMAND]",
		maxArgs: 1, noPolicy: true,
		run: func(x *call) error {
			s, err := ManPage(x.ctx.Args().First())
			if err != nil {
				return err
			}
			return rawOut(x, s)
		},
	})
	register(&command{
		name: "tools", usage: "describe every enabled command as a tool (JSON Schema inputs, MCP/OpenAI shape)",
		run: func(x *call) error {
			return x.out.emit(Tools(x.sb.Policy().Enabled), nil, nil, nil)
		},
	})
	register(&command{
		name: "links", usage: "create fsbox-COMMAND links to this binary in DIR (inside the workdir)", argsUsage: "DIR",
		minArgs: 1, maxArgs: 1,
		flags: []ucli.Flag{&ucli.StringFlag{Name: "prefix", Value: "fsbox-", Usage: "name prefix of each link (empty: bare command names)"}},
		run: func(x *call) error {
			r, err := ops.Links(x.sb, x.args[0], x.ctx.String("prefix"), commandNames())
			if err != nil {
				return err
			}
			return x.out.emit(r, r.Links, nil, func(w *bufio.Writer) error {
				for _, l := range r.Links {
					w.WriteString(x.out.safeName(l.Path) + "\n")
				}
				return nil
			})
		},
	})
}

// rawOut prints documentation text as is, whatever the format.
func rawOut(x *call, s string) error {
	_, err := x.out.w.Write([]byte(s))
	return err
}
