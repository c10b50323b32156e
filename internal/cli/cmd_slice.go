package cli

import (
	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	runners["slice"] = func(x *call) error {
		o := ops.SliceInput(x.in)
		o.Exact = x.out.exact()
		return x.out.lines(func(sink ops.LineSink) (any, *ops.Truncation, error) {
			o.Sink = sink
			r, err := ops.Slice(x.cx, x.sb, o)
			return r, &r.Truncation, err
		})
	}
}
