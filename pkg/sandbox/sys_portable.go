//go:build !linux

package sandbox

import "io/fs"

// What every platform but Linux shares: the walker's descriptor fast path
// (openChild, raw reads, getdents) is Linux's; elsewhere entries are
// listed with ReadDir and opened through os.Root (openReadFlags, then the
// checks on the descriptor).

func nlink(fi fs.FileInfo) uint64 { return nlinkOf(fi) }

func fileKey(info Info) ([2]uint64, bool) {
	return info.key, info.key != [2]uint64{}
}

func devIno(fi fs.FileInfo) [2]uint64 { return devInoOf(fi) }

func rawRead(fd int, p []byte) (int, error)             { panic("no raw descriptors on this platform") }
func rawPread(fd int, p []byte, off int64) (int, error) { panic("no raw descriptors on this platform") }
func rawClose(fd int) error                             { return nil }
