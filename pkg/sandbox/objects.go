package sandbox

import (
	"context"
	"sync/atomic"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// Object roots on a real store. The sandbox holds no S3 client: the
// binary that serves object roots (fsbox-s3) registers an opener with
// UseObjectStores before it runs a call, so the client's libraries (and
// their package initialisation, tens of milliseconds) are never linked
// into fsbox itself, whose every local call would pay for them.

// ObjectOpener opens the store of the object root at u, under [store]
// cfg: an ObjectStore whose keys are relative to u's prefix (it adds
// "PREFIX/" to every request and strips it from every answer). It is
// called before Landlock, once per root; it loads the AWS configuration
// and credentials then.
type ObjectOpener func(ctx context.Context, cfg policy.Store, u policy.ObjectURL) (ObjectStore, error)

// ObjectFiler is what an ObjectStore may also say: the files it must read
// after Landlock (a web identity token, name resolution's files). The
// sandbox adds them to Landlock's read set and denies them through the
// door.
type ObjectFiler interface {
	Files() []string
}

var objectOpener atomic.Pointer[ObjectOpener]

// UseObjectStores makes open the opener of every object root this process
// opens from now on.
func UseObjectStores(open ObjectOpener) { objectOpener.Store(&open) }

// ObjectStoresLinked reports whether this binary can open object roots
// (UseObjectStores was called).
func ObjectStoresLinked() bool { return objectOpener.Load() != nil }

// openObjectStore opens the store of the object root url through the
// registered opener.
func openObjectStore(cfg policy.Store, url string) (ObjectStore, error) {
	u, err := policy.ParseObjectURL(url)
	if err != nil {
		return nil, fserr.Errorf(fserr.CodeConfig, url, "%v", err)
	}
	open := objectOpener.Load()
	if open == nil {
		return nil, fserr.Errorf(fserr.CodeConfig, url,
			"%s is an object root, and this binary has no object-store client: run the call with fsbox-s3 (fsbox hands such a policy over to the fsbox-s3 beside it)", url)
	}
	return (*open)(context.Background(), cfg, u)
}
