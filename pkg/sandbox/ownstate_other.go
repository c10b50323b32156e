//go:build !linux

package sandbox

import "strings"

// stateChain walks dirRel (a real directory of rt, not ".") from the
// root down, each component opened from the one before, and names the
// first directory on the way that is a state directory by identity or
// marker (nil: none). See ownstate_linux.go.
func (s *Sandbox) stateChain(rt *root, dirRel string) *statePlace {
	cur := rt.r
	defer func() {
		if cur != rt.r {
			cur.Close()
		}
	}()
	for i, name := range strings.Split(dirRel, "/") {
		sub, err := openRoot(cur, name)
		if cur != rt.r {
			cur.Close()
		}
		cur = rt.r
		if err != nil {
			return nil
		}
		cur = sub
		if fi, err := sub.Stat("."); err == nil {
			if pl := s.state.ids[devIno(fi)]; pl != nil && devIno(fi) != [2]uint64{} {
				return pl
			}
		}
		if _, err := sub.Lstat(journalMarker); err == nil {
			return markedDir(rt.abs(strings.Join(strings.Split(dirRel, "/")[:i+1], "/")))
		}
	}
	return nil
}
