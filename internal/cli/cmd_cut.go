package cli

import (
	"bufio"
	"encoding/csv"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	runners["cut"] = func(x *call) error {
		c := x.in
		o, err := ops.CutInput(c)
		if err != nil {
			return err
		}
		o.Exact = x.out.exact()
		out := o.Delimiter
		switch {
		case c.IsSet("output-delimiter"):
			out = c.String("output-delimiter")
			if out == "" {
				out = "\x00" // an empty --output-delimiter is a NUL, as GNU cut has it
			}
		case o.Regex || out == "":
			out = "\t"
			if o.CSV {
				out = ","
			}
		}
		text := func(w *bufio.Writer, fields [][]byte, eol []byte) error {
			for i, f := range fields {
				if i > 0 {
					w.WriteString(out)
				}
				w.Write(f)
			}
			if len(eol) == 0 {
				eol = []byte("\n")
			}
			_, err := w.Write(eol)
			return err
		}
		if o.CSV && !c.IsSet("output-delimiter") {
			text = func(w *bufio.Writer, fields [][]byte, _ []byte) error {
				cw := csv.NewWriter(w)
				if len(out) == 1 {
					cw.Comma = rune(out[0])
				}
				rec := make([]string, len(fields))
				for i, f := range fields {
					rec[i] = string(f)
				}
				cw.Write(rec)
				cw.Flush()
				return cw.Error()
			}
		}
		return x.out.rows(func(sink ops.RowSink) (any, *ops.Truncation, error) {
			o.Sink = sink
			r, err := ops.Cut(x.cx, x.sb, o)
			return r, &r.Truncation, err
		}, text)
	}
}
