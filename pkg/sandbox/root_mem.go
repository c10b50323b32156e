package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// memObjects is an object store in memory, modelled on S3: keys and
// their objects, each with a version that changes with every write, and
// the conditional requests a change is made of (Put IfAbsent or
// IfVersion, Delete IfVersion). It is the fake the door's tests run an
// object root on (root_object.go), and the one the object-store roots'
// own unit tests reuse: newMemObjects takes its content as a map, and
// SetBeforeChange lets a test be the concurrent writer, between the
// moment a change pinned what it changes and the request that commits it.
//
// A key ending in "/" is a directory marker (an empty object, as S3's
// console makes): the directory exists while it is there, as it does
// while any key lies below it. A key may not be both an object and a
// directory ("a" beside "a/x"): the store refuses what would make one.
type memObjects struct {
	mu   sync.Mutex
	objs map[string]memObject
	seq  uint64
	now  func() time.Time
	// before, when set, runs at the start of each Put and Delete,
	// outside the lock (see SetBeforeChange).
	before func(op, key string)
	// Requests counts the requests made, by name (Head, List, Get, Put,
	// Delete): what an object root costs a call.
	requests map[string]int
}

type memObject struct {
	data  []byte
	ver   string
	mtime time.Time
}

// memEpoch is the fixed clock of a memObjects: each write is one second
// after the one before, so times are deterministic.
var memEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// newMemObjects returns a store holding files: key -> content. A key
// ending in "/" makes an empty directory. It panics on a key that is not
// a clean relative path, or one that is both a file and a directory.
func newMemObjects(files map[string][]byte) *memObjects {
	m := &memObjects{objs: map[string]memObject{}, requests: map[string]int{}}
	m.now = func() time.Time { return memEpoch.Add(time.Duration(m.seq) * time.Second) }
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := m.check(k); err != nil {
			panic(err)
		}
		m.store(k, bytes.Clone(files[k]))
	}
	return m
}

// SetBeforeChange makes fn run at the start of every Put and Delete
// (op is "put" or "delete"), before the store looks at the request's
// condition: a test writes there as another process would, between the
// change's pin and its commit, and the conditional request must then
// fail. fn may call the store; nil removes it.
func (m *memObjects) SetBeforeChange(fn func(op, key string)) {
	m.mu.Lock()
	m.before = fn
	m.mu.Unlock()
}

// Files is the store's content: key -> bytes (directory markers as
// empty values).
func (m *memObjects) Files() map[string][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string][]byte, len(m.objs))
	for k, o := range m.objs {
		out[k] = bytes.Clone(o.data)
	}
	return out
}

// check refuses a key that is not a clean relative path, or that would
// be a file and a directory at once.
func (m *memObjects) check(key string) error {
	name := strings.TrimSuffix(key, "/")
	if name == "" || strings.HasPrefix(name, "/") || cleanRel(name) != name {
		return fmt.Errorf("memObjects: key %q is not a clean relative path", key)
	}
	if _, ok := m.objs[name]; ok && strings.HasSuffix(key, "/") {
		return fmt.Errorf("memObjects: %q would be a file and a directory", name)
	}
	if !strings.HasSuffix(key, "/") {
		for k := range m.objs {
			if strings.HasPrefix(k, key+"/") {
				return fmt.Errorf("memObjects: %q would be a file and a directory", key)
			}
		}
	}
	for i := strings.IndexByte(name, '/'); i >= 0; i = next(name, i) {
		if _, ok := m.objs[name[:i]]; ok {
			return fmt.Errorf("memObjects: %q lies below the file %q", key, name[:i])
		}
	}
	return nil
}

func next(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

func (m *memObjects) store(key string, data []byte) Object {
	m.seq++
	o := memObject{data: data, ver: "v" + strconv.FormatUint(m.seq, 10), mtime: m.now()}
	m.objs[key] = o
	return o.Object(key)
}

func (o memObject) Object(key string) Object {
	return Object{Key: key, Size: int64(len(o.data)), MTime: o.mtime, Version: o.ver}
}

func (m *memObjects) count(req string) { m.requests[req]++ }

func notExist(key string) error { return &fs.PathError{Op: "head", Path: key, Err: fs.ErrNotExist} }

func (m *memObjects) Head(ctx context.Context, key string) (Object, error) {
	if err := ctx.Err(); err != nil {
		return Object{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.count("Head")
	o, ok := m.objs[key]
	if !ok {
		return Object{}, notExist(key)
	}
	return o.Object(key), nil
}

func (m *memObjects) List(ctx context.Context, prefix, delim, after string, limit int) ([]Object, []string, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.count("List")
	keys := make([]string, 0, len(m.objs))
	for k := range m.objs {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var objs []Object
	var prefixes []string
	for _, k := range keys {
		if limit > 0 && len(objs)+len(prefixes) >= limit {
			break
		}
		rest := k[len(prefix):]
		if i := strings.Index(rest, delim); delim != "" && i >= 0 {
			// Grouped under the common prefix (S3's CommonPrefixes),
			// once, and only after after.
			if p := prefix + rest[:i+len(delim)]; p > after && (len(prefixes) == 0 || prefixes[len(prefixes)-1] != p) {
				prefixes = append(prefixes, p)
			}
			continue
		}
		if k > after {
			objs = append(objs, m.objs[k].Object(k))
		}
	}
	return objs, prefixes, nil
}

func (m *memObjects) Get(ctx context.Context, key string, off, n int64, ifVersion string) (io.ReadCloser, Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, Object{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.count("Get")
	o, ok := m.objs[key]
	switch {
	case !ok:
		return nil, Object{}, notExist(key)
	case ifVersion != "" && o.ver != ifVersion:
		return nil, Object{}, ErrPrecondition
	}
	size := int64(len(o.data))
	if off < 0 { // a suffix: the last -off bytes
		off = max(0, size+off)
	}
	off = min(off, size)
	end := size
	if n >= 0 {
		end = min(size, off+n)
	}
	return io.NopCloser(bytes.NewReader(o.data[off:end])), o.Object(key), nil
}

func (m *memObjects) Put(ctx context.Context, key string, body io.ReadSeeker, size int64, sum [32]byte, c ObjectCond) (Object, error) {
	m.beforeChange("put", key)
	if err := ctx.Err(); err != nil {
		return Object{}, err
	}
	data, err := io.ReadAll(io.LimitReader(body, size+1))
	if err != nil {
		return Object{}, err
	}
	if int64(len(data)) != size {
		return Object{}, fmt.Errorf("memObjects: put %s: body is %d bytes, not %d", key, len(data), size)
	}
	if sha256.Sum256(data) != sum {
		return Object{}, fmt.Errorf("memObjects: put %s: the body's sha256 is not the one sent", key)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.count("Put")
	cur, exists := m.objs[key]
	switch {
	case c.IfAbsent && exists, c.IfVersion != "" && (!exists || cur.ver != c.IfVersion):
		return Object{}, ErrPrecondition
	}
	if err := m.check(key); err != nil {
		return Object{}, &fs.PathError{Op: "put", Path: key, Err: fs.ErrExist}
	}
	return m.store(key, data), nil
}

func (m *memObjects) Delete(ctx context.Context, key, ifVersion string) error {
	m.beforeChange("delete", key)
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.count("Delete")
	cur, exists := m.objs[key]
	switch {
	case ifVersion != "" && (!exists || cur.ver != ifVersion):
		return ErrPrecondition
	case !exists:
		return nil // as S3: deleting what is not there succeeds
	}
	delete(m.objs, key)
	return nil
}

func (m *memObjects) beforeChange(op, key string) {
	m.mu.Lock()
	fn := m.before
	m.mu.Unlock()
	if fn != nil {
		fn(op, key)
	}
}

// Copy copies within this store only (another is errCannotCopy).
func (m *memObjects) Copy(ctx context.Context, key string, src ObjectStore, srcKey, ifVersion string) (Object, error) {
	if src != ObjectStore(m) {
		return Object{}, errCannotCopy
	}
	m.beforeChange("copy", key)
	if err := ctx.Err(); err != nil {
		return Object{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.count("Copy")
	o, ok := m.objs[srcKey]
	switch {
	case !ok:
		return Object{}, notExist(srcKey)
	case ifVersion != "" && o.ver != ifVersion:
		return Object{}, ErrPrecondition
	}
	if err := m.check(key); err != nil {
		return Object{}, &fs.PathError{Op: "copy", Path: key, Err: fs.ErrExist}
	}
	return m.store(key, bytes.Clone(o.data)), nil
}
