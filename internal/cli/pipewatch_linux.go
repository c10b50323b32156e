//go:build linux

package cli

import (
	"context"
	"errors"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// watchReader cancels cx once the reader of f, the pipe on stdout, has
// gone: Linux reports POLLERR on a pipe's write end once no reader is
// left, so a goroutine polls for it (events 0: only that, POLLHUP and
// POLLNVAL are reported), waking every 100 ms to see whether the call
// has ended. It marks out gone first: a call the cancel ended then ends
// quietly with tool.ExitClosedPipe (Run). Once stop has returned, the watch
// changes nothing.
func watchReader(cx context.Context, out *outWatch, f *os.File) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(cx)
	var mu sync.Mutex
	stopped := false
	fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: 0}}
	go func() {
		for ctx.Err() == nil {
			n, err := unix.Poll(fds, 100)
			switch {
			case errors.Is(err, unix.EINTR):
				continue
			case err != nil || (n > 0 && fds[0].Revents&unix.POLLNVAL != 0):
				return // not to be polled after all: the next write tells
			case n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0:
				mu.Lock()
				if !stopped {
					out.gone.Store(true)
					cancel()
				}
				mu.Unlock()
				return
			}
		}
	}()
	return ctx, func() {
		mu.Lock()
		stopped = true
		mu.Unlock()
		cancel()
	}
}
