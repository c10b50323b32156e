//go:build unix

package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// batchOf stages content for each path (absent content: a removal) in a
// new batch over s.
func batchOf(t *testing.T, s *Sandbox, files map[string]*string) *Batch {
	t.Helper()
	b := s.NewBatch()
	for p, c := range files {
		w, err := s.OpenWriteTarget(p, true)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		t.Cleanup(w.Close)
		if c == nil {
			err = b.Delete(w, CommitOptions{})
		} else {
			err = b.Put(w, []byte(*c), 1<<20, CommitOptions{})
		}
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	return b
}

func str(s string) *string { return &s }

// tenant is what the tenant ab's keys hold, below ab/ (the journal's
// keys aside).
func tenant(m *memObjects) map[string]string {
	out := map[string]string{}
	for k, v := range m.Files() {
		if rel, ok := strings.CutPrefix(k, "ab/"); ok {
			out[rel] = string(v)
		}
	}
	return out
}

func sameFiles(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %q, want %q", what, got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s: %q, want %q", what, got, want)
		}
	}
}

// TestObjectBatchRollsBack: a batch on an object root whose last request
// another writer beats is taken back whole, newest first, and the other
// writer's update stays; nothing is recorded and no plan is left.
func TestObjectBatchRollsBack(t *testing.T) {
	s, mems := urlSandboxMem(t, nil)
	m := mems["bkt"]
	before := tenant(m)
	var once atomic.Bool
	m.SetBeforeChange(func(op, key string) {
		if op == "put" && key == "ab/sub/deep.txt" && once.CompareAndSwap(false, true) {
			b := []byte("the other writer")
			if _, err := m.Put(context.Background(), key, bytes.NewReader(b), int64(len(b)), sha256.Sum256(b), ObjectCond{}); err != nil {
				t.Error(err)
			}
		}
	})
	b := batchOf(t, s, map[string]*string{"notes.md": str("new notes"), "new.txt": str("new"), "sub/deep.txt": str("new deep")})
	_, err := b.Commit()
	if code(err) != fserr.CodeConflict {
		t.Fatalf("commit: %v, want conflict", err)
	}
	m.SetBeforeChange(nil)
	want := before
	want["sub/deep.txt"] = "the other writer"
	sameFiles(t, "the tenant after the rollback", tenant(m), want)
	for k := range m.Files() {
		if strings.HasPrefix(k, "jn/") && strings.Contains(k, "/pending/") {
			t.Fatalf("a plan is left: %s", k)
		}
	}
	if err := s.Changes(func(c Change) bool { t.Errorf("a change was recorded: %+v", c); return true }); err != nil {
		t.Fatal(err)
	}
}

// TestObjectBatchCrash: a batch stopped for good (as a crash stops it)
// after k of its requests leaves its plan in the store; the next change
// on the root, by another sandbox, takes back what the batch did, and
// the tenant holds exactly what it held before.
func TestObjectBatchCrash(t *testing.T) {
	for k := 0; k <= 3; k++ {
		s, mems := urlSandboxMem(t, nil)
		m := mems["bkt"]
		before := tenant(m)
		stopped := make(chan struct{})
		n := 0
		Seam = func(p string) {
			if p == "batch.planned" && k == 0 || p == "batch.swapped" && func() bool { n++; return n == k }() {
				close(stopped)
				select {} // the process is gone: nothing after this point runs
			}
		}
		b := batchOf(t, s, map[string]*string{"notes.md": str("new notes"), "new.txt": str("new"), "sub/deep.txt": nil})
		go b.Commit()
		<-stopped
		Seam = nil
		if k == 3 {
			want := map[string]string{"notes.md": "new notes", "new.txt": "new", "secrets/k": "no"}
			sameFiles(t, "the tenant at the crash", tenant(m), want)
		}
		next, err := New(bucketPolicy("s3://bkt/ab"), "")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := next.Mkdir("other"); err != nil {
			t.Fatalf("k=%d: the next change: %v", k, err)
		}
		want := before
		want["other/"] = ""
		sameFiles(t, "the tenant after recovery", tenant(m), want)
		next.Close()
	}
}

// TestObjectUndoEveryChange: each kind of change on an object root is
// taken back by undo, exactly.
func TestObjectUndoEveryChange(t *testing.T) {
	s, mems := urlSandboxMem(t, func(p *policy.Policy) { p.Commands["rm"] = true })
	m := mems["bkt"]
	before := tenant(m)
	write := func(p, c string) {
		w, err := s.OpenWriteTarget(p, true)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.Commit(strings.NewReader(c), 1<<20, CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	undo := func(what string) {
		t.Helper()
		var newest Change
		s.Changes(func(c Change) bool { newest = c; return false })
		id, err := s.Change(nil, newest.ID, func(tx *Tx) error {
			for _, pc := range newest.Paths {
				switch {
				case pc.Before != nil && pc.Before.Type == "file":
					b, err := s.JournalContent(newest, pc.Before.SHA256, 1<<20)
					if err != nil {
						return err
					}
					if _, err := tx.Put(pc.Path, b, 0o644, nil); err != nil {
						return err
					}
				case pc.Before == nil && pc.After != nil && pc.After.Type == "file":
					if _, err := tx.Delete(pc.Path, nil); err != nil {
						return err
					}
				}
			}
			return tx.Swap()
		})
		if err != nil || id == "" {
			t.Fatalf("undo of %s: %q %v", what, id, err)
		}
		sameFiles(t, "after the undo of "+what, tenant(m), before)
	}
	write("notes.md", "changed")
	undo("a write over a file")
	write("brand/new.txt", "new")
	undo("a write of a new file")
	w, err := s.OpenEntry("sub")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(w, true); err != nil {
		t.Fatal(err)
	}
	w.Close()
	undo("rm -r")
}

// TestObjectBatchRollbackOutlivesTheCall: a batch whose call ends (its
// context cancelled, as a deadline or the request cap ends it) between
// two of its requests is still taken back whole: the rollback runs
// whatever stopped the commit.
func TestObjectBatchRollbackOutlivesTheCall(t *testing.T) {
	s, mems := urlSandboxMem(t, nil)
	m := mems["bkt"]
	before := tenant(m)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.SetContext(ctx)
	puts := 0
	m.SetBeforeChange(func(op, key string) {
		if op == "put" && strings.HasPrefix(key, "ab/") {
			if puts++; puts == 2 {
				cancel() // the call ends after the first key is made
			}
		}
	})
	b := batchOf(t, s, map[string]*string{"a.txt": str("new a"), "b.txt": str("new b"), "notes.md": str("new notes")})
	if _, err := b.Commit(); err == nil {
		t.Fatal("the commit went through a cancelled call")
	}
	m.SetBeforeChange(nil)
	sameFiles(t, "the tenant after the call ended mid-commit", tenant(m), before)
}

// TestObjectKeyUnderAFile: a write whose missing parents lie under a
// file, however far up, is not_a_dir, with no request that makes a key.
func TestObjectKeyUnderAFile(t *testing.T) {
	s, mems := urlSandboxMem(t, nil)
	before := tenant(mems["bkt"])
	for _, p := range []string{"notes.md/b.txt", "notes.md/a/b.txt", "notes.md/a/b/c.txt"} {
		_, err := s.OpenWriteTarget(p, true)
		checkErr(t, err, fserr.CodeNotADir, "")
	}
	sameFiles(t, "the tenant", tenant(mems["bkt"]), before)
}

// TestObjectTreeCopy: cp -r into an object root counts only the
// directories it makes, and under require_precondition a merge that
// replaces a file unnamed is precondition_required, nothing copied.
func TestObjectTreeCopy(t *testing.T) {
	for _, strict := range []bool{false, true} {
		s, mems := urlSandboxMem(t, func(p *policy.Policy) { p.Write.RequirePrecondition = strict })
		before := tenant(mems["bkt"])
		dst, err := s.OpenEntry("sub")
		if err != nil {
			t.Fatal(err)
		}
		// Both files are copies of the shared root's doc.txt.
		tc := TreeCopy{Merge: true, Items: []TreeItem{{Rel: "", Type: "dir"}, {Rel: "deep.txt", Type: "file"}, {Rel: "new", Type: "dir"}, {Rel: "new/x.txt", Type: "file"}},
			Open: func(*TreeItem) (*File, error) { return s.Open("s3://bkt/shared/doc.txt") }}
		res, err := s.CopyTree(dst, tc)
		dst.Close()
		if strict {
			checkErr(t, err, fserr.CodePreconditionRequired, "")
			sameFiles(t, "the tenant after the refused copy", tenant(mems["bkt"]), before)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if res.Dirs != 1 || res.Files != 2 || res.Replaced != 1 {
			t.Fatalf("result %+v: want 1 directory made (new), 2 files, 1 replaced", res)
		}
		if got := tenant(mems["bkt"]); got["sub/deep.txt"] != "shared doc" || got["sub/new/x.txt"] != "shared doc" {
			t.Fatalf("after the copy: %q", got)
		}
	}
}

// TestObjectMoveOntoItself: mv --force of a file onto its own name
// leaves it as it is, as rename(2) does (a put and a conditional delete
// of one key would lose it).
func TestObjectMoveOntoItself(t *testing.T) {
	s, mems := urlSandboxMem(t, nil)
	before := tenant(mems["bkt"])
	checkErr(t, mvAct("notes.md", "notes.md", true)(s), "", "")
	checkErr(t, mvAct("notes.md", "notes.md", false)(s), fserr.CodeExists, "")
	sameFiles(t, "the tenant", tenant(mems["bkt"]), before)
}

// TestObjectChangeUnderRequestCap: whatever request [store] max_requests
// stops, a change on an object root either fails with timeout, nothing
// changed and nothing recorded, or is made and recorded (its record is
// written past the cap): never made and unrecorded.
func TestObjectChangeUnderRequestCap(t *testing.T) {
	made := false
	for n := int64(1); n <= 16; n++ {
		s, mems := urlSandboxMem(t, nil)
		before := tenant(mems["bkt"])
		s.SetContext(WithRequestCap(context.Background(), n))
		w, err := s.OpenWriteTarget("notes.md", false)
		if err == nil {
			_, err = w.Commit(strings.NewReader("new"), 100, CommitOptions{})
			w.Close()
		}
		s.SetContext(context.Background())
		var recorded int
		if herr := s.Changes(func(Change) bool { recorded++; return true }); herr != nil {
			t.Fatal(herr)
		}
		if err != nil {
			checkErr(t, err, fserr.CodeTimeout, "")
			sameFiles(t, fmt.Sprintf("cap %d: the tenant after the refused change", n), tenant(mems["bkt"]), before)
			if recorded != 0 {
				t.Fatalf("cap %d: a refused change was recorded", n)
			}
			continue
		}
		made = true
		if got := tenant(mems["bkt"])["notes.md"]; got != "new" || recorded != 1 {
			t.Fatalf("cap %d: notes.md %q, %d changes recorded: want the change made and recorded once", n, got, recorded)
		}
	}
	if !made {
		t.Fatal("no cap let the change through")
	}
}

// TestObjectMkdirStepsUnderMissingParents: a change's mkdir step (undo
// putting back an empty directory of a removed tree, or a redo of a
// mkdir) makes its marker though the prefixes above are gone.
func TestObjectMkdirStepsUnderMissingParents(t *testing.T) {
	s, mems := urlSandboxMem(t, nil)
	if _, err := s.Change([]string{"p/q/r"}, "", func(tx *Tx) error { return tx.Mkdir("p/q/r") }); err != nil {
		t.Fatalf("mkdir p/q/r as a step, p absent: %v", err)
	}
	if _, ok := mems["bkt"].Files()["ab/p/q/r/"]; !ok {
		t.Fatalf("no marker ab/p/q/r/: %q", tenant(mems["bkt"]))
	}
}
