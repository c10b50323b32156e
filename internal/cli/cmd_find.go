package cli

import (
	"bufio"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	runners["find"] = func(x *call) error {
		o := ops.FindInput(x.in)
		if x.out.format == formatText && x.out.color {
			// On a terminal, names coloured by type, as fd and ls do.
			// The names are escaped (safeName) before they are painted, so
			// the lines go out past the terminal escaper: only our SGR
			// codes reach the terminal.
			colors := x.out.typeColors()
			var r ops.FindResult
			return x.out.paintedText(&r, &r.Truncation, func(bw *bufio.Writer) error {
				o.TypedSink = func(p, typ string) error {
					bw.WriteString(colors.paint(x.out.safeName(p), typ))
					return bw.WriteByte('\n')
				}
				var err error
				r, err = ops.Find(x.cx, x.sb, o)
				return err
			})
		}
		return x.out.paths(func(sink func(string) error) (any, *ops.Truncation, error) {
			o.Sink = sink
			r, err := ops.Find(x.cx, x.sb, o)
			return r, &r.Truncation, err
		})
	}
}
