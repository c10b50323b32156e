//go:build !linux

package cli

import (
	"context"
	"os"
)

// watchReader: elsewhere than on Linux, a pipe's reader is found gone at
// the next write (EPIPE), as before.
func watchReader(cx context.Context, _ *outWatch, _ *os.File) (context.Context, func()) {
	return cx, func() {}
}
