//go:build unix

package sandbox

import (
	"os"
	"strconv"
	"syscall"
)

// openRoot is r.OpenRoot(name) that cannot block. os.Root.OpenRoot opens
// the last component with neither O_DIRECTORY nor O_NONBLOCK, so a FIFO
// there (the parent of "fifo/x", or one swapped in for a directory) would
// block until a writer came. The name is opened first as a directory with
// O_NONBLOCK, which fails at once on anything else, and the root is made
// from that very descriptor through /proc/self/fd, so nothing is looked up
// twice. Without /proc the name is resolved again by OpenRoot.
func openRoot(r *os.Root, name string) (*os.Root, error) {
	f, err := r.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if sub, err := os.OpenRoot("/proc/self/fd/" + strconv.Itoa(int(f.Fd()))); err == nil {
		return sub, nil
	}
	return r.OpenRoot(name)
}
