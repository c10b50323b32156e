package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// The object root: a root whose storage is an object store (an S3 bucket
// prefix; in tests, memObjects). It speaks to the store through objStore
// alone, the five requests an object store answers, so one implementation
// of the door's store interface serves every object store, and the
// in-memory one tests it.
//
// The model: keys ('/'-separated, no leading '/'), each an object with a
// size, a modification time and a version (an S3 ETag or version id). A
// directory is a key prefix: it exists while a key lies below it, or
// while its marker (the prefix itself, "dir/", an empty object) does. No
// links, no modes (files report 0644, directories 0755), no special
// files, no rename of directories. A pinned file is a version: every read
// of it asks for that version, and a change conditioned on it is a
// conditional request (IfVersion; IfAbsent for a name that was free),
// which the store refuses once another writer has been there: the
// re-check is the request itself, with no lock.

// object is what an object store says of one key.
type Object struct {
	Key     string
	Size    int64
	MTime   time.Time
	Version string // an ETag or version id: changes whenever the content does
	// SHA256 is the content's sha256 (hex) as the store verified it when
	// the object was written, "" where it keeps none.
	SHA256 string
}

// objCond is the condition of a change request: at most one is set.
type ObjectCond struct {
	IfAbsent  bool   // the key must not exist (S3 If-None-Match: *)
	IfVersion string // the key must hold this version (S3 If-Match)
}

// errPrecondition is a conditional request the store refused: another
// writer changed the key since it was pinned.
var ErrPrecondition = errors.New("the object changed since it was read (precondition failed)")

// objStore is an object store's five requests. Absent keys are
// fs.ErrNotExist.
type ObjectStore interface {
	Head(ctx context.Context, key string) (Object, error)
	// List lists the keys below prefix, in key order, after the key
	// after: with delim "/", the keys one level down and the prefixes
	// ("dir/") that group the deeper ones. At most max of both (0: no
	// limit).
	List(ctx context.Context, prefix, delim, after string, max int) ([]Object, []string, error)
	// Get reads n bytes of key from off (n < 0: to the end), of version
	// ifVersion when set (errPrecondition when it is no longer there).
	Get(ctx context.Context, key string, off, n int64, ifVersion string) (io.ReadCloser, Object, error)
	Put(ctx context.Context, key string, body io.ReadSeeker, size int64, sum [32]byte, c ObjectCond) (Object, error)
	Delete(ctx context.Context, key, ifVersion string) error
}

// objectRoot is the door's store over an object store.
type objectRoot struct {
	dir string // the root's absolute name, as the policy writes it
	obj ObjectStore
}

func newObjectRoot(dir string, obj ObjectStore) *objectRoot {
	return &objectRoot{dir: dir, obj: obj}
}

func (o *objectRoot) kind() rootKind { return kindObject }
func (o *objectRoot) exact() bool    { return true } // no links: every open is of exactly the name
func (o *objectRoot) close() error   { return nil }

// abs is the absolute name of a key.
func (o *objectRoot) abs(key string) string {
	if key == "." || key == "" {
		return o.dir
	}
	return strings.TrimSuffix(o.dir, "/") + "/" + key
}

func objPathErr(op, key string, err error) error {
	return &fs.PathError{Op: op, Path: key, Err: err}
}

// fileFacts are the facts of an object.
func fileFacts(ob Object) facts {
	return facts{Info: Info{Type: "file", Size: ob.Size, Mode: 0o644, ModTime: ob.MTime.UTC(), ATime: ob.MTime.UTC(),
		Nlink: 1, ver: ob.Version, object: true, storeSum: ob.SHA256}}
}

// dirFacts are the facts of a prefix.
func dirFacts() facts {
	return facts{Info: Info{Type: "dir", Mode: fs.ModeDir | 0o755, Nlink: 1, object: true}}
}

// stat describes a key: an object, else a prefix (a directory), else
// not found. A name below an object is not found (its parent is no
// directory), as on a file system.
func (o *objectRoot) stat(ctx context.Context, name string) (facts, error) {
	if name == "." || name == "" {
		return dirFacts(), nil
	}
	ob, err := o.obj.Head(ctx, name)
	switch {
	case err == nil:
		return fileFacts(ob), nil
	case !errors.Is(err, fs.ErrNotExist):
		return facts{}, err
	case path.Base(name) == journalMarker:
		// The journal's marker is a file or nothing: the door asks
		// for it in every directory it opens, so no listing is spent
		// on asking whether it is a directory.
		return facts{}, objPathErr("stat", name, fs.ErrNotExist)
	}
	objs, prefixes, err := o.obj.List(ctx, name+"/", "/", "", 1)
	if err != nil {
		return facts{}, err
	}
	// A directory is a key below name/ (a store's answer outside that
	// prefix is not believed).
	for _, ob := range objs {
		if strings.HasPrefix(ob.Key, name+"/") {
			return dirFacts(), nil
		}
	}
	for _, p := range prefixes {
		if strings.HasPrefix(p, name+"/") {
			return dirFacts(), nil
		}
	}
	return facts{}, objPathErr("stat", name, fs.ErrNotExist)
}

// openFile pins what name is: an object's version (a directory is
// opened as one, with nothing to read, and refused by the door as
// posix's is).
func (o *objectRoot) openFile(ctx context.Context, name string, f *File) (facts, error) {
	if name == "." || name == "" {
		f.obj = &objFile{root: o, ctx: ctx, key: name, dir: true}
		return dirFacts(), nil
	}
	// One request opens a file: a GET of its first openWindow bytes,
	// which says its version, size and time as a HEAD would, and holds
	// what most reads want; the rest is asked for by that version.
	body, ob, err := o.obj.Get(ctx, name, 0, openWindow, "")
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return facts{}, err
		}
		fc, err := o.stat(ctx, name) // a directory, or nothing
		if err != nil {
			return facts{}, err
		}
		f.obj = &objFile{root: o, ctx: ctx, key: name, dir: true}
		return fc, nil
	}
	head, err := io.ReadAll(io.LimitReader(body, openWindow))
	body.Close()
	if err != nil {
		return facts{}, readErr(name, err)
	}
	f.obj = &objFile{root: o, ctx: ctx, key: name, ver: ob.Version, size: ob.Size, mtime: ob.MTime, head: head}
	return fileFacts(ob), nil
}

// openWindow is how much of a file its open reads: a file this small is
// read with the one request that opens it.
const openWindow = 64 << 10

func (o *objectRoot) openDir(ctx context.Context, name string) (dirHandle, facts, error) {
	fc, err := o.stat(ctx, name)
	if err != nil {
		return nil, facts{}, err
	}
	if !fc.Mode.IsDir() {
		return nil, facts{}, objPathErr("open", name, syscall.ENOTDIR)
	}
	return o.dirAt(ctx, name), fc, nil
}

// dirAt is the prefix name, which a stat has just found to be a
// directory, opened without asking the store again.
func (o *objectRoot) dirAt(ctx context.Context, name string) *objDir {
	key := name
	if key == "" {
		key = "."
	}
	return &objDir{root: o, ctx: ctx, key: key}
}

// objDir is a prefix, opened: its entries are listed and opened by key.
type objDir struct {
	root *objectRoot
	ctx  context.Context
	key  string // "." for the root
	// listed are the entries the last list found, by name: an object's
	// facts (its version among them: a file opened from here is pinned
	// to the version listed) or a prefix's (a zero Object). A walk opens
	// and describes what it listed without a request per entry.
	mu     sync.Mutex
	listed map[string]Object
	// tree, when set, is a flat listing of a whole subtree this
	// directory lies in (listTree): its listing comes from there.
	tree *objTree
}

// fromList is what the last listing said of the entry name.
func (d *objDir) fromList(name string) (Object, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ob, ok := d.listed[name]
	return ob, ok
}

// child is the key of the entry name (a relative path below d whose
// every component is a name: never "", "." or "..", which a key may
// spell but no path the door checked does; such a name gives a key that
// is not there).
func (d *objDir) child(name string) string {
	for _, c := range strings.Split(name, "/") {
		if !validName(c) {
			return "\x00" // no key: not found
		}
	}
	if d.key == "." {
		return name
	}
	return d.key + "/" + name
}

func (d *objDir) prefix() string {
	if d.key == "." {
		return ""
	}
	return d.key + "/"
}

func (d *objDir) where(string) (string, error) { return d.root.abs(d.key), nil }
func (d *objDir) birth() int64                 { return 0 }
func (d *objDir) close() error                 { return nil }

func (d *objDir) list(_ *listScratch, out []dirent) ([]dirent, error) {
	out = out[:0]
	listed := map[string]Object{}
	defer func() {
		d.mu.Lock()
		d.listed = listed
		d.mu.Unlock()
	}()
	if d.tree != nil {
		if ents, ok := d.tree.dirs[d.key]; ok {
			for _, e := range ents {
				out = append(out, e.dirent)
				listed[e.name] = e.ob
			}
			return out, nil
		}
	}
	pre, after := d.prefix(), ""
	for {
		objs, prefixes, err := d.root.obj.List(d.ctx, pre, "/", after, 1000)
		if err != nil {
			return nil, err
		}
		// A key may spell what no path names ("a//b", "a/../b"): such an
		// entry is not listed (the directory's own marker, "", neither).
		// A store that answers keys outside the prefix, or at or
		// before after, is not believed: such keys are dropped, and a
		// page that brings nothing new ends the listing.
		was := after
		for _, ob := range objs {
			if !strings.HasPrefix(ob.Key, pre) || ob.Key <= was {
				continue
			}
			if name := ob.Key[len(pre):]; validName(name) {
				out = append(out, dirent{name: name})
				listed[name] = ob
			}
			after = max(after, ob.Key)
		}
		for _, p := range prefixes {
			if !strings.HasPrefix(p, pre) || p <= was {
				continue
			}
			if name := strings.TrimSuffix(p[len(pre):], "/"); validName(name) {
				if _, dup := listed[name]; dup {
					// An object a beside the keys a/…: one entry (the
					// object's), as a name is one thing; the keys below
					// are reached by their paths.
					after = max(after, p)
					continue
				}
				out = append(out, dirent{name: name, typ: fs.ModeDir})
				listed[name] = Object{}
			}
			after = max(after, p)
		}
		if len(objs)+len(prefixes) < 1000 || after == was {
			return out, nil
		}
	}
}

func (d *objDir) lstat(name string) (facts, error) {
	if ob, ok := d.fromList(name); ok {
		if ob.Version == "" && ob.Key == "" {
			return dirFacts(), nil
		}
		return fileFacts(ob), nil
	}
	return d.root.stat(d.ctx, d.child(name))
}

func (d *objDir) readlink(name string) (string, error) {
	return "", objPathErr("readlink", d.child(name), fs.ErrInvalid) // no links
}

func (d *objDir) openChild(name string, f *File) (facts, error) {
	if ob, ok := d.fromList(name); ok && ob.Key != "" {
		// The version listed: every read asks for it, so a file
		// rewritten since the listing is a conflict, never a mix.
		f.obj = &objFile{root: d.root, ctx: d.ctx, key: d.child(name), ver: ob.Version, size: ob.Size, mtime: ob.MTime}
		return fileFacts(ob), nil
	}
	return d.root.openFile(d.ctx, d.child(name), f)
}

func (d *objDir) openChildDir(name string) (dirHandle, facts, error) {
	if ob, ok := d.fromList(name); ok && ob.Key == "" {
		// A prefix the listing showed: a directory, no request needed
		// to say so (and its own listing comes from the tree, when d
		// has one).
		sub := &objDir{root: d.root, ctx: d.ctx, key: d.child(name), tree: d.tree}
		return sub, dirFacts(), nil
	}
	return d.root.openDir(d.ctx, d.child(name))
}

func (d *objDir) openFile(name string, f *File) (facts, error) { return d.openChild(name, f) }

func (d *objDir) openDir(name string) (dirHandle, facts, error) { return d.openChildDir(name) }

// objFile is an object's version, pinned: every read asks for it, and
// fails (conflict) once another writer has replaced it.
type objFile struct {
	root *objectRoot
	ctx  context.Context
	key  string
	// ver is the version every read asks for; "" where the store gave
	// none (versitygw for a file it did not write itself): such an
	// object is read unconditioned, as the store holds it at each read.
	ver  string
	dir  bool // a directory opened as a file: nothing to read
	size int64
	sum  string // the content's sha256 as the store verified it, "" where it keeps none
	// head is the start of the content, read with the open (at most
	// openWindow bytes; all of a small file).
	head  []byte
	mtime time.Time
	off   int64         // Read's offset
	body  io.ReadCloser // Read's open body, from off
}

func (f *objFile) where(string) (string, error) { return f.root.abs(f.key), nil }
func (f *objFile) birth() int64                 { return 0 }

func (f *objFile) Read(p []byte) (int, error) {
	if f.dir {
		return 0, objPathErr("read", f.key, syscall.EISDIR)
	}
	if f.body == nil && f.off < int64(len(f.head)) {
		n := copy(p, f.head[f.off:])
		f.off += int64(n)
		return n, nil
	}
	if f.body == nil {
		if f.off >= f.size {
			return 0, io.EOF
		}
		body, _, err := f.root.obj.Get(f.ctx, f.key, f.off, -1, f.ver)
		if err != nil {
			return 0, readErr(f.key, err)
		}
		// Never more than the object holds, whatever the store sends.
		f.body = readCloser{io.LimitReader(body, f.size-f.off), body}
	}
	n, err := f.body.Read(p)
	f.off += int64(n)
	return n, err
}

func (f *objFile) ReadAt(p []byte, off int64) (int, error) {
	if f.dir {
		return 0, objPathErr("read", f.key, syscall.EISDIR)
	}
	if off >= f.size {
		return 0, io.EOF
	}
	if held := int64(len(f.head)); off+int64(len(p)) <= held || held == f.size {
		n := copy(p, f.head[off:]) // what the open read: the same version
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
	body, _, err := f.root.obj.Get(f.ctx, f.key, off, int64(len(p)), f.ver)
	if err != nil {
		return 0, readErr(f.key, err)
	}
	defer body.Close()
	n, err := io.ReadFull(body, p)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}

// readErr is a read of a version another writer replaced: a conflict,
// as a posix file rewritten under a search is.
func readErr(key string, err error) error {
	if errors.Is(err, ErrPrecondition) || errors.Is(err, fs.ErrNotExist) {
		return fserr.Errorf(fserr.CodeConflict, key, "%s changed while it was read: read it again", key)
	}
	return err
}

// stamp is the version pinned: every read of f asks the store for it
// (If-Match), so a rewrite shows as a conflict on the read itself, and
// no request is needed to tell.
func (f *objFile) stamp() (fileStamp, error) {
	return fileStamp{size: f.size, mtime: f.mtime.UnixNano(), ver: f.ver}, nil
}

func (f *objFile) close() error {
	if f.body != nil {
		f.body.Close()
		f.body = nil
	}
	return nil
}

// String names the root for messages.
func (o *objectRoot) String() string { return fmt.Sprintf("%s root %s", o.kind(), o.dir) }

// cleanRel is p when it is a clean relative path (no empty, "." or ".."
// component), else "": the keys an object root reaches are exactly the
// paths the door checked.
func cleanRel(p string) string {
	parts := strings.Split(p, "/")
	if slices.Contains(parts, "") || slices.Contains(parts, ".") || slices.Contains(parts, "..") {
		return ""
	}
	return p
}

// readCloser reads from Reader and closes Closer.
type readCloser struct {
	io.Reader
	io.Closer
}

// objTree is a flat listing of a subtree: every key below a prefix, in a
// few requests (a thousand keys each) instead of one or more per
// directory. A walk asks for it at its start (listTree); the directories
// below then list from it.
type objTree struct {
	dirs map[string][]treeEntry // by directory key ("." for the root)
}

type treeEntry struct {
	dirent
	ob Object // a file's facts; zero for a directory
}

// maxTreeKeys is the most keys a flat listing holds: a larger subtree is
// listed a directory at a time, as it is walked (the pages fetched are
// then the price of having tried: at most maxTreeKeys/1000 requests).
const maxTreeKeys = 20000

// listTree lists the whole subtree below d flat (SPEC §4: a walk is a flat
// LIST of the prefix), for the directories the walk will open below it.
// It is a hint: when the subtree holds more than maxTreeKeys keys, or a
// request fails, nothing changes and the walk lists each directory.
func (d *objDir) listTree() {
	pre, after := d.prefix(), ""
	t := &objTree{dirs: map[string][]treeEntry{d.key: nil}}
	seen := map[string]bool{} // directories already entered in their parent
	n := 0
	for {
		objs, _, err := d.root.obj.List(d.ctx, pre, "", after, 1000)
		if err != nil {
			return
		}
		was := after
		for _, ob := range objs {
			if !strings.HasPrefix(ob.Key, pre) || ob.Key <= was {
				continue
			}
			after = max(after, ob.Key)
			t.add(d.key, ob.Key[len(pre):], ob, seen)
		}
		if n += len(objs); n > maxTreeKeys {
			return
		}
		if len(objs) < 1000 || after == was {
			break
		}
	}
	d.mu.Lock()
	d.tree = t
	d.mu.Unlock()
}

// add enters the key rel (below the tree's root, top) and every
// directory on its way. A key that spells what no path names ("a//b",
// "./x") is not entered, as list drops it; a marker ("dir/") enters its
// directory only.
func (t *objTree) add(top, rel string, ob Object, seen map[string]bool) {
	marker := strings.HasSuffix(rel, "/")
	parts := strings.Split(strings.TrimSuffix(rel, "/"), "/")
	for _, c := range parts {
		if !validName(c) {
			return
		}
	}
	dir := top
	for i, c := range parts {
		last := i == len(parts)-1
		sub := c
		if dir != "." {
			sub = dir + "/" + c
		}
		if last && !marker {
			if !seen[sub] { // a name is one thing: the first listed (keys come in order)
				seen[sub] = true
				t.dirs[dir] = append(t.dirs[dir], treeEntry{dirent: dirent{name: c}, ob: ob})
			}
			return
		}
		if _, isDir := t.dirs[sub]; seen[sub] && !isDir {
			return // below an object of the same name: not walked
		}
		if !seen[sub] {
			seen[sub] = true
			t.dirs[dir] = append(t.dirs[dir], treeEntry{dirent: dirent{name: c, typ: fs.ModeDir}})
			if _, ok := t.dirs[sub]; !ok {
				t.dirs[sub] = nil
			}
		}
		dir = sub
	}
}
