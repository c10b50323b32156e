package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"sort"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// On Windows the tree is checked and removed through os.Root by name: the
// descriptor-relative guarantees of the Unix version (tree_unix.go) do not
// hold here, which README's platform notes say.

const maxTreeDepth = 4096

type treeNode struct {
	name string
	dir  bool
	key  [2]uint64
	kids []treeNode
}

func scanTree(w *WriteTarget, want [2]uint64, check func(sub string, isDir bool) error) (*treeNode, error) {
	top := &treeNode{name: w.Name, dir: true, key: want}
	return top, longPathErr(scanRoot(w.dir, w.Name, "", 1, top, check), w.Path)
}

func scanRoot(r *os.Root, rel, prefix string, depth int, n *treeNode, check func(string, bool) error) error {
	if depth > maxTreeDepth {
		return fserr.Errorf(fserr.CodeTooLarge, prefix, "the tree is deeper than %d levels: nothing was changed", maxTreeDepth)
	}
	f, err := r.Open(rel)
	if err != nil {
		return err
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return err
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	for _, e := range ents {
		isDir := e.IsDir()
		if len(prefix)+len(e.Name()) > maxPathLen {
			return errLongPath
		}
		sub := prefix + e.Name()
		if err := check(sub, isDir); err != nil {
			return err
		}
		kid := treeNode{name: e.Name(), dir: isDir}
		if isDir {
			if err := scanRoot(r, path.Join(rel, e.Name()), sub+"/", depth+1, &kid, check); err != nil {
				return err
			}
		}
		n.kids = append(n.kids, kid)
	}
	return nil
}

func removeTree(w *WriteTarget, top *treeNode) error { return w.dir.RemoveAll(top.name) }

func unlinkAt(w *WriteTarget) error { return w.dir.Remove(w.Name) }

func rmdirEntryAt(w *WriteTarget) error {
	if fi, err := w.dir.Lstat(w.Name); err != nil || !fi.IsDir() {
		return fs.ErrInvalid
	}
	return w.dir.Remove(w.Name)
}

func openNoFollow(w *WriteTarget, name string, flags int, perm uint32) (*os.File, error) {
	if fi, err := w.dir.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("is a symlink")}
	}
	return w.dir.OpenFile(name, flags, fs.FileMode(perm))
}

func sweepTemps(w *WriteTarget) {}

func renameNoReplace(w *WriteTarget, tmp string) error {
	return renameNoReplaceFrom(w, tmp, w.Name)
}

func renameNoReplaceFrom(w *WriteTarget, from, to string) error {
	if _, err := w.dir.Lstat(to); err == nil {
		return fs.ErrExist
	}
	return w.dir.Rename(from, to)
}

func exchangeAt(w *WriteTarget, tmp string) error { return exchangeByRenames(w, tmp) }
