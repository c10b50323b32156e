//go:build !unix

package sandbox

import (
	"errors"
)

const mapsFiles = false

func (f *File) Mappable() bool { return false }

func (f *File) MapAt(off int64, n int) (*Mapping, error) { return nil, errors.ErrUnsupported }

func (m *Mapping) Unmap() {}

func (p *posixFile) stamp() (fileStamp, error) {
	if p.os == nil {
		return fileStamp{}, errors.ErrUnsupported
	}
	fi, err := p.os.Stat()
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}, nil
}
