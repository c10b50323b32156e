//go:build !linux

package sandbox

import "strings"

// stateChain walks dirRel (a real directory of rt, not ".") from the
// root down, each component opened from the one before, and names the
// first directory on the way that is a state directory by identity or
// marker (nil: none). See ownstate_linux.go.
func (s *Sandbox) stateChain(rt *root, dirRel string) *statePlace {
	if rt.r == nil {
		pl, _ := s.stateInStore(rt, dirRel)
		return pl
	}
	cur := rt.r
	defer func() {
		if cur != rt.r {
			cur.Close()
		}
	}()
	parts := strings.Split(dirRel, "/")
	for i, name := range parts {
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
			if k := devIno(fi); k != [2]uint64{} && s.state.ids[k] != nil {
				return s.state.ids[k]
			}
		}
		if _, err := sub.Lstat(journalMarker); err == nil {
			return markedDir(rt.abs(strings.Join(parts[:i+1], "/")))
		}
	}
	return nil
}

// stateLexical: never sure here; the path is resolved (deniedBeyond).
func (s *Sandbox) stateLexical(rt *root, rel string) (*statePlace, bool) {
	if rt.r == nil {
		return s.stateInStore(rt, rel)
	}
	return nil, false
}
