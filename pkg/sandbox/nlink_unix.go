//go:build !linux && !windows

package sandbox

import (
	"io/fs"
	"syscall"
)

func nlinkOf(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
