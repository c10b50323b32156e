package cli

import (
	"bufio"

	ucli "github.com/urfave/cli/v2"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	register(&command{
		name:      "read",
		usage:     "print a file's content, or a page of its lines",
		argsUsage: "PATH",
		minArgs:   1, maxArgs: 1,
		flags: []ucli.Flag{
			&ucli.Int64Flag{Name: "offset", Usage: "first line to return, 0-based"},
			&ucli.Int64Flag{Name: "limit", Usage: "lines to return (default: all)"},
			&ucli.Int64Flag{Name: "max-bytes", Usage: "lower the policy's max_read_bytes for this call"},
			&ucli.StringFlag{Name: "encoding", Value: "utf-8", Usage: "content encoding: utf-8 or base64"},
		},
		run: func(x *call) error {
			c := x.ctx
			if c.IsSet("limit") && c.Int64("limit") < 1 {
				return usageErr("--limit must be 1 or more, got %d", c.Int64("limit"))
			}
			if c.IsSet("max-bytes") && c.Int64("max-bytes") < 1 {
				return usageErr("--max-bytes must be 1 or more, got %d", c.Int64("max-bytes"))
			}
			r, err := ops.Read(x.sb, ops.ReadOptions{Path: x.args[0], Offset: c.Int64("offset"), Limit: c.Int64("limit"),
				MaxBytes: c.Int64("max-bytes"), Encoding: c.String("encoding"), RawOnly: x.out.format == formatText && c.String("encoding") != "base64"})
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
		},
	})
}
