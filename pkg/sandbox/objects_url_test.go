//go:build unix

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// bucketStore is one bucket's keys, scoped to a root's prefix as the S3
// client scopes them (every key is PREFIX/ + rel, every answer stripped):
// the fake the s3:// door tests open, so that tenants sharing a bucket
// share one keyspace here too.
type bucketStore struct {
	m      *memObjects // the whole bucket
	prefix string      // "" or "tenant/"
}

func (b bucketStore) Head(ctx context.Context, key string) (Object, error) {
	ob, err := b.m.Head(ctx, b.prefix+key)
	ob.Key = strings.TrimPrefix(ob.Key, b.prefix)
	return ob, err
}

func (b bucketStore) List(ctx context.Context, prefix, delim, after string, max int) ([]Object, []string, error) {
	if after != "" {
		after = b.prefix + after
	}
	objs, prefixes, err := b.m.List(ctx, b.prefix+prefix, delim, after, max)
	for i := range objs {
		objs[i].Key = strings.TrimPrefix(objs[i].Key, b.prefix)
	}
	for i := range prefixes {
		prefixes[i] = strings.TrimPrefix(prefixes[i], b.prefix)
	}
	return objs, prefixes, err
}

func (b bucketStore) Get(ctx context.Context, key string, off, n int64, ifVersion string) (io.ReadCloser, Object, error) {
	rc, ob, err := b.m.Get(ctx, b.prefix+key, off, n, ifVersion)
	ob.Key = strings.TrimPrefix(ob.Key, b.prefix)
	return rc, ob, err
}

func (b bucketStore) Put(ctx context.Context, key string, body io.ReadSeeker, size int64, sum [32]byte, c ObjectCond) (Object, error) {
	return b.m.Put(ctx, b.prefix+key, body, size, sum, c)
}

func (b bucketStore) Delete(ctx context.Context, key, ifVersion string) error {
	return b.m.Delete(ctx, b.prefix+key, ifVersion)
}

// useBuckets makes s3:// roots open over buckets (name -> keys), for the
// test, and returns the buckets' stores by name.
func useBuckets(t *testing.T, buckets map[string]map[string]string) map[string]*memObjects {
	t.Helper()
	mems := map[string]*memObjects{}
	for name, files := range buckets {
		mems[name] = newMemObjects(bytesOf(files))
	}
	prev := objectOpener.Load()
	UseObjectStores(func(_ context.Context, _ policy.Store, u policy.ObjectURL) (ObjectStore, error) {
		m := mems[u.Bucket]
		if m == nil {
			return nil, fserr.Errorf(fserr.CodeIO, u.String(), "no such bucket")
		}
		pre := ""
		if u.Prefix != "" {
			pre = u.Prefix + "/"
		}
		return bucketStore{m: m, prefix: pre}, nil
	})
	t.Cleanup(func() {
		if prev == nil {
			objectOpener.Store(nil)
		} else {
			objectOpener.Store(prev)
		}
	})
	return mems
}

func urlSandbox(t *testing.T, mod func(*policy.Policy)) *Sandbox {
	t.Helper()
	s, _ := urlSandboxMem(t, mod)
	return s
}

// urlSandboxMem is urlSandbox and the buckets' stores.
func urlSandboxMem(t *testing.T, mod func(*policy.Policy)) (*Sandbox, map[string]*memObjects) {
	t.Helper()
	mems := useBuckets(t, map[string]map[string]string{"bkt": {
		"ab/notes.md": "tenant ab", "ab/sub/deep.txt": "deep", "ab/secrets/k": "no",
		"abc/other.md": "tenant abc", "shared/doc.txt": "shared doc", "top.txt": "bucket top",
	}})
	p := bucketPolicy("s3://bkt/ab")
	p.ReadRoots = []string{"s3://bkt/shared"}
	p.Paths.Deny = []string{"secrets/**"}
	if mod != nil {
		mod(p)
	}
	s, err := New(p, "")
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, mems
}

func readURL(t *testing.T, s *Sandbox, p string) (string, string, error) {
	t.Helper()
	f, err := s.Open(p)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	return string(b), f.Info.Path, err
}

// TestObjectURLRoots: an s3:// root is reached by its URL (and, as the
// workdir, by relative paths), prints back in that form, and never by an
// absolute path; a tenant never reaches a sibling prefix, by "..", by a
// shared prefix (ab vs abc) or by the bucket's own top.
func TestObjectURLRoots(t *testing.T) {
	s := urlSandbox(t, nil)
	for _, c := range []struct {
		path, want, shown string
		code              fserr.Code
	}{
		{"notes.md", "tenant ab", "notes.md", ""},
		{"sub/deep.txt", "deep", "sub/deep.txt", ""},
		{"s3://bkt/ab/notes.md", "tenant ab", "notes.md", ""},
		{"s3://bkt/shared/doc.txt", "shared doc", "s3://bkt/shared/doc.txt", ""},
		{"s3://bkt/shared//doc.txt", "shared doc", "s3://bkt/shared/doc.txt", ""},
		{"secrets/k", "", "", fserr.CodeDenied},
		{"s3://bkt/ab/secrets/k", "", "", fserr.CodeDenied},
		{"../abc/other.md", "", "", fserr.CodeDenied},
		{"s3://bkt/ab/../abc/other.md", "", "", fserr.CodeDenied},
		{"s3://bkt/abc/other.md", "", "", fserr.CodeDenied},
		{"s3://bkt/top.txt", "", "", fserr.CodeDenied},
		{"s3://bkt/ab/missing.md", "", "", fserr.CodeNotFound},
		{"/s3:/bkt/ab/notes.md", "", "", fserr.CodeDenied},            // an absolute path is never a URL
		{"s3:/bkt/ab/notes.md", "", "", fserr.CodeNotFound},           // a relative path: ./s3:/bkt/… in the workdir
		{strings.Repeat("d/", 510) + "ab", "", "", fserr.CodeUsage},   // ab/ + 1,022 bytes = 1,025: over the key limit, whatever exists
		{strings.Repeat("d/", 510) + "a", "", "", fserr.CodeNotFound}, // 1,024 bytes: a key, not there
		{`missing/\xff`, "", "", fserr.CodeNotFound},                  // the four characters \xff: valid UTF-8
		{"missing/" + string([]byte{0xff}), "", "", fserr.CodeUsage},  // a byte that is no UTF-8
	} {
		got, shown, err := readURL(t, s, c.path)
		if c.code != "" {
			if code(err) != c.code {
				t.Errorf("%s: err %v, want %s", c.path, err, c.code)
			}
			continue
		}
		if err != nil || got != c.want || shown != c.shown {
			t.Errorf("%s: %q shown %q (err %v), want %q shown %q", c.path, got, shown, err, c.want, c.shown)
		}
	}
	var names []string
	if _, err := s.Walk(context.Background(), "s3://bkt/ab", WalkOptions{Hidden: true, NoIgnore: true, MaxDepth: -1}, func(e *Entry) error {
		names = append(names, e.Path)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	if got, want := strings.Join(names, " "), "notes.md sub sub/deep.txt"; got != want {
		t.Errorf("walk of the workdir: %s, want %s (secrets denied, abc never listed)", got, want)
	}
}

// TestObjectURLRequestCap: a call stops after [store] max_requests
// requests; its context is then done with ErrMaxRequests, which every
// deadline path takes (errors.Is DeadlineExceeded).
func TestObjectURLRequestCap(t *testing.T) {
	s := urlSandbox(t, func(p *policy.Policy) { p.Store.MaxRequests = 3 })
	ctx := WithRequestCap(context.Background(), 3)
	s.SetContext(ctx)
	var err error
	for i := 0; i < 10 && err == nil; i++ {
		_, _, err = readURL(t, s, "notes.md")
	}
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(ctx.Err(), ErrMaxRequests) || !MaxRequestsCut(ctx) {
		t.Fatalf("after the cap: err %v, ctx %v", err, ctx.Err())
	}
	if n := Requests(ctx); n != 3 {
		t.Errorf("Requests = %d, want 3", n)
	}
	select {
	case <-ctx.Done():
	default:
		t.Error("the capped context is not done")
	}
}

// A context derived from a capped one is done the moment the cap is
// reached (its Err set before the refused request returns), as a
// derived context of a deadline's is: a walk must not end in between
// and take its cut directories for errors.
func TestRequestCapDerivedAtOnce(t *testing.T) {
	for i := 0; i < 200; i++ {
		ctx := WithRequestCap(context.Background(), 1)
		child, cancel := context.WithCancel(ctx)
		ran := make(chan struct{})
		context.AfterFunc(ctx, func() { close(ran) })
		if err := takeRequest(child); err != nil {
			t.Fatal(err)
		}
		if err := child.Err(); err != nil {
			t.Fatalf("done before the cap: %v", err)
		}
		if err := takeRequest(child); !errors.Is(err, ErrMaxRequests) {
			t.Fatalf("past the cap: %v", err)
		}
		if err := child.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("the derived context's Err right after the cap: %v", err)
		}
		select {
		case <-ran:
		case <-time.After(5 * time.Second):
			t.Fatal("context.AfterFunc on the capped context never ran")
		}
		cancel()
	}
	// A derived context of one already done is done at once too, and
	// cancelling it first unregisters it.
	ctx := WithRequestCap(context.Background(), 1)
	takeRequest(ctx)
	takeRequest(ctx)
	child, cancel := context.WithCancel(ctx)
	defer cancel()
	select {
	case <-child.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a context derived from a done capped one is not done")
	}
	ctx2 := WithRequestCap(context.Background(), 1)
	c2, cancel2 := context.WithCancel(ctx2)
	cancel2()
	takeRequest(ctx2)
	takeRequest(ctx2)
	if !errors.Is(c2.Err(), context.Canceled) {
		t.Fatalf("a cancelled child: %v", c2.Err())
	}
}

// TestObjectURLChanges: a change on an object root is made, recorded
// in the journal in the store (outside the root, behind its marker) and
// shown by history.
func TestObjectURLChanges(t *testing.T) {
	s := urlSandbox(t, nil)
	w, err := s.OpenWriteTarget("new.txt", false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.Commit(strings.NewReader("x"), 10, CommitOptions{})
	w.Close()
	if err != nil {
		t.Fatalf("write on an object root: %v", err)
	}
	if res.ChangeID == "" {
		t.Fatalf("the write was not recorded: %+v", res)
	}
	if got, _, err := readURL(t, s, "new.txt"); err != nil || got != "x" {
		t.Fatalf("new.txt after the write: %q %v", got, err)
	}
	if _, _, err := s.Mkdir("d"); err != nil {
		t.Fatalf("mkdir on an object root: %v", err)
	}
	var ids []string
	if err := s.Changes(func(c Change) bool { ids = append(ids, c.ID+" "+c.Paths[0].Path); return true }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"2 d", "1 new.txt"}; !slices.Equal(ids, want) {
		t.Fatalf("history: %q, want %q", ids, want)
	}
	// roots says what each object root gives: a writable one its
	// changes' guarantees, a read root not.
	for _, k := range s.RootKinds() {
		writes := slices.Contains(k.Guarantees, "conditional_changes") && slices.Contains(k.Guarantees, "batches_all_or_none") &&
			slices.Contains(k.Guarantees, "journal_in_store")
		if k.Kind == "s3" && writes != k.Writable {
			t.Errorf("roots: %s (writable %v) gives %q", k.Root, k.Writable, k.Guarantees)
		}
	}
	// The journal is not reachable through the door, even by a policy
	// whose root holds it.
	p := policy.DefaultPolicy("s3://bkt")
	p.Journal.Enabled = false
	other, err := New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, _, err := readURL(t, other, "s3://bkt/jn/"+journalMarker); code(err) != fserr.CodeDenied {
		t.Fatalf("the journal's marker read through a root holding it: %v, want denied", err)
	}
}

// bucketPolicy is the default policy over the object root work, with
// its journal in the store at s3://bkt/jn.
func bucketPolicy(work string) *policy.Policy {
	p := policy.DefaultPolicy(work)
	p.Journal.Dir = "s3://bkt/jn"
	return p
}

func code(err error) fserr.Code {
	if e := fserr.AsError(err); e != nil {
		return e.Code
	}
	return ""
}

// TestObjectURLWalkRequests: a walk of an object root lists the subtree
// flat (one request for a thousand keys), opens and describes what it
// listed without a request per file or directory, and reads each file
// with one request.
func TestObjectURLWalkRequests(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 30; i++ {
		files[fmt.Sprintf("t/d%d/e%d/f%d.txt", i%5, i%3, i)] = "x"
	}
	files["t/empty/"] = ""
	mems := useBuckets(t, map[string]map[string]string{"bkt": files})
	// A key that spells what no path names (the fake refuses to hold
	// one, S3 does not): never walked.
	mems["bkt"].objs["t/a//b"] = memObject{data: []byte("x"), ver: "odd"}
	s, err := New(bucketPolicy("s3://bkt/t"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got []string
	if _, err := s.Walk(context.Background(), ".", WalkOptions{MaxDepth: -1}, func(e *Entry) error {
		got = append(got, e.Path)
		if e.Type == "file" {
			f, err := e.Open()
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := io.ReadAll(f); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	dirs, fileN := 0, 0
	for _, p := range got {
		if strings.HasSuffix(p, ".txt") {
			fileN++
		} else {
			dirs++
		}
	}
	if fileN != 30 || !slices.Contains(got, "empty") || slices.Contains(got, "a") {
		t.Errorf("walked %d files, %d directories: %v", fileN, dirs, got)
	}
	req := mems["bkt"].requests
	if req["List"] != 1 || req["Head"] > 2 || req["Get"] != 30 {
		t.Errorf("requests %v: want 1 List (flat), at most 2 Head (the journal marker, in the root and the walk's start), 30 Get", req)
	}
}

// listRefused is a store whose every listing is refused, as refused
// credentials or a missing bucket are.
type listRefused struct{ ObjectStore }

func (listRefused) List(context.Context, string, string, string, int) ([]Object, []string, error) {
	return nil, nil, fserr.Errorf(fserr.CodeIO, "s3://bkt/ab/", "s3://bkt/ab/: list refused (request id X)")
}

// A walk whose start, on an object root, cannot be listed fails with the
// listing's error: an empty result would pass it off as an empty
// directory.
func TestObjectURLWalkStartRefused(t *testing.T) {
	useBuckets(t, map[string]map[string]string{"bkt": {"ab/notes.md": "x"}})
	prev := objectOpener.Load()
	UseObjectStores(func(ctx context.Context, st policy.Store, u policy.ObjectURL) (ObjectStore, error) {
		s, err := (*prev)(ctx, st, u)
		return listRefused{s}, err
	})
	s, err := New(bucketPolicy("s3://bkt/ab"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	_, err = s.Walk(context.Background(), ".", WalkOptions{}, func(e *Entry) error { n++; e.Release(); return nil })
	if fe := fserr.AsError(err); fe == nil || fe.Code != fserr.CodeIO || !strings.Contains(fe.Msg, "request id") || n != 0 {
		t.Fatalf("a walk of a start that cannot be listed: %v (%d entries)", err, n)
	}
}

// TestObjectURLMixedRoots: a policy with a local workdir and an object
// read root reaches both, each through its own kind of path, and keeps
// each root's rules to its own root.
func TestObjectURLMixedRoots(t *testing.T) {
	useBuckets(t, map[string]map[string]string{"bkt": {"shared/doc.txt": "shared doc", "shared/secrets/k": "no"}})
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "local.txt"), []byte("local"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := policy.DefaultPolicy(work)
	p.ReadRoots = []string{"s3://bkt/shared"}
	p.Paths.Deny = []string{"secrets/**"}
	s, err := New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		path, want string
		code       fserr.Code
	}{
		{"local.txt", "local", ""},
		{filepath.Join(work, "local.txt"), "local", ""},
		{"s3://bkt/shared/doc.txt", "shared doc", ""},
		{"s3://bkt/shared/secrets/k", "", fserr.CodeDenied},
		{"s3://bkt/other", "", fserr.CodeDenied},
	} {
		got, _, err := readURL(t, s, c.path)
		if code(err) != c.code || c.code == "" && got != c.want {
			t.Errorf("%s: %q %v, want %q %s", c.path, got, err, c.want, c.code)
		}
	}
	kinds := s.RootKinds()
	if len(kinds) != 2 || kinds[0].Kind != "posix" || kinds[1].Kind != "s3" || kinds[1].Root != "s3://bkt/shared" || kinds[1].Writable {
		t.Errorf("RootKinds = %+v", kinds)
	}
}

// TestObjectURLNameTwice: a store may hold an object a beside keys a/…
// (S3 does; a file system cannot): a listing and a walk give the name
// once, as the object, never as both a file and a directory.
func TestObjectURLNameTwice(t *testing.T) {
	mems := useBuckets(t, map[string]map[string]string{"bkt": {"t/a": "file", "t/b.txt": "b"}})
	mems["bkt"].objs["t/a/x"] = memObject{data: []byte("below"), ver: "v-odd"}
	s, err := New(bucketPolicy("s3://bkt/t"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, depth := range []int{1, -1} { // a directory's listing, and the flat tree
		var got []string
		if _, err := s.Walk(context.Background(), ".", WalkOptions{MaxDepth: depth}, func(e *Entry) error {
			got = append(got, e.Path+":"+e.Type)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, " ") != "a:file b.txt:file" {
			t.Errorf("depth %d: walked %v, want a once, as the object", depth, got)
		}
	}
}
