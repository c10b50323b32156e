package cli

import (
	"bufio"
	"fmt"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	runners["patch"] = func(x *call) error {
		return runText(x, func(r ops.PatchResult, w *bufio.Writer) error {
			for _, f := range r.Files {
				var err error
				switch {
				case r.DryRun:
					_, err = w.WriteString(f.Diff)
				case f.Action == "move":
					_, err = fmt.Fprintf(w, "move %s -> %s\n", x.out.safeName(f.Path), x.out.safeName(f.MoveTo))
				default:
					_, err = fmt.Fprintf(w, "%s %s\n", f.Action, x.out.safeName(f.Path))
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
}
