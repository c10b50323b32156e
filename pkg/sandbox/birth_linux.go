package sandbox

import (
	"os"

	"golang.org/x/sys/unix"
)

// birthTime is f's creation time in nanoseconds (statx), 0 where the
// file system does not record it.
func birthTime(f *os.File) int64 {
	var st unix.Statx_t
	if err := unix.Statx(int(f.Fd()), "", unix.AT_EMPTY_PATH, unix.STATX_BTIME, &st); err != nil || st.Mask&unix.STATX_BTIME == 0 {
		return 0
	}
	return st.Btime.Sec*1e9 + int64(st.Btime.Nsec)
}
