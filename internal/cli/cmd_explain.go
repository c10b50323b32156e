package cli

import (
	"bufio"
	"fmt"

	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

func init() {
	register(&command{
		name:      "explain",
		usage:     "say whether COMMAND on PATH would be allowed, and which rule decides",
		argsUsage: "COMMAND PATH",
		minArgs:   2, maxArgs: 2,
		run: func(x *call) error {
			d, err := x.sb.Explain(x.args[0], x.args[1])
			if err != nil {
				return err
			}
			// links also needs mkdir and write on: a command toggle,
			// decided before any path rule, as the call itself does.
			if err := ops.CheckCommand(x.sb.Policy(), d.Op); err != nil && d.Rule != string(sandbox.RuleCommand) {
				e := sandbox.AsError(err)
				d.Allowed, d.Rule, d.Reason, d.Root, d.Real = false, string(e.Rule), e.Msg, "", ""
			}
			return x.out.emit(d, nil, nil, func(w *bufio.Writer) error {
				verdict := "allowed"
				if !d.Allowed {
					verdict = "denied"
				}
				fmt.Fprintf(w, "%s %s %s: %s (rule %s)\n", verdict, d.Op, x.out.safeName(d.Path), x.out.safeName(oneLine(d.Reason)), d.Rule)
				return nil
			})
		},
	})
}
