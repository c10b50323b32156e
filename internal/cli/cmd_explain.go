package cli

import (
	"bufio"
	"fmt"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	runners["explain"] = func(x *call) error {
		d, err := ops.ExplainIn(x.cx, x.reg, x.sb, x.in.String("command"), x.in.String("path"))
		if err != nil {
			return err
		}
		return x.out.emit(d, nil, nil, func(w *bufio.Writer) error {
			verdict := "allowed"
			if !d.Allowed {
				verdict = "denied"
			}
			fmt.Fprintf(w, "%s %s %s: %s (rule %s)\n", verdict, d.Op, x.out.safeName(d.Path), x.out.safeName(oneLine(d.Reason)), d.Rule)
			return nil
		})
	}
}
