package cli

import (
	"io"
	"os"
	"syscall"
)

// A pipe on stdout (SPEC §3): fsbox notices its reader's exit whether or
// not it has more to write (`fsbox grep … | head -1` stops the search),
// and a streaming command passes on what it holds whenever its search
// waits, so that the reader sees the items as they are found.

// stdoutPipe returns the file under stdout when it is a pipe or a socket
// (one fstat), and whether it is a pipe; nil when it is neither.
func stdoutPipe(w io.Writer) (f *os.File, fifo bool) {
	if o, ok := w.(*outWatch); ok {
		w = o.w
	}
	f, ok := w.(*os.File)
	if !ok {
		return nil, false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return nil, false
	}
	return f, fi.Mode()&os.ModeNamedPipe != 0
}

// errReaderGone is the call's error when the reader of stdout went before
// the call ended: what a write to it would have failed with.
var errReaderGone = &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}
