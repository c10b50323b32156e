package cli

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	runners["history"] = func(x *call) error {
		return runText(x, func(r ops.HistoryResult, w *bufio.Writer) error {
			for _, c := range r.Changes {
				paths := make([]string, len(c.Paths))
				for i, p := range c.Paths {
					paths[i] = x.out.safeName(p.Path)
				}
				if _, err := fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", c.ID, c.Time, c.Command, strings.Join(paths, " ")); err != nil {
					return err
				}
			}
			return nil
		})
	}
	runners["undo"] = func(x *call) error {
		return runText(x, func(r ops.UndoResult, w *bufio.Writer) error {
			for _, f := range r.Files {
				if _, err := fmt.Fprintf(w, "%s %s\n", f.Action, x.out.safeName(f.Path)); err != nil {
					return err
				}
			}
			return nil
		})
	}
}
