package sandbox

import (
	"io/fs"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// Stat returns the entry's size and modification time, for filters that
// need them (find --size, --changed-within), without opening it: its
// directory's handle describes the name (on a posix root, an fstatat of
// it in the directory the walk holds), never following a final symlink.
// An entry reached by following a symlink (-L) is opened through every
// check instead, and described as what it leads to.
func (e *Entry) Stat() (size int64, mtime time.Time, err error) {
	if e.dir == nil {
		return 0, time.Time{}, fserr.Errorf(fserr.CodeIO, e.Path, "%s was released before it was described", e.Path)
	}
	if e.via {
		return e.statOpened()
	}
	fc, err := e.dir.h.lstat(e.Name)
	if err != nil {
		return 0, time.Time{}, mapOpenErr(err, e.Path)
	}
	return fc.Size, fc.ModTime, nil
}

// Lstat describes the entry as itself (a symlink is not followed) from
// its directory's handle: type, permission bits, size, links, identity
// and, for a symlink, its target as stored. An entry reached by
// following a symlink (-L) is described as what it leads to.
func (e *Entry) Lstat() (Info, error) {
	if e.dir == nil {
		return Info{}, fserr.Errorf(fserr.CodeIO, e.Path, "%s was released before it was described", e.Path)
	}
	if e.via {
		f, err := e.Open()
		if err != nil {
			return Info{}, err
		}
		defer f.Close()
		return f.Info, nil
	}
	fc, err := e.dir.h.lstat(e.Name)
	if err != nil {
		return Info{}, mapOpenErr(err, e.Path)
	}
	info := fc.named(e.Name, e.Path, "")
	if fc.Mode&fs.ModeSymlink != 0 {
		if info.Target, err = e.dir.h.readlink(e.Name); err != nil {
			return Info{}, mapOpenErr(err, e.Path)
		}
	}
	return info, nil
}
