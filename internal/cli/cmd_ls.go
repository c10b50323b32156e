package cli

import (
	"bufio"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	// No argument is the workdir; an empty argument is no path at all,
	// and the sandbox refuses it (usage) as it does for every command.
	runners["ls"] = func(x *call) error {
		v, err := x.op.Run(x.cx, x.sb, x.in)
		if err != nil {
			return err
		}
		r := v.(ops.LsResult)
		if x.out.format == formatText && x.out.color {
			// By type, as ls --color: names escaped first, then painted,
			// past the terminal escaper (only our SGR codes get through).
			colors := x.out.typeColors()
			return x.out.paintedText(r, &r.Truncation, func(bw *bufio.Writer) error {
				for _, e := range r.Entries {
					bw.WriteString(colors.paint(x.out.safeName(e.Name), e.Type))
					bw.WriteByte('\n')
				}
				return nil
			})
		}
		return x.out.emit(r, r.Entries, &r.Truncation, func(w *bufio.Writer) error {
			for _, e := range r.Entries {
				w.WriteString(x.out.safeName(e.Name))
				w.WriteByte('\n')
			}
			return nil
		})
	}
}
