package sandbox

import (
	"io/fs"
	"syscall"
)

// changeTime is the inode's ctime in nanoseconds: any write, chmod or
// link change moves it.
func changeTime(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Sec*1e9 + st.Ctim.Nsec
	}
	return 0
}
