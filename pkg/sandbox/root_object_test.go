//go:build unix

package sandbox

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// TestObjectConcurrentWriter: on an object root another writer may come
// between a change's pin and its commit (memObjects.SetBeforeChange puts
// it there, once, before the change's first request). A change
// conditioned on what it pinned or checked (expect, unchanged, no-replace,
// a removal, a move) is then refused by the store, and the other writer's
// content stays; a plain write replaces it, as rename(2) would; an append
// reads again and loses nothing.
func TestObjectConcurrentWriter(t *testing.T) {
	for _, c := range []struct {
		name   string
		act    func(*Sandbox) error
		writer func(m *memObjects) // what the other writer does
		code   fserr.Code
		want   map[string]string
	}{
		{"write expect", writeAct("file.txt", "OURS", CommitOptions{Expect: sha("hello")}), theirs("file.txt"), fserr.CodeConflict, map[string]string{"file.txt": "THEIRS"}},
		{"edit", editAct("file.txt"), theirs("file.txt"), fserr.CodeConflict, map[string]string{"file.txt": "THEIRS"}},
		{"write no-replace", writeAct("new.txt", "OURS", CommitOptions{NoReplace: true}), theirs("new.txt"), fserr.CodeExists, map[string]string{"new.txt": "THEIRS"}},
		{"write expect absent", writeAct("new.txt", "OURS", CommitOptions{Expect: new(string)}), theirs("new.txt"), fserr.CodeExists, map[string]string{"new.txt": "THEIRS"}},
		{"plain write", writeAct("file.txt", "OURS", CommitOptions{}), theirs("file.txt"), "", map[string]string{"file.txt": "OURS"}},
		{"rm", rmAct("file.txt", false, nil), theirs("file.txt"), fserr.CodeConflict, map[string]string{"file.txt": "THEIRS"}},
		{"rm expect", rmAct("file.txt", false, sha("hello")), theirs("file.txt"), fserr.CodeConflict, map[string]string{"file.txt": "THEIRS"}},
		{"rm removed meanwhile", rmAct("file.txt", false, nil), gone("file.txt"), fserr.CodeConflict, map[string]string{"file.txt": absent}},
		{"rm -r", rmAct("a/b", true, nil), theirs("a/b/deep.txt"), fserr.CodeConflict, map[string]string{"a/b/deep.txt": "THEIRS"}},
		{"append", appendAct("file.txt", " world", CommitOptions{}), theirs("file.txt"), "", map[string]string{"file.txt": "THEIRS world"}},
		{"append expect", appendAct("file.txt", " world", CommitOptions{Expect: sha("hello")}), theirs("file.txt"), fserr.CodeConflict, map[string]string{"file.txt": "THEIRS"}},
		{"mv source rewritten", mvAct("file.txt", "moved.txt", false), theirs("file.txt"), fserr.CodeConflict, map[string]string{"file.txt": "THEIRS", "moved.txt": absent}},
		{"mv destination made", mvAct("file.txt", "moved.txt", false), theirs("moved.txt"), fserr.CodeExists, map[string]string{"file.txt": "hello", "moved.txt": "THEIRS"}},
		{"mkdir over a file made meanwhile", mkdirAct("nd"), theirs("nd"), fserr.CodeExists, map[string]string{"nd": "THEIRS"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dr := newDoorRoot(t, "object", nil)
			m := dr.store()
			once := false
			m.SetBeforeChange(func(op, key string) {
				if !once {
					once = true
					c.writer(m)
				}
			})
			checkErr(t, c.act(dr.s), c.code, "")
			if !once {
				t.Fatal("the act made no request the other writer could come before")
			}
			for rel, want := range c.want {
				dr.mustHold(rel, want)
			}
		})
	}
}

// theirs is another writer putting THEIRS at key.
func theirs(key string) func(*memObjects) {
	return func(m *memObjects) {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.store(key, []byte("THEIRS"))
	}
}

// gone is another writer removing key.
func gone(key string) func(*memObjects) {
	return func(m *memObjects) {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.objs, key)
	}
}

// TestObjectReadPinsVersion: a file opened on an object root is the
// version opened: once another writer replaces it, what is left of the
// read is a conflict, never the new content mixed in.
func TestObjectReadPinsVersion(t *testing.T) {
	dr := newDoorRoot(t, "object", nil)
	big := strings.Repeat("h", openWindow+10)
	dr.put("big.txt", big)
	for _, o := range dr.objs {
		if mo, ok := o.(*memObjects); ok {
			clear(mo.requests)
		}
	}
	f, err := dr.s.Open("big.txt")
	checkErr(t, err, "", "")
	defer f.Close()
	buf := make([]byte, 2)
	if _, err := io.ReadFull(f, buf); err != nil || string(buf) != "hh" {
		t.Fatalf("first read: %q %v", buf, err)
	}
	if err := f.Settled(); err != nil {
		t.Fatalf("Settled before any other writer: %v", err)
	}
	dr.put("big.txt", "HELLO"+big)
	// What the open read is the version opened: read again, the same.
	if _, err := f.ReadAt(buf, 2); err != nil || string(buf) != "hh" {
		t.Errorf("ReadAt within what the open read, after a rewrite: %q %v", buf, err)
	}
	// Past it, the store is asked for that version, which is gone.
	if _, err := f.ReadAt(buf, openWindow+2); fserr.AsError(err).Code != fserr.CodeConflict {
		t.Errorf("ReadAt after a rewrite: %v, want conflict", err)
	}
	// What was read is one version whatever happened since (every read
	// asks for it): Settled needs no request to say so, and the rewrite
	// shows on the next read, above.
	if err := f.Settled(); err != nil {
		t.Errorf("Settled after a rewrite: %v, want nil (the bytes read are one version)", err)
	}
	if dr.objs != nil {
		for _, m := range dr.objs {
			// The open is a GET (of its first window), the read past
			// it another; the one HEAD is the root's journal marker
			// (once per root and process: ownstate.go).
			if mo, ok := m.(*memObjects); ok && len(mo.requests) > 0 && (mo.requests["Head"] > 1 || mo.requests["Get"] != 2) {
				t.Errorf("requests %v for one open and three reads, want at most 1 HEAD and 2 GET (the open's, and the refused one past its window)", mo.requests)
			}
		}
	}
}

// TestMemObjects is the fake's own table: S3's answers to each request.
func TestMemObjects(t *testing.T) {
	ctx := context.Background()
	m := newMemObjects(bytesOf(map[string]string{"a/x": "1", "a/y/z": "2", "b": "3", "e/": ""}))
	head := func(key string) (Object, error) { return m.Head(ctx, key) }
	put := func(key, body string, c ObjectCond) error {
		_, err := m.Put(ctx, key, strings.NewReader(body), int64(len(body)), sha256.Sum256([]byte(body)), c)
		return err
	}
	x, err := head("a/x")
	if err != nil || x.Size != 1 || x.Version == "" {
		t.Fatalf("Head a/x = %+v %v", x, err)
	}
	if _, err := head("a"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Head of a prefix: %v, want not exist", err)
	}
	objs, prefixes, err := m.List(ctx, "a/", "/", "", 0)
	if err != nil || len(objs) != 1 || objs[0].Key != "a/x" || len(prefixes) != 1 || prefixes[0] != "a/y/" {
		t.Errorf("List a/ = %+v %v %v", objs, prefixes, err)
	}
	if objs, prefixes, _ := m.List(ctx, "", "/", "a/", 0); len(objs) != 1 || objs[0].Key != "b" || len(prefixes) != 1 || prefixes[0] != "e/" {
		t.Errorf("List after a/ = %+v %v", objs, prefixes)
	}
	for _, c := range []struct {
		name string
		err  error
	}{
		{"put IfAbsent on an existing key", put("b", "4", ObjectCond{IfAbsent: true})},
		{"put IfVersion of another version", put("b", "4", ObjectCond{IfVersion: "v0"})},
		{"delete IfVersion of another version", m.Delete(ctx, "a/x", "v0")},
	} {
		if !errors.Is(c.err, ErrPrecondition) {
			t.Errorf("%s: %v, want precondition failed", c.name, c.err)
		}
	}
	if err := put("a/x/under", "5", ObjectCond{}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("a key below a file: %v, want exist", err)
	}
	if err := put("a", "5", ObjectCond{}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("a file over a prefix: %v, want exist", err)
	}
	if err := put("b", "4", ObjectCond{IfVersion: mustHead(t, m, "b").Version}); err != nil {
		t.Errorf("put IfVersion of the version there: %v", err)
	}
	body, _, err := m.Get(ctx, "a/y/z", -1, -1, "")
	if b, _ := io.ReadAll(body); err != nil || string(b) != "2" {
		t.Errorf("Get a suffix: %q %v", b, err)
	}
	if _, _, err := m.Get(ctx, "b", 0, -1, x.Version); !errors.Is(err, ErrPrecondition) {
		t.Errorf("Get of a version no longer there: %v, want precondition failed", err)
	}
	if m.requests["Put"] == 0 || m.requests["Get"] == 0 {
		t.Errorf("requests not counted: %v", m.requests)
	}
}

func mustHead(t *testing.T, m *memObjects, key string) Object {
	t.Helper()
	o, err := m.Head(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestWalkOnEachRoot: a walk of the same files gives the same entries,
// in the same order, on either kind of root (the posix tree's links,
// FIFO and hard link aside), and the same skipped counts of what both
// hold; a walk resumed past a position too.
func TestWalkOnEachRoot(t *testing.T) {
	posixExtra := map[string]bool{"fifo": true, "hard_secret": true}
	walk := func(dr *doorRoot, o WalkOptions) ([]string, WalkSkipped) {
		var got []string
		sk, err := dr.s.Walk(context.Background(), ".", o, func(e *Entry) error {
			defer e.Release()
			if e.Type == "symlink" || posixExtra[e.Rel] {
				return nil
			}
			got = append(got, e.Rel+":"+e.Type)
			if e.Type == "file" {
				f, err := e.Open()
				if err != nil {
					t.Errorf("open %s: %v", e.Rel, err)
					return nil
				}
				f.Close()
			}
			return nil
		})
		if err != nil {
			t.Fatalf("walk: %v", err)
		}
		return got, sk
	}
	for _, o := range []WalkOptions{{MaxDepth: -1}, {MaxDepth: -1, Hidden: true}, {MaxDepth: 1, Hidden: true}, {MaxDepth: -1, Hidden: true, After: "a/b"}} {
		px, pk := walk(newDoorRoot(t, "posix", nil), o)
		ob, ok := walk(newDoorRoot(t, "object", nil), o)
		if strings.Join(px, " ") != strings.Join(ob, " ") {
			t.Errorf("%+v:\nposix  %v\nobject %v", o, px, ob)
		}
		if pk.Hidden != ok.Hidden || pk.Ignored != ok.Ignored {
			t.Errorf("%+v: skipped posix %+v, object %+v", o, pk, ok)
		}
	}
}

// TestObjectRootStateMarker: a prefix holding fsbox's journal marker is
// fsbox's state on an object root too: nothing below it is read, listed,
// written or walked into.
func TestObjectRootStateMarker(t *testing.T) {
	dr := newDoorRoot(t, "object", nil)
	dr.put("j/"+journalMarker, "marker")
	dr.put("j/sub/k.txt", "SECRET")
	for _, c := range []pathCase{
		{"read below", "open", "j/sub/k.txt", fserr.CodeDenied, fserr.RuleOwnFile, "", "", anyRoot},
		{"list it", "opendir", "j/sub", fserr.CodeDenied, fserr.RuleOwnFile, "", "", anyRoot},
		{"stat below", "lstat", "j/sub/k.txt", fserr.CodeDenied, fserr.RuleOwnFile, "", "", anyRoot},
		{"write below", "write", "j/new.txt", fserr.CodeDenied, fserr.RuleOwnFile, "", "", anyRoot},
	} {
		runPathCases(t, dr.s, []pathCase{c})
	}
	var walked []string
	_, err := dr.s.Walk(context.Background(), ".", WalkOptions{MaxDepth: -1, Hidden: true}, func(e *Entry) error {
		defer e.Release()
		walked = append(walked, e.Rel)
		return nil
	})
	checkErr(t, err, "", "")
	for _, p := range walked {
		if strings.HasPrefix(p, "j/") {
			t.Errorf("the walk reported %s, below fsbox's state", p)
		}
	}
}

// TestObjectKeysNoPathNames: a bucket may hold keys no path spells
// ("a/../x", "a//x", "a/./x"); an object root lists none of them, and a
// path the door checked never reaches one.
func TestObjectKeysNoPathNames(t *testing.T) {
	dr := newDoorRoot(t, "object", func(p *policy.Policy) { p.Paths.Deny = nil })
	m := dr.store()
	for _, k := range []string{"b/../secrets/key", "b//x", "b/./y", "b/ok.txt"} {
		m.objs[k] = memObject{data: []byte("K"), ver: "v-" + k}
	}
	d, err := dr.s.OpenDir("b")
	checkErr(t, err, "", "")
	l, err := d.ReadDir()
	d.Close()
	checkErr(t, err, "", "")
	if len(l.Entries) != 1 || l.Entries[0].Name != "ok.txt" {
		t.Errorf("ReadDir(b) = %+v, want ok.txt alone", l.Entries)
	}
	_, err = dr.s.Walk(context.Background(), "b", WalkOptions{MaxDepth: -1, Hidden: true}, func(e *Entry) error {
		defer e.Release()
		if e.Rel != "ok.txt" {
			t.Errorf("the walk reported %q", e.Rel)
		}
		return nil
	})
	checkErr(t, err, "", "")
	// The path is secrets/key, lexically: that key, never the one that
	// spells b/../secrets/key.
	f, err := dr.s.Open("b/../secrets/key")
	checkErr(t, err, "", "")
	if got := readAll(t, f); got != "k" {
		t.Errorf("b/../secrets/key read %q, want secrets/key's k", got)
	}
	f.Close()
}
