package sandbox

import (
	"io/fs"
	"syscall"
)

// changeTime is the inode's ctime in nanoseconds: any write, chmod or
// link change moves it.
func changeTime(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctimespec.Sec*1e9 + st.Ctimespec.Nsec
	}
	return 0
}
