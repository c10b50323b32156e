//go:build !linux

package sandbox

import (
	"errors"
	"os"
)

// Elsewhere than on Linux the posix root has no fast ways: entries are
// listed with ReadDir and opened through os.Root (openReadFlags), then
// checked on the descriptor like any open (store.exact is false).

const haveOpenChild = false

var errNoFastWay = errors.New("no descriptor fast way on this platform")

func fdPathOf(fd int, lexical string) (string, error) { return "", errNoFastWay }

// openDirIn opens the directory name below r as a sub-root of its own
// (openRoot) and the directory itself through it: here, with no /proc to
// make a root from a descriptor later, both at once.
func openDirIn(r *os.Root, name string) (*os.Root, *os.File, error) {
	sub, err := openRoot(r, name)
	if err != nil {
		return nil, nil, err
	}
	f, err := sub.Open(".")
	if err != nil {
		sub.Close()
		return nil, nil, err
	}
	return sub, f, nil
}

func rootOfFd(fd int) (*os.Root, error) { return nil, errNoFastWay }

func (d *posixDir) lstatAt(name string) (facts, bool, error) { return facts{}, false, nil }

func (d *posixDir) openChild(name string, f *File) (facts, error) { return facts{}, errNoFastWay }

func (d *posixDir) openChildDir(name string) (dirHandle, facts, error) {
	return nil, facts{}, errNoFastWay
}

func (d *posixDir) list(_ *listScratch, out []dirent) ([]dirent, error) {
	ents, err := d.f.ReadDir(-1)
	out = out[:0]
	for _, e := range ents {
		out = append(out, dirent{name: e.Name(), typ: e.Type()})
	}
	return out, err
}
