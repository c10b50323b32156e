package sandbox

import (
	"context"
	"sync/atomic"
)

// Seam is a test-only hook called between a check and the act it guards,
// so a race test can swap a path at exactly the wrong moment instead of
// hoping a stress loop hits the window. A change's points fire through its
// transaction (Tx.recheck before the re-check of its targets, Tx.at
// between two of its steps). It is nil outside tests; setting it
// is not safe while sandbox calls run in other goroutines.
//
// Points (the string passed):
//
//	"remove.checked"  rm -r checked the whole tree, nothing deleted yet
//	"rename.checked"  mv checked source and destination trees, before renameat2
//	"rename.locked"   mv --force hashed the file it replaces, before the exchange
//	"replace.checked" a write's temp file is complete, before it takes the name
//	"replace.locked"  a write re-checked its target under the lock, before the swap
//	"append.checked"  an append target is checked, before it is opened for writing
//	"edit.checked"    a checked target's current content is about to be read (edit)
//	"open.checked"    a path was checked lexically, before it is opened
//	"mkdir.made"      a missing parent directory was made, before it is entered
//	"batch.checked"   a batch holds the write lock and is about to re-check its targets
//	"batch.planned"   a batch's plan is in the journal, before its first swap
//	"batch.swapped"   one of a batch's changes was swapped in, before the next
//	"change.lock"     a change's input is in, before it takes its locks
//	"cp.checked"      a tree copy holds the locks, before it re-checks its top
//	"cp.planned"      a tree copy's plan is in the journal, before its stage is made
//	"cp.copied"       one entry of a tree copy was made in its stage
//	"cp.staged"       a tree copy's stage is complete (a merge: its files staged), before the rename (the swap)
//	"cp.renamed"      a tree copy's stage took its name, before the change is recorded
var Seam func(point string)

func atSeam(point string) {
	if Seam != nil {
		Seam(point)
	}
}

// SetDirSeam sets a test-only hook called as a directory is read, with
// the call's context, and returns what undoes it: a test blocks it (until
// the context ends, say) to stand for a directory read that hangs, as on
// a hard NFS mount, and checks what a walk or a listing gives by the
// call's deadline, without a timed race. Unlike Seam it is held
// atomically: a walk cut at its deadline may still be reading directories
// (and asking the hook) after the call has returned, as a test resets it.
//
// Points (the first string; the second is the path as shown):
//
//	"dir.list"   a walk (on whichever goroutine prepares it) or ReadDirContext is about to list a directory
//	"dir.entry"  ReadDirContext is about to describe one entry (ls's lstat), in name order
func SetDirSeam(fn func(ctx context.Context, point, path string)) (undo func()) {
	old := dirSeam.Swap(&fn)
	return func() { dirSeam.Store(old) }
}

var dirSeam atomic.Pointer[func(ctx context.Context, point, path string)]

func hasDirSeam() bool { return dirSeam.Load() != nil }

func atDirSeam(ctx context.Context, point, path string) {
	if fn := dirSeam.Load(); fn != nil && *fn != nil {
		(*fn)(ctx, point, path)
	}
}
