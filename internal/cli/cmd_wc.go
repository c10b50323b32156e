package cli

import (
	"bufio"
	"fmt"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	runners["wc"] = func(x *call) error {
		return runText(x, func(r ops.WcResult, w *bufio.Writer) error {
			for _, f := range r.Files {
				fmt.Fprintf(w, "%d %d %d %d %s\n", f.Lines, f.Words, f.Chars, f.Bytes, x.out.safeName(f.Path))
			}
			if len(r.Files) > 1 {
				t := r.Total
				fmt.Fprintf(w, "%d %d %d %d total\n", t.Lines, t.Words, t.Chars, t.Bytes)
			}
			return nil
		})
	}
}
