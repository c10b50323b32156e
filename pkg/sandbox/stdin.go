package sandbox

import (
	"errors"
	"io"
	"os"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// StdinPath is how standard input is named, as an argument and in output.
const StdinPath = "-"

// SetStdin gives the sandbox the call's standard input: operations read it
// as the path "-" (OpenStdin). It needs no root and no path rule, and it
// counts against the same limits as a file (the caller of an operation
// reads it through the same File). Nil: the call has no stdin.
func (s *Sandbox) SetStdin(r io.Reader) { s.stdin = r }

// HasStdin reports whether the call has a standard input to read.
func (s *Sandbox) HasStdin() bool { return s.stdin != nil }

// OpenStdin returns standard input as a File named "-", whose size is
// unknown (-1). It can be opened once: a second open finds it used up.
// Without a stdin it is not_found.
func (s *Sandbox) OpenStdin() (*File, error) {
	if s.stdin == nil {
		return nil, fserr.Errorf(fserr.CodeNotFound, StdinPath, "- names standard input, and this call has none")
	}
	if s.stdinUsed.Swap(true) {
		return nil, fserr.Errorf(fserr.CodeUsage, StdinPath, "standard input (-) can be read once per call")
	}
	s.trail.note(StdinPath, "", false)
	size := int64(-1)
	if f, ok := s.stdin.(*os.File); ok {
		// A regular file on stdin says how much is left: readers size
		// their buffers by it (a pipe stays unknown).
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			if off, err := f.Seek(0, io.SeekCurrent); err == nil && off <= fi.Size() {
				size = fi.Size() - off
			}
		}
	}
	return &File{stream: s.stdin, px: posixFile{fd: -1}, s: s, Info: Info{Name: StdinPath, Path: StdinPath, Type: "file", Size: size}}, nil
}

var errNotSeekable = errors.New("standard input cannot be read at an offset")

// Stream reports whether f is standard input: read forward only (ReadAt
// fails), whatever its size.
func (f *File) Stream() bool { return f.stream != nil }
