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

// atime: not read here yet (the modification time stands in).
func atime(fi fs.FileInfo) time.Time { return fi.ModTime().UTC() }

const syscallNonblock = 0

const oNoFollow = 0

// tryLockFile: no flock here; the in-process mutex alone serialises changes.
func tryLockFile(f *os.File, shared bool) (bool, error) { return true, nil }

func unlockFile(f *os.File) {}

func renameAt(src, dst *WriteTarget, force bool) error {
	if src.rt != dst.rt {
		// No rename between two pinned directories here, and a rename by
		// path strings would follow what a racing process swaps in.
		return errors.New("moving between two writable roots is not supported on this platform")
	}
	return src.rt.r.Rename(src.rootRel(), dst.rootRel())
}

func exchangeBetween(src, dst *WriteTarget) error { return errNoExchange }

// errNoExchange: no one-step exchange on this platform (yet).
var errNoExchange = errors.New("no one-step exchange here")

func exchangeOnly(w *WriteTarget, tmp string) error { return errNoExchange }

// renameInto is not offered here: the journal copies instead.
func renameInto(w *WriteTarget, name string, dir *os.File, to string) error {
	return errNoExchange
}
