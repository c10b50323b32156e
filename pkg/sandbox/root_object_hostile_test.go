//go:build unix

package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// TestObjectChangesStayInTheirStore: an act runs on the store its target
// lies in. A move between two object roots is refused (its requests
// would all go to the source's store, writing a key no check saw); a
// mkdir in a posix write root lands on disk, not in the workdir's store;
// a change of several steps (undo's) in an object root acts on its store.
func TestObjectChangesStayInTheirStore(t *testing.T) {
	tr, objs := newMemTree(t)
	other := filepath.Join(tr.base, "w2")
	objs[other] = newMemObjects(nil)
	disk := filepath.Join(tr.base, "disk")
	must(t, os.MkdirAll(disk, 0o755))
	s := newMemSandbox(t, tr, objs, func(p *policy.Policy) { p.WriteRoots = []string{other, disk} })
	work := objs[tr.work].(*memObjects)

	checkErr(t, mvAct("file.txt", filepath.Join(other, "moved.txt"), false)(s), fserr.CodeUnsupported, "")
	if _, ok := work.Files()["moved.txt"]; ok {
		t.Error("the move wrote moved.txt in the workdir's store")
	}
	if len(objs[other].(*memObjects).Files()) != 0 {
		t.Error("the refused move wrote in the other store")
	}
	if _, ok := work.Files()["file.txt"]; !ok {
		t.Error("the refused move removed its source")
	}

	_, created, err := s.Mkdir(filepath.Join(disk, "newdir"))
	if err != nil || !created {
		t.Fatalf("mkdir in the posix write root: %v, %v", created, err)
	}
	if fi, err := os.Stat(filepath.Join(disk, "newdir")); err != nil || !fi.IsDir() {
		t.Errorf("newdir is not on disk: %v", err)
	}
	for k := range work.Files() {
		if k == "newdir/" || k == "newdir" {
			t.Errorf("the mkdir wrote %q in the workdir's store", k)
		}
	}

	if _, err = s.Change([]string{"nd"}, "", func(tx *Tx) error { return tx.Mkdir("nd") }); err != nil {
		t.Fatalf("a change of several steps in an object root: %v", err)
	}
	if _, ok := work.Files()["nd/"]; !ok {
		t.Errorf("the step's mkdir made no marker in the workdir's store: %q", work.Files())
	}
}

// TestObjectRemoveTreeNamesEveryKey: rm -r of an object directory
// removes only keys a path spells (one that no path names, d//x, stays
// and the removal is a conflict), and a directory only implied by its
// keys (no marker) still needs every removal named under
// require_precondition.
func TestObjectRemoveTreeNamesEveryKey(t *testing.T) {
	dr := newDoorRoot(t, "object", nil)
	m := dr.store()
	m.store("d/ok.txt", []byte("ok"))
	m.store("d//x", []byte("hidden"))
	checkErr(t, rmAct("d", true, nil)(dr.s), fserr.CodeConflict, "")
	dr.mustHold("d/ok.txt", "ok")

	dr2 := newDoorRoot(t, "object", nil)
	dr2.store().store("imp/f.txt", []byte("f"))
	strict := dr2.sandbox(func(p *policy.Policy) { p.Write.RequirePrecondition = true })
	checkErr(t, rmAct("imp", true, nil)(strict), fserr.CodePreconditionRequired, "")
	dr2.mustHold("imp/f.txt", "f")
}

// hostileList is a store whose listings lie: a key outside the prefix
// asked for, and pages that ignore after (the same page every time).
type hostileList struct{ *memObjects }

func (h hostileList) List(ctx context.Context, prefix, delim, _ string, limit int) ([]Object, []string, error) {
	objs, prefixes, err := h.memObjects.List(ctx, prefix, delim, "", limit)
	return append(objs, Object{Key: "z"}), prefixes, err
}

// TestObjectListingHostileStore: a listing of keys outside the prefix,
// or one that never moves past after, neither panics nor runs on: the
// stray key is dropped and the walk ends.
func TestObjectListingHostileStore(t *testing.T) {
	tr, objs := newMemTree(t)
	files := map[string][]byte{}
	for i := range 1200 {
		files["big/f"+strconv.Itoa(i)] = []byte("x")
	}
	objs[tr.work] = hostileList{newMemObjects(files)}
	s := newMemSandbox(t, tr, objs, nil)
	n := 0
	_, err := s.Walk(context.Background(), "big", WalkOptions{MaxDepth: -1}, func(e *Entry) error {
		if e.Name == "z" {
			t.Errorf("listed a key outside the directory: %s", e.Path)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 1000 || n > 1200 {
		t.Errorf("walked %d entries, want the first page's at least and no more than the store holds", n)
	}
}
