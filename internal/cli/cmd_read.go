package cli

import (
	"bufio"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	runners["read"] = func(x *call) error {
		o := ops.ReadInput(x.in)
		o.RawOnly = x.out.format == formatText && o.Encoding != "base64" // the text form prints the bytes only
		r, err := ops.Read(x.cx, x.sb, o)
		if err != nil {
			return err
		}
		if x.out.format != formatText {
			return x.out.emitWithString(&r, &r.Content)
		}
		return x.out.emit(r, nil, nil, func(w *bufio.Writer) error {
			if r.Encoding == "base64" {
				w.WriteString(r.Content)
				w.WriteByte('\n')
				return nil
			}
			_, err := w.Write(x.out.safe(r.Raw))
			return err
		})
	}
}
