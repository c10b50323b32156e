package cli

import (
	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	runners["find"] = func(x *call) error {
		o := ops.FindInput(x.in)
		return x.out.paths(func(sink func(string) error) (any, *ops.Truncation, error) {
			o.Sink = sink
			r, err := ops.Find(x.cx, x.sb, o)
			return r, &r.Truncation, err
		})
	}
}
