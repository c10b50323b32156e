package cli

import (
	"bufio"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	runners["edit"] = func(x *call) error {
		o, err := ops.EditInput(x.sb, x.in)
		if err != nil {
			return err
		}
		r, err := ops.Edit(x.cx, x.sb, o)
		if err != nil {
			return err
		}
		if x.out.format != formatText {
			return x.out.emitWithString(&r, &r.Diff) // a diff can be tens of MiB
		}
		return x.out.emit(r, nil, nil, func(w *bufio.Writer) error {
			_, err := w.WriteString(r.Diff)
			return err
		})
	}
}
