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
				paths := make([]string, 0, len(c.Paths)+len(c.Moved))
				for _, p := range c.Paths {
					paths = append(paths, x.out.safeName(p.Path))
				}
				for _, m := range c.Moved { // mv: FROM -> TO, as mv -v names it
					paths = append(paths, x.out.safeName(m.From)+" -> "+x.out.safeName(m.To))
				}
				if _, err := fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", c.ID, c.Time, c.Command, strings.Join(paths, " ")); err != nil {
					return err
				}
			}
			return nil
		})
	}
	runners["purge"] = func(x *call) error {
		return runText(x, func(r ops.PurgeResult, w *bufio.Writer) error {
			_, err := fmt.Fprintf(w, "removed\t%d\nkept\t%d\n", r.Removed, r.Kept)
			return err
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
