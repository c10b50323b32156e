package sandbox

import (
	"strings"

	"golang.org/x/sys/unix"
)

// stateChain walks dirRel (a real directory of rt, not ".") from the
// root down, one O_PATH descriptor per component opened from the one
// before without following a symlink, and names the first directory on
// the way that is a state directory by identity or marker (nil: none).
// A component that cannot be opened ends the walk: the open the caller
// makes answers for it.
func (s *Sandbox) stateChain(rt *root, dirRel string) *statePlace {
	if rt.state.fd == nil {
		return nil
	}
	rootFd := int(rt.state.fd.Fd())
	fd := rootFd
	defer func() {
		if fd != rootFd {
			unix.Close(fd)
		}
	}()
	for end := 0; end < len(dirRel); {
		next := strings.IndexByte(dirRel[end:], '/')
		if next < 0 {
			next = len(dirRel)
		} else {
			next += end
		}
		name := dirRel[end:next]
		nfd, err := unix.Openat(fd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if fd != rootFd {
			unix.Close(fd)
		}
		fd = rootFd
		if err != nil {
			return nil
		}
		fd = nfd
		var st unix.Stat_t
		if len(s.state.ids) > 0 && unix.Fstat(fd, &st) == nil {
			if pl := s.state.ids[[2]uint64{uint64(st.Dev), st.Ino}]; pl != nil {
				return pl
			}
		}
		if unix.Fstatat(fd, journalMarker, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			return markedDir(rt.abs(dirRel[:next]))
		}
		end = next + 1
	}
	return nil
}
