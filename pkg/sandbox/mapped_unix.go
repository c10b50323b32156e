//go:build unix

package sandbox

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// mapsFiles says that this platform reads files through MapAt.
const mapsFiles = true

var pageSize = int64(os.Getpagesize())

// Mappable reports whether f can be read through MapAt: a regular file
// opened through the sandbox (standard input is a stream, never mapped).
func (f *File) Mappable() bool {
	return f.stream == nil && f.obj == nil && f.Info.Mode.IsRegular() && f.px.descriptor() >= 0
}

// descriptor is the open descriptor, or -1.
func (p *posixFile) descriptor() int {
	switch {
	case p.fd >= 0:
		return p.fd
	case p.os != nil:
		// Fd would put the descriptor in blocking mode; a regular file
		// always is, but Control leaves it as it is.
		fd := -1
		if rc, err := p.os.SyscallConn(); err == nil {
			_ = rc.Control(func(d uintptr) { fd = int(d) })
		}
		return fd
	}
	return -1
}

// MapAt maps n bytes of f from off, read-only and shared with the page
// cache: the window costs no copy, and its pages count in the process's
// resident memory only while mapped, so callers map bounded windows and
// Unmap each when done. n may reach past the end of the file: the window
// stops there. Read a mapping only inside GuardFaults: a file truncated
// while mapped faults on the pages past its new end.
//
// MapAt may be called from several goroutines at once. What the caller
// searched through its windows it reports with CountRead.
func (f *File) MapAt(off int64, n int) (*Mapping, error) {
	if !f.Mappable() {
		return nil, errors.ErrUnsupported
	}
	if off < 0 || n < 0 {
		return nil, &fs.PathError{Op: "mmap", Path: f.Info.Path, Err: fs.ErrInvalid}
	}
	if end := off + int64(n); end > f.Info.Size {
		n = int(max(0, f.Info.Size-off))
	}
	if n == 0 {
		return &Mapping{}, nil
	}
	base := off &^ (pageSize - 1)
	mem, err := unix.Mmap(f.px.descriptor(), base, int(off-base)+n, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, &fs.PathError{Op: "mmap", Path: f.Info.Path, Err: err}
	}
	return &Mapping{Data: mem[off-base:], mem: mem}, nil
}

// Unmap releases the window; Data must not be used after it.
func (m *Mapping) Unmap() {
	if m.mem != nil {
		_ = unix.Munmap(m.mem)
		m.mem, m.Data = nil, nil
	}
}

// stamp is what fstat says of an open file that any change to it moves.
func (p *posixFile) stamp() (fileStamp, error) {
	var st unix.Stat_t
	if err := unix.Fstat(p.descriptor(), &st); err != nil {
		return fileStamp{}, &fs.PathError{Op: "fstat", Err: err}
	}
	return fileStamp{size: st.Size, mtime: timespecNs(st.Mtim), ctime: timespecNs(st.Ctim)}, nil
}

func timespecNs(t unix.Timespec) int64 { return t.Sec*1e9 + t.Nsec }
