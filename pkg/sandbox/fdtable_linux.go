package sandbox

import "golang.org/x/sys/unix"

// growCostly: on Linux, growing a shared descriptor table waits for an
// RCU grace period (fs/file.c, expand_fdtable).
const growCostly = true

// growTable makes the table reach past slot 255: a descriptor duplicated
// there (from an eventfd, which needs no path and so passes Landlock),
// then closed. A failure leaves the table as it was: the read-ahead
// widens all the same and pays for the growth itself, as it did before.
func growTable() {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return
	}
	if hi, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 255); err == nil {
		unix.Close(hi)
	}
	unix.Close(fd)
}
