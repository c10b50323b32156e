package cli

import (
	"bufio"
	"fmt"
	"strconv"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	runners["wc"] = func(x *call) error {
		return runText(x, func(r ops.WcResult, w *bufio.Writer) error {
			// GNU wc 9.1 pads every count to the width of the files' total
			// size (all inputs are regular files here), at least 1.
			n := len(strconv.FormatInt(r.Total.Bytes, 10))
			for _, f := range r.Files {
				fmt.Fprintf(w, "%*d %*d %*d %*d %s\n", n, f.Lines, n, f.Words, n, f.Chars, n, f.Bytes, x.out.safeName(f.Path))
			}
			if len(r.Files) > 1 {
				t := r.Total
				fmt.Fprintf(w, "%*d %*d %*d %*d total\n", n, t.Lines, n, t.Words, n, t.Chars, n, t.Bytes)
			}
			return nil
		})
	}
}
