package sandbox

import (
	"errors"
	"io/fs"
	"runtime"
	"runtime/debug"
	"sync/atomic"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// Mapped reading. A search through a large file reads it through windows
// mapped from the page cache (File.MapAt) rather than copying it into a
// buffer: on a 1 GiB file the copy is most of the time. Two things make a
// mapping unlike a read, and this file answers both:
//
//   - A file truncated while mapped makes the pages past its new end fault
//     (SIGBUS): GuardFaults turns that fault into an io error.
//   - A file written while mapped shows the new bytes mid-search: Unchanged
//     compares fstat's size, modification and change times with those of
//     the start, and a search that saw a change reports an io error rather
//     than results from two versions of the file. Growth is no change: the
//     windows stop at the size of the start.

// Mapping is one read-only window of a file (File.MapAt).
type Mapping struct {
	Data []byte // the bytes asked for, from the offset asked for
	mem  []byte // the whole mapping, from a page boundary
}

// fileStamp is what changes when a file's content does.
type fileStamp struct {
	size, mtime, ctime int64
	ver                string // an object root's version
}

// stamp is what the file's handle says of it now that any change to its
// content moves: on a posix root fstat's size and times, on an object
// root the version's.
func (f *File) stamp() (fileStamp, error) {
	st, err := f.handle().stamp()
	if err != nil {
		return st, namedErr(err, f.Info.Path)
	}
	return st, nil
}

// namedErr names path in a PathError a handle left unnamed.
func namedErr(err error, path string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == "" {
		pe.Path = path
	}
	return err
}

// Stamp is an opaque record of an open file's size and times, to be
// compared with Unchanged.
type Stamp struct{ s fileStamp }

// Stamp records f's size and times now.
func (f *File) Stamp() (Stamp, error) {
	st, err := f.stamp()
	return Stamp{st}, err
}

// Unchanged reports an io error when f shrank, or its times moved while
// its size stayed, since was. A file that grew passes: windows mapped
// from the size it had at was never reach the new bytes, so what was
// searched is the file as it was (a log being appended to).
func (f *File) Unchanged(was Stamp) error {
	now, err := f.stamp()
	if err != nil {
		return fserr.AsError(err)
	}
	if now != was.s && now.size <= was.s.size {
		return changedWhileRead(f.Info.Path, was.s.size, now.size)
	}
	return nil
}

// UnchangedSinceOpen is Unchanged against what the file was when it was
// opened (its size and modification time): a search that read it whole
// calls it once it is done. A file that grew passes (the reads stop at
// the size it had); one written over or shrunk is a conflict.
func (f *File) UnchangedSinceOpen() error {
	now, err := f.stamp()
	if err != nil {
		return fserr.AsError(err)
	}
	if now.size < f.Info.Size || (now.size == f.Info.Size && now.mtime != f.Info.ModTime.UnixNano()) {
		return changedWhileRead(f.Info.Path, f.Info.Size, now.size)
	}
	return nil
}

func changedWhileRead(path string, was, now int64) *fserr.Error {
	return fserr.Errorf(fserr.CodeConflict, path, "%s changed while it was read (size %d, now %d): nothing of it is reported", path, was, now)
}

// CountRead adds n bytes to what the audit records as read from f: a
// search through MapAt's windows counts the bytes it searched. It may be
// called from several goroutines at once.
func (f *File) CountRead(n int64) { atomic.AddInt64(&f.mapped, n) }

// GuardFaults runs fn on the calling goroutine with memory faults made
// into panics, and a fault on a mapped window (its file truncated beneath
// it) into an io error for path. Any other panic goes on.
func GuardFaults(path string, fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			if re, ok := r.(runtime.Error); ok {
				if _, fault := re.(interface{ Addr() uintptr }); fault {
					// The runtime names a fault "invalid memory address or
					// nil pointer dereference": not a word of that is the
					// user's business.
					err = fserr.Errorf(fserr.CodeConflict, path, "%s shrank while it was read: nothing of it is reported", path)
					return
				}
			}
			panic(r)
		}
	}()
	return fn()
}

// MapsFiles reports whether this platform reads files through MapAt.
func MapsFiles() bool { return mapsFiles }
