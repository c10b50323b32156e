package cli

import (
	"bufio"
	"fmt"
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
			return x.out.emit(d, nil, nil, func(w *bufio.Writer) error {
				verdict := "allowed"
				if !d.Allowed {
					verdict = "denied"
				}
				fmt.Fprintf(w, "%s %s %s: %s (rule %s)\n", verdict, d.Op, d.Path, oneLine(d.Reason), d.Rule)
				return nil
			})
		},
	})
}
