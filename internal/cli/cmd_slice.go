package cli

import (
	"strconv"

	ucli "github.com/urfave/cli/v2"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	register(&command{
		name:      "slice",
		usage:     "select lines START to END, as Python's lines[START:END] (negatives count from the end)",
		argsUsage: "PATH [START [END]]",
		minArgs:   1, maxArgs: 3,
		flags: []ucli.Flag{
			&ucli.StringFlag{Name: "start", Usage: "first line, 0-based; negative counts from the end"},
			&ucli.StringFlag{Name: "end", Usage: "line to stop before; negative counts from the end"},
		},
		run: func(x *call) error {
			bound := func(pos int, flag string) (*int64, error) {
				var s string
				var set bool
				if len(x.args) > pos {
					s, set = x.args[pos], true
				}
				if x.ctx.IsSet(flag) {
					if set {
						return nil, usageErr("give %s either as an argument or as --%s, not both", flag, flag)
					}
					s, set = x.ctx.String(flag), true
				}
				if !set {
					return nil, nil
				}
				v, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return nil, usageErr("slice %s must be an integer, got %q", flag, s)
				}
				return &v, nil
			}
			start, err := bound(1, "start")
			if err != nil {
				return err
			}
			end, err := bound(2, "end")
			if err != nil {
				return err
			}
			o := ops.SliceOptions{Path: x.args[0], Start: start, End: end, Exact: x.out.exact()}
			return x.out.lines(func(sink ops.LineSink) (any, *ops.Truncation, error) {
				o.Sink = sink
				r, err := ops.Slice(x.sb, o)
				return r, &r.Truncation, err
			})
		},
	})
}
