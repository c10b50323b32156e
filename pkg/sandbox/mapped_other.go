//go:build !unix

package sandbox

import (
	"errors"
)

const mapsFiles = false

func (f *File) Mappable() bool { return false }

func (f *File) MapAt(off int64, n int) (*Mapping, error) { return nil, errors.ErrUnsupported }

func (m *Mapping) Unmap() {}

func (f *File) stamp() (fileStamp, error) {
	fi, err := f.os.Stat()
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}, nil
}
