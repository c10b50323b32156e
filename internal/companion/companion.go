// Package companion locates fsbox's own executable and the companion
// binary beside it (fsbox-full), and runs the companion. It is
// command-layer plumbing: the sandbox neither finds nor runs programs.
package companion

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Self is the canonical (absolute, symlink-free) path of the running
// executable: the target of the links `fsbox links` creates, and the
// directory the companion is looked up in. The executable does not move
// while the process runs, so it is found once.
func Self() (string, error) { return self() }

var self = sync.OnceValues(func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(exe)
})

// Beside is the path of the executable file name in the running binary's
// own directory (fsbox-full beside fsbox), or an error saying why there is
// none.
func Beside(name string) (string, error) {
	s, err := Self()
	if err != nil {
		return "", fmt.Errorf("where the running binary lies is unknown: %v", err)
	}
	bin := filepath.Join(filepath.Dir(s), name)
	fi, err := os.Stat(bin)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return bin, fmt.Errorf("%s is not an executable file", bin)
	}
	return bin, nil
}
