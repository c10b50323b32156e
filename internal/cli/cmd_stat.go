package cli

import (
	"bufio"
	"fmt"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	runners["stat"] = func(x *call) error {
		return runText(x, func(r ops.StatResult, w *bufio.Writer) error {
			// Names through safeName (one record a line); the rest of the
			// line is escaped by the printer's ttyWriter.
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
			return w.WriteByte('\n')
		})
	}
}
