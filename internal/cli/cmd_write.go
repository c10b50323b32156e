package cli

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	register(&command{
		name:      "write",
		usage:     "write a file atomically from --content or stdin (parents created)",
		argsUsage: "PATH [-]",
		minArgs:   1, maxArgs: 2,
		flags: []ucli.Flag{
			&ucli.StringFlag{Name: "content", Usage: "the content, taken literally (empty: an empty file); without it, stdin if it is a pipe or a file, or after PATH -"},
			&ucli.BoolFlag{Name: "append", Usage: "append instead of replacing"},
			&ucli.BoolFlag{Name: "no-clobber", Usage: "refuse (exists) if the file exists"},
			&ucli.StringFlag{Name: "expect-sha256", Usage: "refuse (conflict) unless the current content has this SHA-256"},
			&ucli.StringFlag{Name: "mode", Usage: "permission bits, octal 0 to 0777 (default: keep; 0666 less umask when new)"},
		},
		run: func(x *call) error {
			c := x.ctx
			o := ops.WriteOptions{Path: x.args[0], Append: c.Bool("append"), NoClobber: c.Bool("no-clobber"), ExpectSHA256: c.String("expect-sha256")}
			content, err := writeContent(x, c.IsSet("content"), c.String("content"))
			if err != nil {
				return err
			}
			o.Content = content
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

// writeContent picks write's content. --content is taken as given (even
// "-" or ""); a second operand "-" reads stdin whatever it is, as cat
// reads "-"; with neither, stdin is read only when it is a pipe (or
// socket) or a regular file: a terminal would wait forever, and /dev/null
// (what exec tools often give) would silently empty the file.
func writeContent(x *call, given bool, text string) (io.Reader, error) {
	dash := len(x.args) == 2
	switch {
	case dash && x.args[1] != "-":
		return nil, usageErr("usage: fsbox write PATH [-]: the only operand after PATH is -, to read the content from stdin")
	case dash && given:
		return nil, usageErr("write takes its content from --content or from stdin (-), not both")
	case given:
		return strings.NewReader(text), nil
	case dash || stdinHolds(x.stdin):
		if x.stdin == nil {
			return strings.NewReader(""), nil
		}
		return x.stdin, nil
	}
	return nil, usageErr("write needs content: give --content TEXT (--content '' for an empty file) or pipe the content (stdin is not a pipe or a file; - after PATH reads it anyway)")
}

// stdinHolds reports whether stdin is something to read content from: a
// pipe, a socket or a regular file (ripgrep's rule). A reader that is no
// file was handed over deliberately by an in-process caller.
func stdinHolds(r io.Reader) bool {
	if r == nil {
		return false
	}
	f, ok := r.(*os.File)
	if !ok {
		return true
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	m := fi.Mode()
	return m.IsRegular() || m&(fs.ModeNamedPipe|fs.ModeSocket) != 0
}

// parseMode reads --mode: permission bits in octal, 0 to 0777, written
// 644, 0644 or 0o644. Setuid, setgid and sticky (4000, 2000, 1000) are
// refused (SPEC: modes are permission bits only), as is anything that is
// not octal digits: a sign, spaces, 0x, symbolic modes such as u+x.
func parseMode(s string) (fs.FileMode, error) {
	digits := s
	if len(s) > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'O') {
		digits = s[2:]
	}
	v, err := strconv.ParseUint(digits, 8, 32)
	if err != nil { // ParseUint takes no sign, no spaces, no 0x in base 8
		return 0, usageErr("--mode wants octal permission bits such as 0644, got %q", s)
	}
	if v > 0o777 {
		return 0, usageErr("--mode takes permission bits only (0 to 0777): setuid, setgid and sticky (4000, 2000, 1000) are refused, got %q", s)
	}
	return fs.FileMode(v), nil
}
