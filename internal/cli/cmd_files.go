package cli

import (
	"bufio"
	"fmt"

	"github.com/fsbox/fsbox/pkg/ops"
)

// The text forms of the file commands: as their -v prints.
func init() {
	runners["mkdir"] = func(x *call) error {
		return runText(x, func(r ops.MkdirResult, w *bufio.Writer) error {
			_, err := fmt.Fprintln(w, x.out.safeName(r.Path))
			return err
		})
	}
	runners["mv"] = func(x *call) error {
		return runText(x, func(r ops.MoveResult, w *bufio.Writer) error { return arrow(x, w, r.From, r.To) })
	}
	runners["cp"] = func(x *call) error {
		return runText(x, func(r ops.CopyResult, w *bufio.Writer) error { return arrow(x, w, r.From, r.To) })
	}
	runners["rm"] = func(x *call) error {
		return runText(x, func(r ops.RemoveResult, w *bufio.Writer) error {
			if !r.Removed {
				return nil
			}
			_, err := fmt.Fprintln(w, x.out.safeName(r.Path))
			return err
		})
	}
}

// runText runs the operation through its descriptor and prints its result
// as JSON, or with text in the text form.
func runText[R any](x *call, text func(r R, w *bufio.Writer) error) error {
	v, err := x.op.Run(x.cx, x.sb, x.in)
	if err != nil {
		return err
	}
	r := v.(R)
	return x.out.emit(r, nil, nil, func(w *bufio.Writer) error { return text(r, w) })
}

// arrow is the text form of mv and cp: "FROM -> TO", as their -v prints.
func arrow(x *call, w *bufio.Writer, from, to string) error {
	_, err := fmt.Fprintf(w, "%s -> %s\n", x.out.safeName(from), x.out.safeName(to))
	return err
}
