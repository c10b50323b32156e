package cli

import (
	"io"
	"io/fs"
	"os"
	"strings"
)

func init() {
	runners["write"] = func(x *call) error {
		content, err := writeContent(x, x.in.IsSet("content"))
		if err != nil {
			return err
		}
		if content != nil && !x.in.IsSet("content") {
			x.in.Stdin = content
		}
		return runGeneric(x)
	}
}

// writeContent picks write's content. --content is taken as given (even
// "-" or ""); a second operand "-" reads stdin whatever it is, as cat
// reads "-"; with neither, stdin is read only when it is a pipe (or
// socket) or a regular file: a terminal would wait forever, and /dev/null
// (what exec tools often give) would silently empty the file.
func writeContent(x *call, given bool) (io.Reader, error) {
	dash := x.in.IsSet("stdin")
	switch {
	case dash && x.in.String("stdin") != "-":
		return nil, usageErr("usage: fsbox write PATH [-]: the only operand after PATH is -, to read the content from stdin")
	case dash && given:
		return nil, usageErr("write takes its content from --content or from stdin (-), not both")
	case given:
		return nil, nil
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
