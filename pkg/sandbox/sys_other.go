//go:build !linux && !darwin

package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"time"
)

const openReadFlags = os.O_RDONLY

// fdPath resolves the lexical path. Without /proc this can race with a
// symlink swap; the open itself still went through os.Root.
func fdPath(f *os.File, lexical string) (string, error) { return fallbackPath(lexical) }

func onSpecialFS(f *os.File) bool { return false }

func nlink(fi fs.FileInfo) uint64 { return nlinkOf(fi) }

func fileKey(info Info) ([2]uint64, bool) {
	return info.key, info.key != [2]uint64{}
}

func devIno(fi fs.FileInfo) [2]uint64 { return devInoOf(fi) }

// atime: not read here yet (the modification time stands in).
func atime(fi fs.FileInfo) time.Time { return fi.ModTime().UTC() }

func openChild(d *Dir, name, display string, f *File) error { return nil }

const haveOpenChild = false

func listDir(d *Dir, _ *listScratch, out []dirent) ([]dirent, error) {
	ents, err := d.f.ReadDir(-1)
	out = out[:0]
	for _, e := range ents {
		out = append(out, dirent{name: e.Name(), typ: e.Type()})
	}
	return out, err
}

func rawRead(fd int, p []byte) (int, error)             { panic("no raw descriptors on this platform") }
func rawPread(fd int, p []byte, off int64) (int, error) { panic("no raw descriptors on this platform") }
func rawClose(fd int) error                             { return nil }

func openChildDir(d *Dir, name, display string) (*Dir, error) { return nil, nil }

const syscallNonblock = 0

const oNoFollow = 0

func lockDir(f *os.File) error { return nil }

func renameAt(src, dst *WriteTarget, force bool) error {
	return src.s.work.r.Rename(src.Rel(), dst.Rel())
}

// errNoExchange: no one-step exchange on this platform (yet).
var errNoExchange = errors.New("no one-step exchange here")

func exchangeOnly(w *WriteTarget, tmp string) error { return errNoExchange }

// renameInto is not offered here: the journal copies instead.
func renameInto(w *WriteTarget, name string, dir *os.File, to string) error {
	return errNoExchange
}

// platformGuarantees: none of the four holds here (see the stand-ins
// above): fsbox refuses to run unless the policy accepts that in
// [sandbox] require.
func platformGuarantees() Guarantees { return Guarantees{} }
