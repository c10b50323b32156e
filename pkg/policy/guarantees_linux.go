package policy

import "os"

// platformGuarantees: all four; the descriptor path check needs /proc
// (without it fdPath falls back to the name, and says so here).
func platformGuarantees() Guarantees {
	_, err := os.Stat("/proc/self/fd") // the platform, not a root (see the package comment)
	return Guarantees{DescriptorPathCheck: err == nil, DirLock: true, NoFollow: true, NoReplaceRename: true}
}
