package cli

import (
	"io"
	"io/fs"
	"os"

	"github.com/fsbox/fsbox/internal/tool"
)

// runMeta answers the commands that describe or serve the faces
// themselves (they have no operation to run): the completion scripts, the
// man pages and the tool list are generated from the descriptors here, on
// the command line; mcp serves the descriptors.
func runMeta(x *call) error {
	var s string
	var err error
	switch x.op.Name {
	case "completion":
		s, err = Completion(x.reg, x.in.String("shell"))
	case "man":
		s, err = ManPage(x.reg, x.in.String("command"))
	case "tools":
		p := x.sb.Policy()
		return x.out.whole(tool.Tools(x.reg, func(name string) bool { return opsEnabled(x.reg, p, name) }))
	case "mcp":
		return runMCP(x)
	default:
		return usageErr("%s cannot run from the command line", x.op.Name)
	}
	if err != nil {
		return err
	}
	// Documentation text goes out as is, whatever the format.
	_, err = x.out.w.Write([]byte(s))
	return err
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
