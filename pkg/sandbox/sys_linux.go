package sandbox

import (
	"io/fs"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

const openReadFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY

// fdPath returns the absolute path an open descriptor refers to, from the
// kernel (/proc/self/fd), so a symlink swapped after the open cannot change
// the answer. Without /proc it falls back to resolving lexical.
func fdPath(f *os.File, lexical string) (string, error) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err == nil && len(p) > 0 && p[0] == '/' {
		return p, nil
	}
	return fallbackPath(lexical)
}

// onSpecialFS reports whether f lives on procfs or sysfs, wherever mounted.
func onSpecialFS(f *os.File) bool {
	var st unix.Statfs_t
	if unix.Fstatfs(int(f.Fd()), &st) != nil {
		return false
	}
	switch st.Type {
	case unix.PROC_SUPER_MAGIC, unix.SYSFS_MAGIC, unix.DEBUGFS_MAGIC, unix.TRACEFS_MAGIC,
		unix.SECURITYFS_MAGIC, unix.DEVPTS_SUPER_MAGIC, unix.CGROUP_SUPER_MAGIC, unix.CGROUP2_SUPER_MAGIC:
		return true
	}
	return false
}

func nlink(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// fileKey identifies a file by device and inode, for loop detection.
func fileKey(info Info) ([2]uint64, bool) {
	return info.key, info.key != [2]uint64{}
}

func devIno(fi fs.FileInfo) [2]uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return [2]uint64{uint64(st.Dev), st.Ino}
	}
	return [2]uint64{}
}
