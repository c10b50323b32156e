//go:build !linux

package sandbox

import (
	"io/fs"
	"os"
)

const openReadFlags = os.O_RDONLY

// fdPath resolves the lexical path. Without /proc this can race with a
// symlink swap; the open itself still went through os.Root.
func fdPath(f *os.File, lexical string) (string, error) { return fallbackPath(lexical) }

func onSpecialFS(f *os.File) bool { return false }

func nlink(fi fs.FileInfo) uint64 { return nlinkOf(fi) }

func fileKey(info Info) ([2]uint64, bool) {
	return info.key, info.key != [2]uint64{}
}

func devIno(fi fs.FileInfo) [2]uint64 { return devInoOf(fi) }
