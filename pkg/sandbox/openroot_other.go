//go:build !unix

package sandbox

import "os"

// openRoot is r.OpenRoot(name); see openroot_unix.go.
func openRoot(r *os.Root, name string) (*os.Root, error) { return r.OpenRoot(name) }
