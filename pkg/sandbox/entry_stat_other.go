//go:build !unix

package sandbox

import "time"

// Stat returns the entry's size and modification time (see the unix
// version); here through a checked open, or its directory's Lstat.
func (e *Entry) Stat() (size int64, mtime time.Time, err error) {
	if e.dir == nil {
		return 0, time.Time{}, Errorf(CodeIO, e.Path, "%s was released before it was described", e.Path)
	}
	if e.via || e.dir.r == nil {
		return e.statOpened()
	}
	fi, err := e.dir.r.Lstat(e.Name)
	if err != nil {
		return 0, time.Time{}, mapOpenErr(err, e.Path)
	}
	return fi.Size(), fi.ModTime(), nil
}
