package cli

import (
	"bufio"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	runners["completion"] = func(x *call) error {
		s, err := Completion(x.reg, x.in.String("shell"))
		if err != nil {
			return err
		}
		return rawOut(x, s)
	}
	runners["man"] = func(x *call) error {
		s, err := ManPage(x.reg, x.in.String("command"))
		if err != nil {
			return err
		}
		return rawOut(x, s)
	}
	runners["tools"] = func(x *call) error {
		p := x.sb.Policy()
		return x.out.emit(Tools(x.reg, func(name string) bool { return opsEnabled(x.reg, p, name) }), nil, nil, nil)
	}
	runners["links"] = func(x *call) error {
		return runText(x, func(r ops.LinksResult, w *bufio.Writer) error {
			for _, l := range r.Links {
				w.WriteString(x.out.safeName(l.Path) + "\n")
			}
			return nil
		})
	}
}

// rawOut prints documentation text as is, whatever the format.
func rawOut(x *call, s string) error {
	_, err := x.out.w.Write([]byte(s))
	return err
}
