package sandbox

import (
	"context"
	"io"
	"io/fs"
)

// A root's storage. The door (resolve, check, pin, read, walk, change) is
// one, whatever a root is made of; what pin and change do to storage goes
// through the small interfaces below, which each kind of root implements:
// the posix root (root_posix*.go), whose descriptors never leave it, and
// an in-memory root that models an object store (root_mem.go) for the
// door's tests and for the object-store roots' own.
//
// The store's methods take the call's context (an object root's requests
// end with its deadline); a handle keeps the context it was opened with.
// The door hands a root only names it has already checked lexically
// (root-relative, '/'-separated, cleaned, never climbing out). The root
// resolves a name to a pinned handle and answers with facts: what the
// handle is (kind, size, mode, times, links), its identity or version,
// where it really is, whether it lies on a special file system. Every
// rule, rule set, toggle, limit, cursor, the deadline, explain and audit
// stay in the door, which checks those facts: a root decides nothing.
//
// What the door asks, and where each kind answers from:
//
//	resolve and pin    store.stat, store.openFile, store.openDir
//	list               dirHandle.list (names and kinds), lstat, readlink
//	read a range       fileHandle.read, readAt (a version pinned at open)
//	where it is        handle.where: posix, the kernel's path of the
//	                   descriptor; an object root, the key itself
//	commit a change    changer (change_acts.go), inside the door's
//	                   transaction, conditioned on the handles pinned:
//	                   posix, the parent's path and the entry's identity
//	                   re-checked under the roots' locks; an object
//	                   root, a request conditioned on the version
//	                   (IfVersion, IfAbsent)
type store interface {
	// stat describes what name leads to (following symlinks inside the
	// root where the root has them; never out).
	stat(ctx context.Context, name string) (facts, error)
	// openFile pins what name leads to for reading, into f (its handle
	// and nothing else: the door fills f.Info once it has checked the
	// facts returned).
	openFile(ctx context.Context, name string, f *File) (facts, error)
	// openDir pins the directory name leads to.
	openDir(ctx context.Context, name string) (dirHandle, facts, error)
	// exact reports whether a directory handle's openChild and
	// openChildDir open exactly the entry of that name, never through a
	// symlink, so the door may take the child's real path to be the
	// directory's plus the name (no where): the walk's fast way.
	exact() bool
	// kind names the root's kind (explain, roots, errors).
	kind() rootKind
	close() error
	// The change side: each act, committed conditioned on what its
	// targets pinned (change_acts.go).
	changer
}

// rootKind is what a root is made of.
type rootKind uint8

const (
	kindPosix  rootKind = iota // a directory on a file system
	kindObject                 // an object store: keys, versions; no links, no modes
)

func (k rootKind) String() string {
	if k == kindObject {
		return "object"
	}
	return "posix"
}

// facts are what a root says of an object it pinned or described: the
// door's checks read them. Info's Name, Path and Abs are the door's to
// fill; the rest (Type, Size, Mode, times, Nlink, key, ver) is the
// root's.
type facts struct {
	Info
	// special: the object lies on procfs, sysfs or their kin, wherever
	// mounted (posix only).
	special bool
}

// handle is what every pinned object can say of itself.
type handle interface {
	// where is the absolute real path of the object (a posix root: the
	// kernel's, so a symlink swapped after the open cannot change it;
	// without that, lexical resolved). lexical is what the door asked
	// for, absolute.
	where(lexical string) (string, error)
	// birth is the object's creation time in ns since the epoch, 0 where
	// none is recorded.
	birth() int64
}

// dirHandle is a pinned directory: its entries are reached from it, not
// from the root again.
type dirHandle interface {
	handle
	// list appends the directory's entries, names and kinds, unsorted,
	// to out[:0]; sc is scratch it may keep from one call to the next.
	list(sc *listScratch, out []dirent) ([]dirent, error)
	// lstat describes the entry name as itself (a symlink is not
	// followed).
	lstat(name string) (facts, error)
	// readlink is the symlink name's target, as stored.
	readlink(name string) (string, error)
	// openChild and openChildDir open exactly the entry name (a regular
	// file into f; a directory), never through a symlink; only where the
	// store is exact.
	openChild(name string, f *File) (facts, error)
	openChildDir(name string) (dirHandle, facts, error)
	// openFile and openDir open what the relative path name leads to
	// from this directory, as the store's do from the root.
	openFile(name string, f *File) (facts, error)
	openDir(name string) (dirHandle, facts, error)
	close() error
}

// treeLister is a directory that can list its whole subtree at once (an
// object root's prefix, by flat listings), which a walk asks for before
// it starts: a hint, after which the directories below list from what
// it found.
type treeLister interface {
	listTree()
}

// fileHandle is a pinned file, open for reading: a posix root's
// descriptor, an object root's version.
type fileHandle interface {
	handle
	io.Reader
	io.ReaderAt
	// stamp is what changes when the content does: size and times now.
	stamp() (fileStamp, error)
	close() error
}

// factsOf turns a file system's answer into facts.
func factsOf(fi fs.FileInfo) facts {
	return facts{Info: newInfo("", "", "", fi)}
}

// named is the Info the door reports for these facts: the object's name,
// the path output shows and its absolute real path.
func (fc facts) named(name, display, abs string) Info {
	i := fc.Info
	i.Name, i.Path, i.Abs = name, display, abs
	return i
}
