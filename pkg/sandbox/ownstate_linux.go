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
	if rt.r == nil {
		pl, _ := s.stateInStore(rt, dirRel)
		return pl
	}
	pl, _ := s.stateWalk(rt, dirRel)
	return pl
}

// stateLexical is stateChain for rel as spelled, which need not exist
// (a path not found): sure is false when the walk met something other
// than a directory or a missing name (a symlink, a file), where only
// resolving the rest can tell.
func (s *Sandbox) stateLexical(rt *root, rel string) (pl *statePlace, sure bool) {
	if self, above := s.stateOfRoot(rt); above != nil || self != nil {
		if above == nil {
			above = self
		}
		return above, true
	}
	if rt.r == nil {
		return s.stateInStore(rt, rel)
	}
	return s.stateWalk(rt, rel)
}

func (s *Sandbox) stateWalk(rt *root, dirRel string) (pl *statePlace, sure bool) {
	if rt.state.fd == nil {
		return nil, false
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
			return nil, err == unix.ENOENT
		}
		fd = nfd
		var st unix.Stat_t
		if len(s.state.ids) > 0 && unix.Fstat(fd, &st) == nil {
			if pl := s.state.ids[[2]uint64{uint64(st.Dev), st.Ino}]; pl != nil {
				return pl, true
			}
		}
		if unix.Fstatat(fd, journalMarker, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			return markedDir(rt.abs(dirRel[:next])), true
		}
		end = next + 1
	}
	return nil, true
}
