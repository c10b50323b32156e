//go:build unix

package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fsbox/fsbox/pkg/policy"
)

// The door's tables run on each kind of root (forEachRoot): a posix tree
// (newTree) and the same files as object roots over memObjects
// (newMemTree), where the rows that need a symlink, a FIFO, a hard link
// or a mode are marked posixOnly and left out.

// memTreeFiles are newTree's workdir files, without its links and FIFO.
var memTreeFiles = map[string]string{
	"file.txt":     "hello",
	"a/inner.txt":  "inner",
	"a/readme.md":  "md",
	"a/cert.PEM":   "pem",
	"a/b/deep.txt": "deep",
	"secrets/key":  "k",
	".env":         "E",
	"upper/.ENV":   "E2",
	"x.lock":       "l",
	".git/config":  "[core]",
	"..test":       "dots",
}

func bytesOf(files map[string]string) map[string][]byte {
	out := make(map[string][]byte, len(files))
	for k, v := range files {
		out[k] = []byte(v)
	}
	return out
}

// newMemTree is newTree's layout with the workdir and the read root as
// object roots: their paths lie below a real temporary base (the home,
// where the outside and the sibling directories are real), and nothing
// is on disk at them.
func newMemTree(t testing.TB) (*tree, map[string]ObjectStore) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr := &tree{base: base, work: filepath.Join(base, "work"), evil: filepath.Join(base, "work_evil"),
		outside: filepath.Join(base, "outside"), ro: filepath.Join(base, "ro")}
	mustWrite(t, filepath.Join(tr.evil, "evil.txt"), "EVIL")
	mustWrite(t, filepath.Join(tr.outside, "secret.txt"), outsideSecret)
	mustWrite(t, filepath.Join(tr.outside, "sub", "more.txt"), outsideSecret)
	objs := map[string]ObjectStore{
		tr.work: newMemObjects(bytesOf(memTreeFiles)),
		tr.ro:   newMemObjects(bytesOf(map[string]string{"doc.txt": "doc"})),
	}
	return tr, objs
}

// newMemSandbox is newSandbox over newMemTree's stores.
func newMemSandbox(t testing.TB, tr *tree, objs map[string]ObjectStore, mod func(*policy.Policy)) *Sandbox {
	t.Helper()
	p := basePolicy(tr)
	if mod != nil {
		mod(p)
	}
	s, err := newSandboxOver(p, tr.base, objs)
	if err != nil {
		t.Fatalf("newSandboxOver: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := os.Stat(tr.work); err == nil {
		t.Fatalf("the object root's path %s exists on disk", tr.work)
	}
	return s
}

// forEachRoot runs fn on newTree's sandbox (with mod) and on
// newMemTree's, as subtests named by the kind of root.
func forEachRoot(t *testing.T, mod func(*policy.Policy), fn func(t *testing.T, d *doorRoot)) {
	for _, kind := range []string{"posix", "object"} {
		t.Run(kind, func(t *testing.T) { fn(t, newDoorRoot(t, kind, mod)) })
	}
}

// newDoorRoot is newTree's sandbox (kind "posix") or newMemTree's
// ("object"), with mod.
func newDoorRoot(t testing.TB, kind string, mod func(*policy.Policy)) *doorRoot {
	if kind == "posix" {
		tr := newTree(t, t.TempDir())
		return &doorRoot{t: t, tr: tr, s: newSandbox(t, tr, mod)}
	}
	tr, objs := newMemTree(t)
	return &doorRoot{t: t, tr: tr, objs: objs, s: newMemSandbox(t, tr, objs, mod)}
}

// doorRoot is one kind of root a door table runs on.
type doorRoot struct {
	t    testing.TB
	tr   *tree
	s    *Sandbox               // over tr, with forEachRoot's mod
	objs map[string]ObjectStore // nil: a posix tree
}

func (d *doorRoot) posix() bool { return d.objs == nil }

// sandbox is another sandbox over the same tree (or stores).
func (d *doorRoot) sandbox(mod func(*policy.Policy)) *Sandbox {
	if d.posix() {
		return newSandbox(d.t, d.tr, mod)
	}
	return newMemSandbox(d.t, d.tr, d.objs, mod)
}

// put writes rel (below the workdir) with content, as another process
// would: on disk, or straight into the store.
func (d *doorRoot) put(rel, content string) {
	d.t.Helper()
	if d.posix() {
		mustWrite(d.t, filepath.Join(d.tr.work, rel), content)
		return
	}
	d.store().store(rel, []byte(content))
}

// store is the workdir's store (an object root's).
func (d *doorRoot) store() *memObjects { return d.objs[d.tr.work].(*memObjects) }

// get reads rel below the workdir as another process would ("", false:
// absent).
func (d *doorRoot) get(rel string) (string, bool) {
	if d.posix() {
		b, err := os.ReadFile(filepath.Join(d.tr.work, rel))
		return string(b), err == nil
	}
	b, ok := d.store().Files()[rel]
	return string(b), ok
}
