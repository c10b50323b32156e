//go:build linux

package mcpserver

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// fileTimes are the times get_file_info reports beside the mtime.
type fileTimes struct{ created, accessed time.Time }

// fileTimesOf asks statx for the birth and access times of the path the
// sandbox described (its real path, the final symlink not followed). The
// answer is used only when it describes the same object (type, size and
// mtime agree); otherwise, and where the filesystem keeps no birth time,
// the mtime stands in.
func fileTimesOf(info sandbox.Info) fileTimes {
	t := fileTimes{created: info.ModTime, accessed: info.ModTime}
	var sx unix.Statx_t
	err := unix.Statx(unix.AT_FDCWD, info.Abs, unix.AT_SYMLINK_NOFOLLOW,
		unix.STATX_TYPE|unix.STATX_SIZE|unix.STATX_MTIME|unix.STATX_ATIME|unix.STATX_BTIME, &sx)
	if err != nil {
		return t
	}
	ts := func(x unix.StatxTimestamp) time.Time { return time.Unix(x.Sec, int64(x.Nsec)).UTC() }
	if int64(sx.Size) != info.Size || !ts(sx.Mtime).Equal(info.ModTime) || uint32(sx.Mode)&unix.S_IFMT != typeBits(info.Type) {
		return t
	}
	if sx.Mask&unix.STATX_ATIME != 0 {
		t.accessed = ts(sx.Atime)
	}
	if sx.Mask&unix.STATX_BTIME != 0 {
		t.created = ts(sx.Btime)
	}
	return t
}

func typeBits(typ string) uint32 {
	switch typ {
	case "file":
		return unix.S_IFREG
	case "dir":
		return unix.S_IFDIR
	case "symlink":
		return unix.S_IFLNK
	}
	return 0
}
