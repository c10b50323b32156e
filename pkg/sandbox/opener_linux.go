//go:build linux

package sandbox

import (
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// openerDir is a directory an Opener has walked to, checked as OpenDir
// checks one: its real path from the kernel, inside its root, on no
// special file system.
type openerDir struct {
	f   *os.File // held open: fd is its descriptor
	fd  int
	rel string // its real root-relative path
	dev uint64
	// state: it is itself one of fsbox's state directories (by identity
	// or marker); Opener.inState looks above it
	state bool
}

// openDirFast opens and checks directory rel of rt (nil when it cannot
// be, or is not where a file may be read), and whether it is itself one
// of fsbox's state directories.
func openDirFast(s *Sandbox, rt *root, rel string) *openerDir {
	f, err := rt.r.OpenFile(rel, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	real, err := fdPath(f, rt.abs(rel))
	drel, ok := rt.relOf(real)
	var st unix.Stat_t
	fd := -1
	if rc, cerr := f.SyscallConn(); cerr == nil {
		_ = rc.Control(func(d uintptr) { fd = int(d) })
	}
	if err != nil || !ok || fd < 0 || specialFS(real) || onSpecialFS(f) || unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		f.Close()
		return nil
	}
	d := &openerDir{f: f, fd: fd, rel: drel, dev: uint64(st.Dev)}
	var mst unix.Stat_t
	d.state = s.state.ids[[2]uint64{uint64(st.Dev), st.Ino}] != nil || unix.Fstatat(fd, journalMarker, &mst, unix.AT_SYMLINK_NOFOLLOW) == nil
	return d
}

func (d *openerDir) close() { d.f.Close() }

// openFast opens name, a plain entry of d, as Open would open target t
// (false: it did not, and Open must): a regular file (never a symlink,
// never a special file, which is not even opened), on no special file
// system, whose real path (d's real path and its name) the policy lets
// be read, with no more links than deny_hardlinks allows. Three system
// calls: the check that it is a regular file, the open, the fstat.
func (o *Opener) openFast(t *target, d *openerDir, name string) (*File, bool) {
	s := o.s
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, false
	}
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, false
	}
	refuse := func() (*File, bool) { unix.Close(fd); return nil, false }
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return refuse()
	}
	if uint64(st.Dev) != d.dev && fdOnSpecialFS(fd) {
		return refuse()
	}
	rel := name
	if d.rel != "." {
		rel = d.rel + "/" + name
	}
	real := t.rt.abs(rel)
	if specialFS(real) || s.checkPatterns(t.rt, rel, false, AccessRead, t.given) != nil {
		return refuse()
	}
	if s.policy.Paths.DenyHardlinks && st.Nlink > 1 || s.stateFile([2]uint64{uint64(st.Dev), st.Ino}) != nil {
		return refuse()
	}
	s.trail.note(t.given, real, true)
	info := Info{Name: name, Path: t.display(), Abs: real, Type: "file", Size: st.Size, Mode: fs.FileMode(st.Mode & 0o777),
		ModTime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec).UTC(), ATime: time.Unix(st.Atim.Sec, st.Atim.Nsec).UTC(),
		Nlink: uint64(st.Nlink), key: [2]uint64{uint64(st.Dev), st.Ino}}
	return &File{Info: info, fd: fd, s: s}, true
}
