package cli

import (
	"bufio"
	"fmt"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	register(&command{
		name:      "wc",
		usage:     "count lines, words, bytes and characters",
		argsUsage: "PATH...",
		minArgs:   1, maxArgs: -1,
		run: func(x *call) error {
			r, err := ops.Wc(x.sb, ops.WcOptions{Paths: x.args})
			if err != nil {
				return err
			}
			return x.out.emit(r, nil, nil, func(w *bufio.Writer) error {
				for _, f := range r.Files {
					fmt.Fprintf(w, "%d %d %d %d %s\n", f.Lines, f.Words, f.Chars, f.Bytes, x.out.safeName(f.Path))
				}
				if len(r.Files) > 1 {
					t := r.Total
					fmt.Fprintf(w, "%d %d %d %d total\n", t.Lines, t.Words, t.Chars, t.Bytes)
				}
				return nil
			})
		},
	})
}
