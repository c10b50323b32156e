package cli

import (
	"bufio"
	"fmt"
	"strconv"

	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/textio"
)

func init() {
	runners["wc"] = func(x *call) error {
		// -l -w -m -c select what the text form prints, in wc's order.
		sel := []string{"lines", "words", "chars", "bytes"}
		var picked []string
		for _, n := range sel {
			if x.in.Bool(n) {
				picked = append(picked, n)
			}
		}
		if len(picked) == 0 {
			picked = sel
		}
		return runText(x, func(r ops.WcResult, w *bufio.Writer) error {
			// GNU wc 9.1 pads every count to the width of the files' total
			// size, at least 1; one count of one file is not padded.
			n := len(strconv.FormatInt(r.Total.Bytes, 10))
			if len(picked) == 1 && len(r.Files) == 1 {
				n = 1
			}
			row := func(c textio.Counts, name string) {
				for i, p := range picked {
					if i > 0 {
						w.WriteByte(' ')
					}
					fmt.Fprintf(w, "%*d", n, countOf(c, p))
				}
				fmt.Fprintf(w, " %s\n", name)
			}
			for _, f := range r.Files {
				row(f.Counts, x.out.safeName(f.Path))
			}
			if len(r.Files) > 1 {
				row(r.Total, "total")
			}
			return nil
		})
	}
}

func countOf(c textio.Counts, name string) int64 {
	switch name {
	case "lines":
		return c.Lines
	case "words":
		return c.Words
	case "chars":
		return c.Chars
	}
	return c.Bytes
}
