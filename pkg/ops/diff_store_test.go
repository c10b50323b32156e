//go:build unix

package ops

// The object store of the differential property (diff_property_test.go):
// one bucket in memory, modelled on S3 as fsbox's own client sees it
// (internal/s3store), opened for s3://bkt/PREFIX roots through
// sandbox.UseObjectStores, the one door an s3:// root has in a process.
//
// It is written here, not reused from package sandbox: memObjects is
// unexported, and MemStore (export_mem_test.go) is visible to package
// sandbox's tests only. It is also on purpose a different fake: by
// default it behaves as AWS S3 does where memObjects is stricter, a key
// may lie below another key ("a" beside "a/x"), so what keeps the tree of
// a bucket a tree is the door's own checks, not the fake's refusal. With
// fsLike it refuses such keys as versitygw over a file system does
// (s3store maps ObjectParentIsFile and ExistingObjectIsDirectory to
// fs.ErrExist, as memObjects answers).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

type dfObject struct {
	data  []byte
	ver   string
	mtime time.Time
	sum   string
}

// dfBucket is one bucket: full keys (with their root's prefix).
type dfBucket struct {
	mu     sync.Mutex
	objs   map[string]dfObject
	seq    uint64
	fsLike bool
}

var dfEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newDFBucket(fsLike bool) *dfBucket {
	return &dfBucket{objs: map[string]dfObject{}, fsLike: fsLike}
}

// put stores data at key unconditionally (the test's own setup).
func (b *dfBucket) put(key string, data []byte) dfObject {
	b.seq++
	sum := sha256.Sum256(data)
	o := dfObject{data: bytes.Clone(data), ver: fmt.Sprintf("\"e%d\"", b.seq),
		mtime: dfEpoch.Add(time.Duration(b.seq) * time.Second), sum: hex.EncodeToString(sum[:])}
	b.objs[key] = o
	return o
}

// files is every key below pre (pre stripped) and its content.
func (b *dfBucket) files(pre string) map[string][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string][]byte{}
	for k, o := range b.objs {
		if rel, ok := strings.CutPrefix(k, pre); ok {
			out[rel] = bytes.Clone(o.data)
		}
	}
	return out
}

// fsRefuses: with fsLike, a key below an object, or an object where keys
// lie below.
func (b *dfBucket) fsRefuses(key string) bool {
	if !b.fsLike {
		return false
	}
	name := strings.TrimSuffix(key, "/")
	for i := strings.IndexByte(name, '/'); i >= 0; {
		if _, ok := b.objs[name[:i]]; ok {
			return true
		}
		j := strings.IndexByte(name[i+1:], '/')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	if strings.HasSuffix(key, "/") {
		_, ok := b.objs[name]
		return ok
	}
	for k := range b.objs {
		if strings.HasPrefix(k, key+"/") {
			return true
		}
	}
	return false
}

// dfView is the bucket below a root's prefix, as s3store scopes it.
type dfView struct {
	b   *dfBucket
	pre string // "" or "PREFIX/"
}

func (o dfObject) object(key string) sandbox.Object {
	return sandbox.Object{Key: key, Size: int64(len(o.data)), MTime: o.mtime, Version: o.ver, SHA256: o.sum}
}

func dfMissing(op, key string) error { return &fs.PathError{Op: op, Path: key, Err: fs.ErrNotExist} }
func dfRefused(op, key string) error {
	return &fs.PathError{Op: op, Path: key, Err: sandbox.ErrPrecondition}
}

func (v *dfView) Head(ctx context.Context, key string) (sandbox.Object, error) {
	if err := ctx.Err(); err != nil {
		return sandbox.Object{}, err
	}
	v.b.mu.Lock()
	defer v.b.mu.Unlock()
	o, ok := v.b.objs[v.pre+key]
	if !ok {
		return sandbox.Object{}, dfMissing("head", key)
	}
	return o.object(key), nil
}

func (v *dfView) List(ctx context.Context, prefix, delim, after string, max int) ([]sandbox.Object, []string, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	v.b.mu.Lock()
	defer v.b.mu.Unlock()
	full := v.pre + prefix
	var keys []string
	for k := range v.b.objs {
		if strings.HasPrefix(k, full) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if after != "" {
		after = v.pre + after
	}
	var objs []sandbox.Object
	var prefixes []string
	for _, k := range keys {
		if max > 0 && len(objs)+len(prefixes) >= max {
			break
		}
		rest := k[len(full):]
		if i := strings.Index(rest, delim); delim != "" && i >= 0 {
			if p := full + rest[:i+len(delim)]; p > after && (len(prefixes) == 0 || prefixes[len(prefixes)-1] != p[len(v.pre):]) {
				prefixes = append(prefixes, p[len(v.pre):])
			}
			continue
		}
		if k > after {
			objs = append(objs, v.b.objs[k].object(k[len(v.pre):]))
		}
	}
	return objs, prefixes, nil
}

func (v *dfView) Get(ctx context.Context, key string, off, n int64, ifVersion string) (io.ReadCloser, sandbox.Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, sandbox.Object{}, err
	}
	v.b.mu.Lock()
	defer v.b.mu.Unlock()
	o, ok := v.b.objs[v.pre+key]
	switch {
	case !ok && ifVersion != "":
		return nil, sandbox.Object{}, dfRefused("get", key) // a conditional 404
	case !ok:
		return nil, sandbox.Object{}, dfMissing("get", key)
	case ifVersion != "" && o.ver != ifVersion:
		return nil, sandbox.Object{}, dfRefused("get", key)
	}
	size := int64(len(o.data))
	if off < 0 {
		off = max(0, size+off)
	}
	off = min(off, size)
	end := size
	if n >= 0 {
		end = min(size, off+n)
	}
	return io.NopCloser(bytes.NewReader(o.data[off:end])), o.object(key), nil
}

func (v *dfView) Put(ctx context.Context, key string, body io.ReadSeeker, size int64, sum [32]byte, c sandbox.ObjectCond) (sandbox.Object, error) {
	if err := ctx.Err(); err != nil {
		return sandbox.Object{}, err
	}
	data, err := io.ReadAll(io.LimitReader(body, size+1))
	if err != nil {
		return sandbox.Object{}, err
	}
	if int64(len(data)) != size || sha256.Sum256(data) != sum {
		return sandbox.Object{}, fmt.Errorf("dfView: put %s: the body is not the one announced", key)
	}
	v.b.mu.Lock()
	defer v.b.mu.Unlock()
	cur, exists := v.b.objs[v.pre+key]
	switch {
	case c.IfAbsent && exists, c.IfVersion != "" && (!exists || cur.ver != c.IfVersion):
		return sandbox.Object{}, dfRefused("put", key)
	case v.b.fsRefuses(v.pre + key):
		return sandbox.Object{}, &fs.PathError{Op: "put", Path: key, Err: fs.ErrExist}
	}
	return v.b.put(v.pre+key, data).object(key), nil
}

func (v *dfView) Delete(ctx context.Context, key, ifVersion string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	v.b.mu.Lock()
	defer v.b.mu.Unlock()
	cur, exists := v.b.objs[v.pre+key]
	switch {
	case ifVersion != "" && (!exists || cur.ver != ifVersion):
		return dfRefused("delete", key)
	case !exists:
		return nil
	}
	delete(v.b.objs, v.pre+key)
	return nil
}

// Copy is S3's server-side copy, conditioned on the source's version,
// within one bucket.
func (v *dfView) Copy(ctx context.Context, key string, src sandbox.ObjectStore, srcKey, ifVersion string) (sandbox.Object, error) {
	from, ok := src.(*dfView)
	if !ok || from.b != v.b {
		return sandbox.Object{}, sandbox.ErrCannotCopy
	}
	if err := ctx.Err(); err != nil {
		return sandbox.Object{}, err
	}
	v.b.mu.Lock()
	defer v.b.mu.Unlock()
	o, ok := v.b.objs[from.pre+srcKey]
	switch {
	case !ok && ifVersion != "":
		return sandbox.Object{}, dfRefused("copy", srcKey)
	case !ok:
		return sandbox.Object{}, dfMissing("copy", srcKey)
	case ifVersion != "" && o.ver != ifVersion:
		return sandbox.Object{}, dfRefused("copy", srcKey)
	case v.b.fsRefuses(v.pre + key):
		return sandbox.Object{}, &fs.PathError{Op: "copy", Path: key, Err: fs.ErrExist}
	}
	return v.b.put(v.pre+key, o.data).object(key), nil
}

// The buckets s3:// roots open over: set by each run, read by the one
// opener this test binary registers.
var (
	dfOpenerOnce sync.Once
	dfBucketsMu  sync.Mutex
	dfBuckets    = map[string]*dfBucket{}
)

// useDFBucket makes s3://name/... open over b (registering the opener
// on first use).
func useDFBucket(name string, b *dfBucket) {
	dfOpenerOnce.Do(func() {
		sandbox.UseObjectStores(func(_ context.Context, _ policy.Store, u policy.ObjectURL) (sandbox.ObjectStore, error) {
			dfBucketsMu.Lock()
			b := dfBuckets[u.Bucket]
			dfBucketsMu.Unlock()
			if b == nil {
				return nil, fserr.Errorf(fserr.CodeIO, u.String(), "no such bucket in this test")
			}
			pre := ""
			if u.Prefix != "" {
				pre = u.Prefix + "/"
			}
			return &dfView{b: b, pre: pre}, nil
		})
	})
	dfBucketsMu.Lock()
	dfBuckets[name] = b
	dfBucketsMu.Unlock()
}
