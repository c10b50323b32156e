package sandbox

import "io/fs"

func nlinkOf(fi fs.FileInfo) uint64 { return 1 }

func devInoOf(fi fs.FileInfo) [2]uint64 { return [2]uint64{} }
