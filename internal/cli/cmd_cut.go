package cli

import (
	"bufio"
	"encoding/csv"

	ucli "github.com/urfave/cli/v2"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	register(&command{
		name:      "cut",
		usage:     "select fields from each line",
		argsUsage: "PATH",
		minArgs:   1, maxArgs: 1,
		flags: []ucli.Flag{
			&ucli.StringFlag{Name: "fields", Aliases: []string{"f"}, Usage: "fields to keep, 1-based: 1,3 or 2-4 or 3- (required)"},
			&ucli.StringFlag{Name: "delimiter", Aliases: []string{"d"}, Usage: "field delimiter (default tab; comma with --csv)"},
			&ucli.BoolFlag{Name: "regex", Usage: "the delimiter is an RE2 regular expression"},
			&ucli.BoolFlag{Name: "csv", Usage: "parse RFC 4180 CSV (quoted fields, embedded delimiters and newlines)"},
			&ucli.BoolFlag{Name: "only-delimited", Aliases: []string{"s"}, Usage: "drop lines without the delimiter"},
			&ucli.StringFlag{Name: "output-delimiter", Usage: "join fields with this in the text form (default: the delimiter; tab with --regex)"},
		},
		run: func(x *call) error {
			c := x.ctx
			o := ops.CutOptions{Path: x.args[0], Fields: c.String("fields"), Delimiter: c.String("delimiter"),
				Regex: c.Bool("regex"), CSV: c.Bool("csv"), OnlyDelimited: c.Bool("only-delimited"), Exact: x.out.exact()}
			if !c.IsSet("fields") {
				// Not urfave's Required: its error would not be a usage error.
				return usageErr("cut needs -f/--fields LIST, such as -f 1,3 or -f 2-")
			}
			if c.IsSet("delimiter") && o.Delimiter == "" {
				return usageErr("--delimiter must not be empty")
			}
			out := o.Delimiter
			switch {
			case c.IsSet("output-delimiter"):
				out = c.String("output-delimiter")
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
				r, err := ops.Cut(x.sb, o)
				return r, &r.Truncation, err
			}, text)
		},
	})
}
