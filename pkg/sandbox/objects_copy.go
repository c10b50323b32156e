package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"strings"
)

// ObjectCopier is a store that copies an object within the store, no
// byte passing through fsbox: the journal keeps a prior version that way.
type ObjectCopier interface {
	// Copy copies srcKey of src, on condition that it holds version
	// ifVersion (ErrPrecondition when it no longer does), to key. src is
	// the copier itself or another store of the same kind; a store that
	// cannot copy from src says so with errCannotCopy.
	Copy(ctx context.Context, key string, src ObjectStore, srcKey, ifVersion string) (Object, error)
}

// errCannotCopy: the store cannot copy from that source; the caller
// reads and writes instead.
var errCannotCopy = errCopy{}

type errCopy struct{}

func (errCopy) Error() string { return "the store cannot copy from this source" }

// ErrCannotCopy is what an ObjectCopier answers for a source it cannot
// copy from.
var ErrCannotCopy error = errCannotCopy

// Unwrap is the store below a counted or prefixed view of one, and key
// as that store names it.
func Unwrap(s ObjectStore, key string) (ObjectStore, string) {
	for {
		switch v := s.(type) {
		case countedStore:
			s = v.ObjectStore
		case *subStore:
			s, key = v.ObjectStore, v.pre+key
		default:
			return s, key
		}
	}
}

// copyObject copies srcKey of src (version ifVersion) to key of dst: in
// the store when it can, else through fsbox (a GET of that version and a
// PUT carrying its sha256).
func copyObject(ctx context.Context, dst ObjectStore, key string, src ObjectStore, srcKey, ifVersion string, max int64) (Object, error) {
	if err := takeRequest(ctx); err != nil {
		return Object{}, err
	}
	base, full := Unwrap(dst, key)
	from, fromKey := Unwrap(src, srcKey)
	if c, ok := base.(ObjectCopier); ok {
		ob, err := c.Copy(ctx, full, from, fromKey, ifVersion)
		if err != errCannotCopy {
			return ob, err
		}
	}
	body, _, err := from.Get(ctx, fromKey, 0, -1, ifVersion)
	if err != nil {
		return Object{}, err
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, satAdd(max, 1)))
	if err != nil {
		return Object{}, err
	}
	if int64(len(b)) > max {
		return Object{}, io.ErrShortBuffer
	}
	return base.Put(ctx, full, bytes.NewReader(b), int64(len(b)), sha256.Sum256(b), ObjectCond{})
}

// subStore is a store seen below a prefix (the journal's keys in the
// bucket that holds it).
type subStore struct {
	ObjectStore
	pre string // "" or ending in "/"
}

func (s *subStore) Head(ctx context.Context, key string) (Object, error) {
	ob, err := s.ObjectStore.Head(ctx, s.pre+key)
	ob.Key = strings.TrimPrefix(ob.Key, s.pre)
	return ob, err
}

func (s *subStore) List(ctx context.Context, prefix, delim, after string, max int) ([]Object, []string, error) {
	if after != "" {
		after = s.pre + after
	}
	obs, pres, err := s.ObjectStore.List(ctx, s.pre+prefix, delim, after, max)
	for i := range obs {
		obs[i].Key = strings.TrimPrefix(obs[i].Key, s.pre)
	}
	for i := range pres {
		pres[i] = strings.TrimPrefix(pres[i], s.pre)
	}
	return obs, pres, err
}

func (s *subStore) Get(ctx context.Context, key string, off, n int64, ifVersion string) (io.ReadCloser, Object, error) {
	r, ob, err := s.ObjectStore.Get(ctx, s.pre+key, off, n, ifVersion)
	ob.Key = strings.TrimPrefix(ob.Key, s.pre)
	return r, ob, err
}

func (s *subStore) Put(ctx context.Context, key string, body io.ReadSeeker, size int64, sum [32]byte, c ObjectCond) (Object, error) {
	ob, err := s.ObjectStore.Put(ctx, s.pre+key, body, size, sum, c)
	ob.Key = strings.TrimPrefix(ob.Key, s.pre)
	return ob, err
}

func (s *subStore) Delete(ctx context.Context, key, ifVersion string) error {
	return s.ObjectStore.Delete(ctx, s.pre+key, ifVersion)
}
