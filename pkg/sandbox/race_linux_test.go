//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// exchange atomically swaps the entries a and b (renameat2 RENAME_EXCHANGE),
// so the name never goes missing between the two states.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
