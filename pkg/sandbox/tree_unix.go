//go:build unix

package sandbox

import (
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/fsbox/fsbox/pkg/fserr"
	"golang.org/x/sys/unix"
)

// maxTreeDepth bounds how deep a tree rm -r or mv will check: one
// descriptor is held per level. Deeper trees are refused (too_large)
// before anything changes.
const maxTreeDepth = 4096

// treeNode is one entry of a checked tree: what it was (device and
// inode) when it was checked, so the change acts on exactly those objects.
type treeNode struct {
	name string
	dir  bool
	key  [2]uint64
	kids []treeNode
}

// scanTree opens the directory name inside parent without following a
// symlink, requires it to be the object want (device, inode), and walks
// everything below it through descriptors (each directory opened from its
// parent's descriptor, O_NOFOLLOW), calling check with the path below the
// top ('/'-separated) of every entry. The first error stops the scan.
func scanTree(w *WriteTarget, want [2]uint64, check func(sub string, isDir bool) error) (*treeNode, error) {
	top := &treeNode{name: w.Name, dir: true, key: want}
	fd, err := openDirAt(int(w.dirF.Fd()), w.Name, want)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var buf []byte
	if err := scanDir(fd, top, "", 1, check, &buf); err != nil {
		return nil, longPathErr(err, w.Path)
	}
	return top, nil
}

// openDirAt opens a directory entry of dirfd, refusing a symlink and
// anything that is not the object want.
func openDirAt(dirfd int, name string, want [2]uint64) (int, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ELOOP || err == unix.ENOTDIR || err == unix.ENOENT {
			return -1, fserr.Errorf(fserr.CodeConflict, name, "%s changed during the call: nothing more was changed", name)
		}
		return -1, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, &fs.PathError{Op: "fstat", Path: name, Err: err}
	}
	if [2]uint64{uint64(st.Dev), uint64(st.Ino)} != want {
		unix.Close(fd)
		return -1, fserr.Errorf(fserr.CodeConflict, name, "%s was replaced during the call: nothing more was changed", name)
	}
	return fd, nil
}

func scanDir(fd int, n *treeNode, prefix string, depth int, check func(string, bool) error, buf *[]byte) error {
	if depth > maxTreeDepth {
		return fserr.Errorf(fserr.CodeTooLarge, prefix, "the tree is deeper than %d levels: nothing was changed", maxTreeDepth)
	}
	names, err := readNames(fd, buf)
	if err != nil {
		return err
	}
	slices.Sort(names)
	n.kids = make([]treeNode, 0, len(names))
	for _, name := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return &fs.PathError{Op: "lstat", Path: prefix + name, Err: err}
		}
		isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
		if len(prefix)+len(name) > maxPathLen {
			// As a walk does not enter it: a path that long cannot be
			// named to fsbox, and checking every path below it whole
			// would cost the square of the chain's depth.
			return errLongPath
		}
		sub := prefix + name
		if err := check(sub, isDir); err != nil {
			return err
		}
		kid := treeNode{name: name, dir: isDir, key: [2]uint64{uint64(st.Dev), uint64(st.Ino)}}
		if isDir {
			cfd, err := openDirAt(fd, name, kid.key)
			if err != nil {
				return err
			}
			err = scanDir(cfd, &kid, sub+"/", depth+1, check, buf)
			unix.Close(cfd)
			if err != nil {
				return err
			}
		}
		n.kids = append(n.kids, kid)
	}
	return nil
}

// readNames lists a directory descriptor (without . and ..), reading from
// its start.
func readNames(fd int, buf *[]byte) ([]string, error) {
	if len(*buf) == 0 {
		*buf = make([]byte, 32<<10)
	}
	if _, err := unix.Seek(fd, 0, 0); err != nil {
		return nil, &fs.PathError{Op: "seek", Err: err}
	}
	var names []string
	for {
		n, err := unix.ReadDirent(fd, *buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "readdirent", Err: err}
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent((*buf)[:n], -1, names)
	}
}

// removeTree deletes a checked tree depth first, each directory reached
// again from its parent's descriptor and each entry unlinked relative to
// it only while it is still the object that was checked. A new entry makes
// its directory non-empty: the call stops with conflict there.
func removeTree(w *WriteTarget, top *treeNode) error {
	return removeIn(int(w.dirF.Fd()), top)
}

func removeIn(dirfd int, n *treeNode) error {
	if n.dir {
		fd, err := openDirAt(dirfd, n.name, n.key)
		if err != nil {
			return err
		}
		for i := range n.kids {
			if err := removeIn(fd, &n.kids[i]); err != nil {
				unix.Close(fd)
				return err
			}
		}
		unix.Close(fd)
	} else {
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, n.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if err == unix.ENOENT {
				return nil // already gone
			}
			return &fs.PathError{Op: "lstat", Path: n.name, Err: err}
		}
		if [2]uint64{uint64(st.Dev), uint64(st.Ino)} != n.key {
			return fserr.Errorf(fserr.CodeConflict, n.name, "%s was replaced during the call: it was left in place", n.name)
		}
	}
	flags := 0
	if n.dir {
		flags = unix.AT_REMOVEDIR
	}
	if err := unix.Unlinkat(dirfd, n.name, flags); err != nil {
		if err == unix.ENOTEMPTY || err == unix.EEXIST {
			return fserr.Errorf(fserr.CodeConflict, n.name, "%s gained entries during the call: it was left in place", n.name)
		}
		return &fs.PathError{Op: "unlink", Path: n.name, Err: err}
	}
	return nil
}

// unlinkAt removes one entry of dir.
func unlinkAt(w *WriteTarget) error {
	return unix.Unlinkat(int(w.dirF.Fd()), w.Name, 0)
}

// rmdirEntryAt removes the entry of dir if it is an empty directory
// (never a file that took its name).
func rmdirEntryAt(w *WriteTarget) error {
	return unix.Unlinkat(int(w.dirF.Fd()), w.Name, unix.AT_REMOVEDIR)
}

// openNoFollow opens name inside dir with one openat that refuses a
// symlink as the last component (os.Root follows one that stays inside).
func openNoFollow(w *WriteTarget, name string, flags int, perm uint32) (*os.File, error) {
	dir := w.dirF
	if strings.Contains(name, "/") {
		return nil, &fs.PathError{Op: "open", Path: name, Err: unix.EINVAL}
	}
	for {
		fd, err := unix.Openat(int(dir.Fd()), name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return os.NewFile(uintptr(fd), name), nil
	}
}

// sweepTemps removes fsbox's own temporary files in dir that are older
// than an hour: what a write killed between creating its temp file and
// renaming it left behind. A live write renames its temp within the call.
func sweepTemps(w *WriteTarget) {
	dir := w.dirF
	var buf []byte
	names, err := readNames(int(dir.Fd()), &buf)
	if err != nil {
		return
	}
	cutoff := timeNow().Add(-tempMaxAge).Unix()
	for _, name := range names {
		if !strings.HasPrefix(name, tempPrefix) {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue
		}
		if st.Mode&unix.S_IFMT == unix.S_IFREG && st.Mtim.Sec < cutoff {
			unix.Unlinkat(int(dir.Fd()), name, 0)
		}
	}
}
