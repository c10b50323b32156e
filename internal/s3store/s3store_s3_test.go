package s3store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/internal/s3test"
	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// The store against a real S3 server (versitygw, internal/s3test): make
// test-s3.

// openServer starts a server with a bucket and opens the root
// s3://BUCKET/PREFIX on it through Open, the AWS environment the
// server's.
func openServer(t *testing.T, prefix string, opts ...s3test.Option) (*s3test.Server, *store) {
	t.Helper()
	srv := s3test.Start(t, opts...)
	srv.Setenv(t)
	forgetClients(t)
	b := srv.Bucket(t, "bkt")
	st, err := Open(context.Background(), srv.Store(), policy.ObjectURL{Bucket: b, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return srv, st.(*store)
}

// forgetClients empties Open's cache now and after t (a later server may
// have this one's port and other keys).
func forgetClients(t *testing.T) {
	clear := func() {
		clientsMu.Lock()
		clients = map[clientKey]*client{}
		clientsMu.Unlock()
	}
	clear()
	t.Cleanup(clear)
}

func put(t *testing.T, s *store, key string, data string, c sandbox.ObjectCond) (sandbox.Object, error) {
	t.Helper()
	return s.Put(context.Background(), key, strings.NewReader(data), int64(len(data)), sha256.Sum256([]byte(data)), c)
}

func mustPut(t *testing.T, s *store, key string, data string, c sandbox.ObjectCond) sandbox.Object {
	t.Helper()
	ob, err := put(t, s, key, data, c)
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return ob
}

func get(t *testing.T, s *store, key string, off, n int64, ver string) (string, sandbox.Object, error) {
	t.Helper()
	body, ob, err := s.Get(context.Background(), key, off, n, ver)
	if err != nil {
		return "", ob, err
	}
	defer body.Close()
	b, err := io.ReadAll(body)
	return string(b), ob, err
}

func TestS3StoreEveryMethod(t *testing.T) {
	srv, s := openServer(t, "tenant")
	ctx := context.Background()

	// Put: a new key if absent, then never over it.
	v1 := mustPut(t, s, "docs/a.txt", "hello world", sandbox.ObjectCond{IfAbsent: true})
	if v1.Key != "docs/a.txt" || v1.Size != 11 || v1.Version == "" || v1.MTime.IsZero() {
		t.Fatalf("put answered %+v", v1)
	}
	if _, err := put(t, s, "docs/a.txt", "other", sandbox.ObjectCond{IfAbsent: true}); !errors.Is(err, sandbox.ErrPrecondition) {
		t.Fatalf("put if absent over a key: %v", err)
	}
	// The object is under the prefix, as a file.
	if b, err := os.ReadFile(filepath.Join(srv.Dir(), "bkt", "tenant", "docs", "a.txt")); err != nil || string(b) != "hello world" {
		t.Fatalf("on disk: %q %v", b, err)
	}

	// Head agrees with Put, List with Head.
	h, err := s.Head(ctx, "docs/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if h.Size != 11 || h.Version != v1.Version || h.Key != "docs/a.txt" {
		t.Fatalf("head %+v, put %+v", h, v1)
	}
	// The sha256 sent with the PUT, which the server verified, comes
	// back with HEAD: stat --sha256 needs no read.
	if sum := sha256.Sum256([]byte("hello world")); h.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("head's sha256 %q, want the content's", h.SHA256)
	}
	objs, _, err := s.List(ctx, "docs/", "/", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].Key != "docs/a.txt" || objs[0].Version != v1.Version || objs[0].Size != 11 ||
		!objs[0].MTime.Equal(h.MTime) {
		t.Fatalf("list %+v, head %+v", objs, h)
	}

	// Get: whole, ranges, a suffix, beyond the end, pinned.
	for _, c := range []struct {
		off, n int64
		want   string
	}{
		{0, -1, "hello world"}, {0, 5, "hello"}, {6, -1, "world"}, {6, 3, "wor"}, {10, 5, "d"},
		{-5, -1, "world"}, {-5, 2, "wo"}, {-100, -1, "hello world"}, {11, -1, ""}, {50, 4, ""}, {3, 0, ""},
	} {
		got, ob, err := get(t, s, "docs/a.txt", c.off, c.n, v1.Version)
		if err != nil || got != c.want || ob.Size != 11 || ob.Version != v1.Version {
			t.Errorf("Get(%d, %d) = %q %+v %v, want %q", c.off, c.n, got, ob, err, c.want)
		}
	}

	// A change: If-Match of the version read, then the old version is gone.
	v2 := mustPut(t, s, "docs/a.txt", "hello again", sandbox.ObjectCond{IfVersion: v1.Version})
	if v2.Version == v1.Version {
		t.Fatalf("the version did not change: %s", v2.Version)
	}
	if _, err := put(t, s, "docs/a.txt", "lost update", sandbox.ObjectCond{IfVersion: v1.Version}); !errors.Is(err, sandbox.ErrPrecondition) {
		t.Fatalf("put if-match of a replaced version: %v", err)
	}
	if _, _, err := get(t, s, "docs/a.txt", 0, -1, v1.Version); !errors.Is(err, sandbox.ErrPrecondition) {
		t.Fatalf("get if-match of a replaced version: %v", err)
	}
	if _, _, err := get(t, s, "docs/a.txt", 2, 3, v1.Version); !errors.Is(err, sandbox.ErrPrecondition) {
		t.Fatalf("ranged get if-match of a replaced version: %v", err)
	}
	if got, _, err := get(t, s, "docs/a.txt", 0, -1, v2.Version); err != nil || got != "hello again" {
		t.Fatalf("get of the new version: %q %v", got, err)
	}
	// If-Match on a key that is not there.
	if _, err := put(t, s, "docs/none.txt", "x", sandbox.ObjectCond{IfVersion: v1.Version}); !errors.Is(err, sandbox.ErrPrecondition) {
		t.Fatalf("put if-match of a missing key: %v", err)
	}

	// The checksum is verified: a body that is not the sum sent is refused.
	sum := sha256.Sum256([]byte("something else"))
	if _, err := s.Put(ctx, "docs/bad.txt", strings.NewReader("body"), 4, sum, sandbox.ObjectCond{}); err == nil || fserr.AsError(err).Code != fserr.CodeIO {
		t.Fatalf("put with a wrong sha256: %v", err)
	}
	if _, err := s.Head(ctx, "docs/bad.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the refused put left %v", err)
	}

	// Delete: If-Match of a replaced version is refused, of the current one done.
	if err := s.Delete(ctx, "docs/a.txt", v1.Version); !errors.Is(err, sandbox.ErrPrecondition) {
		t.Fatalf("delete if-match of a replaced version: %v", err)
	}
	if err := s.Delete(ctx, "docs/a.txt", v2.Version); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Head(ctx, "docs/a.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("head after delete: %v", err)
	}
	if _, _, err := get(t, s, "docs/a.txt", 0, -1, ""); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("get after delete: %v", err)
	}
	if _, _, err := get(t, s, "docs/a.txt", 0, -1, v2.Version); !errors.Is(err, sandbox.ErrPrecondition) {
		t.Fatalf("get if-match after delete: %v", err)
	}
	// Deleting what is not there succeeds, as on S3 (and memObjects).
	if err := s.Delete(ctx, "docs/a.txt", ""); err != nil {
		t.Fatalf("delete of a missing key: %v", err)
	}
	// versitygw: a conditional delete of a missing key succeeds too
	// (memObjects refuses it): the key is gone either way.
	if err := s.Delete(ctx, "docs/a.txt", v2.Version); err != nil && !errors.Is(err, sandbox.ErrPrecondition) {
		t.Fatalf("conditional delete of a missing key: %v", err)
	} else {
		t.Logf("conditional delete of a missing key: %v", err)
	}

	// An empty object.
	e := mustPut(t, s, "empty", "", sandbox.ObjectCond{IfAbsent: true})
	for _, c := range [][2]int64{{0, -1}, {0, 10}, {5, -1}, {-3, -1}} {
		got, ob, err := get(t, s, "empty", c[0], c[1], e.Version)
		if err != nil || got != "" || ob.Size != 0 || ob.Version != e.Version {
			t.Errorf("Get(empty, %d, %d) = %q %+v %v", c[0], c[1], got, ob, err)
		}
	}

	// A key below a file is refused as memObjects refuses it.
	mustPut(t, s, "file", "x", sandbox.ObjectCond{})
	if _, err := put(t, s, "file/below", "y", sandbox.ObjectCond{}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("put below a file: %v", err)
	}
}

func TestS3DirectoryMarker(t *testing.T) {
	_, s := openServer(t, "t")
	ctx := context.Background()
	m := mustPut(t, s, "empty/", "", sandbox.ObjectCond{IfAbsent: true})
	if m.Key != "empty/" {
		t.Fatalf("marker %+v", m)
	}
	if _, err := put(t, s, "empty/", "", sandbox.ObjectCond{IfAbsent: true}); !errors.Is(err, sandbox.ErrPrecondition) {
		t.Fatalf("a second marker if absent: %v", err)
	}
	h, err := s.Head(ctx, "empty/")
	if err != nil || h.Size != 0 || h.Key != "empty/" {
		t.Fatalf("head of the marker: %+v %v", h, err)
	}
	objs, prefixes, err := s.List(ctx, "", "/", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 0 || strings.Join(prefixes, ",") != "empty/" {
		t.Fatalf("root listing: %+v %q", objs, prefixes)
	}
	// Below the marker: the marker itself, as memObjects lists it (the
	// object root leaves it out).
	objs, prefixes, err = s.List(ctx, "empty/", "/", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].Key != "empty/" || objs[0].Size != 0 || len(prefixes) != 0 {
		t.Fatalf("the marker's listing: %+v %q", objs, prefixes)
	}
	// A file beside the marker, and the marker after it.
	mustPut(t, s, "empty/f", "data", sandbox.ObjectCond{IfAbsent: true})
	objs, _, err = s.List(ctx, "empty/", "/", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	if strings.Join(keys, ",") != "empty/,empty/f" {
		t.Fatalf("listing with a file: %q", keys)
	}
	// A file over the directory is refused as memObjects refuses it.
	if _, err := put(t, s, "empty", "x", sandbox.ObjectCond{}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("a file over a directory: %v", err)
	}
	// Deleting the marker leaves the keys below it, as S3 and memObjects.
	if err := s.Delete(ctx, "empty/", m.Version); err != nil {
		t.Fatalf("delete of a marker with a key below: %v", err)
	}
	if _, err := s.Head(ctx, "empty/"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the deleted marker: %v", err)
	}
	objs, prefixes, err = s.List(ctx, "empty/", "/", "", 0)
	if err != nil || len(objs) != 1 || objs[0].Key != "empty/f" || len(prefixes) != 0 {
		t.Fatalf("after the marker's delete: %+v %q %v", objs, prefixes, err)
	}
	// A marker outlives the last key below it.
	m2 := mustPut(t, s, "m2/", "", sandbox.ObjectCond{IfAbsent: true})
	mustPut(t, s, "m2/f", "data", sandbox.ObjectCond{IfAbsent: true})
	if err := s.Delete(ctx, "m2/f", ""); err != nil {
		t.Fatal(err)
	}
	if h, err := s.Head(ctx, "m2/"); err != nil || h.Version != m2.Version {
		t.Fatalf("the marker after its last key went: %+v %v", h, err)
	}
	for _, k := range []string{"m2/", "empty/f"} {
		if err := s.Delete(ctx, k, ""); err != nil {
			t.Fatal(err)
		}
	}
	if objs, prefixes, err := s.List(ctx, "", "", "", 0); err != nil || len(objs)+len(prefixes) != 0 {
		t.Fatalf("after every delete: %+v %q %v", objs, prefixes, err)
	}
	// A key two levels down leaves no marker: its directories are
	// prefixes only.
	mustPut(t, s, "x/y/z", "data", sandbox.ObjectCond{})
	if err := s.Delete(ctx, "x/y/z", ""); err != nil {
		t.Fatal(err)
	}
	if objs, prefixes, err := s.List(ctx, "", "", "", 0); err != nil || len(objs)+len(prefixes) != 0 {
		t.Fatalf("after the only key's delete: %+v %q %v", objs, prefixes, err)
	}
}

// The listing of more than one page: with "/" and without, after a key,
// and at most max; the prefix of another tenant ("ab" beside "abc") is
// never listed.
func TestS3ListPages(t *testing.T) {
	srv, s := openServer(t, "ab")
	ctx := context.Background()
	// Seeded as files (the posix backend's objects): 1,100 keys, 5
	// directories with a file each, and another tenant's keys.
	root := filepath.Join(srv.Dir(), "bkt")
	var want []string
	for i := 0; i < 1100; i++ {
		k := fmt.Sprintf("many/k%04d", i)
		want = append(want, k)
		write(t, filepath.Join(root, "ab", k), "x")
	}
	for i := 0; i < 5; i++ {
		write(t, filepath.Join(root, "ab", fmt.Sprintf("many/d%d/f", i)), "y")
	}
	write(t, filepath.Join(root, "abc", "many", "k0000"), "other tenant")
	write(t, filepath.Join(root, "abc", "secret"), "other tenant")
	write(t, filepath.Join(root, "ab.txt"), "beside the prefix")

	objs, prefixes, err := s.List(ctx, "many/", "/", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1100 || len(prefixes) != 5 || prefixes[0] != "many/d0/" || objs[1099].Key != "many/k1099" {
		t.Fatalf("%d objects %d prefixes %q", len(objs), len(prefixes), prefixes)
	}
	for i, o := range objs {
		if o.Key != want[i] || o.Size != 1 {
			t.Fatalf("object %d: %+v, want %s", i, o, want[i])
		}
	}
	// After a key, across the page boundary.
	objs, prefixes, err = s.List(ctx, "many/", "/", "many/k0049", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1050 || len(prefixes) != 0 || objs[0].Key != "many/k0050" {
		t.Fatalf("after k0049: %d objects (first %v), %d prefixes", len(objs), objs[0], len(prefixes))
	}
	// After a prefix: the prefix is not listed again.
	objs, prefixes, err = s.List(ctx, "many/", "/", "many/d2/", 0)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(prefixes, ",") != "many/d3/,many/d4/" || len(objs) != 1100 {
		t.Fatalf("after d2/: %d objects, prefixes %q", len(objs), prefixes)
	}
	// At most max, in key order across prefixes and objects.
	objs, prefixes, err = s.List(ctx, "many/", "/", "", 1003)
	if err != nil {
		t.Fatal(err)
	}
	if len(prefixes) != 5 || len(objs) != 998 || objs[997].Key != "many/k0997" {
		t.Fatalf("max 1003: %d objects %d prefixes", len(objs), len(prefixes))
	}
	// Flat: every key below.
	objs, prefixes, err = s.List(ctx, "", "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1105 || len(prefixes) != 0 {
		t.Fatalf("flat: %d objects %d prefixes", len(objs), len(prefixes))
	}
	for _, o := range objs {
		if !strings.HasPrefix(o.Key, "many/") {
			t.Fatalf("flat listing shows %q", o.Key)
		}
	}
	// The root: only "many/", nothing of abc or ab.txt.
	objs, prefixes, err = s.List(ctx, "", "/", "", 0)
	if err != nil || len(objs) != 0 || strings.Join(prefixes, ",") != "many/" {
		t.Fatalf("root: %+v %q %v", objs, prefixes, err)
	}
	// A seeded file reads as an object (with no ETag).
	got, ob, err := get(t, s, "many/k0007", 0, -1, "")
	if err != nil || got != "x" || ob.Size != 1 {
		t.Fatalf("seeded get: %q %+v %v", got, ob, err)
	}
}

func write(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestS3ErrorsNameTheStore(t *testing.T) {
	srv, s := openServer(t, "t")
	ctx := context.Background()
	// Wrong keys: refused credentials are io, naming the key's URL and
	// the request id.
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong")
	forgetClients(t)
	bad, err := Open(ctx, srv.Store(), policy.ObjectURL{Bucket: "bkt", Prefix: "t"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Head(ctx, "k")
	if e := fserr.AsError(err); e.Code != fserr.CodeIO || !strings.Contains(e.Msg, "s3://bkt/t/k") || !strings.Contains(e.Msg, "request id ") ||
		strings.Contains(e.Msg, "no request id") {
		t.Fatalf("refused credentials: %v", err)
	}
	_, _, err = bad.List(ctx, "", "/", "", 0)
	if e := fserr.AsError(err); e.Code != fserr.CodeIO || !strings.Contains(e.Msg, "request id ") {
		t.Fatalf("refused credentials, list: %v", err)
	}
	// A bucket that is not there is io, not a missing key.
	nb, err := Open(ctx, srv.Store(), policy.ObjectURL{Bucket: "nobucket", Prefix: "t"})
	if err != nil {
		t.Fatal(err)
	}
	_ = s
	srv.Setenv(t)
	forgetClients(t)
	nb, err = Open(ctx, srv.Store(), policy.ObjectURL{Bucket: "nobucket", Prefix: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nb.Head(ctx, "k"); err == nil {
		t.Fatal("head in a missing bucket succeeded")
	} else {
		t.Logf("head in a missing bucket: %v", err)
	}
	if _, _, err := nb.List(ctx, "", "/", "", 0); fserr.AsError(err).Code != fserr.CodeIO {
		t.Fatalf("list of a missing bucket: %v", err)
	}
	// The call's deadline comes back as itself.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Head(cctx, "k"); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: %v", err)
	}
}

// TLS: https://localhost with the server's CA in SSL_CERT_FILE, read by
// the system pool of a fresh process (Go loads the pool once a process,
// so the child is this test binary run again).
func TestS3TLS(t *testing.T) {
	if os.Getenv("FSBOX_S3TLS_CHILD") != "" {
		t.Skip("the child's half")
	}
	srv := s3test.Start(t, s3test.TLS())
	b := srv.Bucket(t, "bkt")
	srv.Put(t, b, "t/hello.txt", []byte("over tls"))
	if !strings.HasPrefix(srv.Endpoint(), "https://localhost:") {
		t.Fatalf("endpoint %s", srv.Endpoint())
	}
	// This process's pool does not know the CA: io. (The pool is loaded
	// now, before SSL_CERT_FILE names the CA: an http:// endpoint loads
	// none, so the tests before this one may not have.)
	if _, err := x509.SystemCertPool(); err != nil {
		t.Fatal(err)
	}
	srv.Setenv(t)
	forgetClients(t)
	st, err := Open(context.Background(), srv.Store(), policy.ObjectURL{Bucket: b, Prefix: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Head(context.Background(), "hello.txt"); fserr.AsError(err).Code != fserr.CodeIO {
		t.Fatalf("a CA the process does not trust: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestS3TLSChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), srv.Env()...)
	cmd.Env = append(cmd.Env, "FSBOX_S3TLS_CHILD="+srv.Endpoint())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "read over tls: \"over tls\"") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func TestS3TLSChild(t *testing.T) {
	ep := os.Getenv("FSBOX_S3TLS_CHILD")
	if ep == "" {
		t.Skip("run by TestS3TLS")
	}
	st, err := Open(context.Background(), policy.Store{Endpoint: ep, PathStyle: true}, policy.ObjectURL{Bucket: "bkt", Prefix: "t"})
	if err != nil {
		t.Fatal(err)
	}
	body, ob, err := st.Get(context.Background(), "hello.txt", 0, -1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	var buf bytes.Buffer
	io.Copy(&buf, body)
	t.Logf("read over tls: %q (size %d)", buf.String(), ob.Size)
}

// Conditional PUTs under a race: of writers that all asked for the same
// condition, exactly one wins.
func TestS3ConditionalPutRace(t *testing.T) {
	_, s := openServer(t, "race")
	const writers = 8
	race := func(c sandbox.ObjectCond) (won int) {
		errs := make(chan error, writers)
		for i := 0; i < writers; i++ {
			go func() {
				_, err := put(t, s, "k", fmt.Sprintf("%+v: writer %d", c, i), c) // content-derived ETags: no two alike
				errs <- err
			}()
		}
		for i := 0; i < writers; i++ {
			switch err := <-errs; {
			case err == nil:
				won++
			case !errors.Is(err, sandbox.ErrPrecondition):
				t.Errorf("a losing writer: %v", err)
			}
		}
		return won
	}
	if won := race(sandbox.ObjectCond{IfAbsent: true}); won != 1 {
		t.Fatalf("%d writers created the key", won)
	}
	h, err := s.Head(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if won := race(sandbox.ObjectCond{IfVersion: h.Version}); won != 1 {
		t.Fatalf("%d writers replaced the version", won)
	}
}
