package cli

import (
	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	runners["sort"] = func(x *call) error {
		o, err := ops.SortInput(x.in)
		if err != nil {
			return err
		}
		o.Exact = x.out.exact()
		return x.out.lines(func(sink ops.LineSink) (any, *ops.Truncation, error) {
			o.Sink = sink
			r, err := ops.Sort(x.cx, x.sb, o)
			return r, &r.Truncation, err
		})
	}
}
