package cli

import (
	"bufio"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	register(&command{
		name:      "write",
		usage:     "write a file atomically from --content or stdin (parents created)",
		argsUsage: "PATH",
		minArgs:   1, maxArgs: 1,
		flags: []ucli.Flag{
			&ucli.StringFlag{Name: "content", Usage: "the content (default: read stdin)"},
			&ucli.BoolFlag{Name: "append", Usage: "append instead of replacing"},
			&ucli.BoolFlag{Name: "no-clobber", Usage: "refuse (exists) if the file exists"},
			&ucli.StringFlag{Name: "expect-sha256", Usage: "refuse (conflict) unless the current content has this SHA-256"},
			&ucli.StringFlag{Name: "mode", Usage: "permission bits, octal (default: keep; 0666 less umask when new)"},
		},
		run: func(x *call) error {
			c := x.ctx
			o := ops.WriteOptions{Path: x.args[0], Append: c.Bool("append"), NoClobber: c.Bool("no-clobber"), ExpectSHA256: c.String("expect-sha256"), Content: x.stdin}
			if c.IsSet("content") {
				o.Content = strings.NewReader(c.String("content"))
			}
			if c.IsSet("mode") {
				m, err := parseMode(c.String("mode"))
				if err != nil {
					return err
				}
				o.Mode = &m
			}
			r, err := ops.Write(x.sb, o)
			if err != nil {
				return err
			}
			// The text form is sha256sum's line, so `sha256sum -c` can check it.
			return x.out.emit(r, nil, nil, func(w *bufio.Writer) error {
				_, err := fmt.Fprintf(w, "%s  %s\n", r.SHA256, x.out.safeName(r.Path))
				return err
			})
		},
	})
}

func parseMode(s string) (fs.FileMode, error) {
	v, err := strconv.ParseUint(s, 8, 32)
	if err != nil || v > 0o7777 {
		return 0, usageErr("--mode wants octal permission bits such as 0644, got %q", s)
	}
	m := fs.FileMode(v & 0o777)
	if v&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if v&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if v&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m, nil
}
